"""The corpus's ID files as the protocol registers them: every expected ID once and as many as registered, the
reference labelling exactly the expected IDs, each corpus of the work with a revision of its own, and the content
fingerprint of a corpus whose files are sound."""

from __future__ import annotations

from generator.audit.load.campaign import PROTOCOL_FILE
from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.load import CampaignInputs
from generator.audit.load.readers import idsets
from generator.audit.load.readers.predictions import FIRST_FEW, LabelFile
from generator.audit.validate.corpus import corpusprint

E = Severity.ERROR


def _check_expected(ids: LabelFile, size: int | None, out: list[Finding]) -> bool:
    """Every expected ID exactly once, as many as registered; returns whether they are all distinct."""
    if not ids.readable:  # its own finding says why (encoding, delimiter): its IDs were not read
        return False
    arr = idsets.as_array(ids.ids)
    repeated = idsets.repeated_rows(arr)
    if repeated:
        first = ", ".join(f"line {ids.line_of(i)}: {arr[i].as_py()[:40]!r}" for i in repeated[:FIRST_FEW])
        out.append(make_finding("duplicate-expected-id", E, ids.file, f"{len(repeated)} repeated IDs (first: {first})",
                                line=ids.line_of(repeated[0]), value=len(repeated),
                                rule="each expected ID exactly once", fix="remove the repeated lines"))
    distinct = len(arr) - len(repeated)
    if size is not None and distinct != size:
        out.append(make_finding("corpus-size-mismatch", E, ids.file,
                                f"{distinct} distinct expected IDs where the protocol registers {size}",
                                value=distinct, rule=f"corpus.size = {size}", fix="list every expected ID once"))
    return not repeated


def _check_reference(ref: LabelFile, expected: LabelFile, expected_distinct: bool, out: list[Finding]) -> bool:
    """The reference labels every expected ID exactly once, and nothing else; returns whether it does."""
    if not (ref.readable and expected.readable):  # unread IDs are not missing ones
        return False
    cmp = idsets.compare(idsets.as_array(expected.ids), idsets.as_array(ref.ids), expected_distinct)
    for code, count, first, what, fix in (
        ("reference-duplicate-id", cmp.duplicates, cmp.first_duplicates, "IDs labelled more than once",
         "keep one checked label per ID"),
        ("reference-missing-id", cmp.missing, cmp.first_missing, "expected IDs have no reference label",
         "label every expected ID"),
        ("reference-extra-id", cmp.extra, cmp.first_extra, "labelled IDs are not expected",
         "remove IDs that are not in the expected IDs"),
    ):
        if count:
            out.append(make_finding(code, E, ref.file, f"{count} {what} (first: {', '.join(map(repr, first))})",
                                    value=count, fix=fix))
    return cmp.match and ref.format_valid


def _corpora_findings(protocol: Protocol) -> list[Finding]:
    """Each corpus of the useful work has a revision of its own: the grid's corpus_revision tells them apart."""
    out, seen = [], {protocol.corpus.revision}
    for i, corpus in enumerate(protocol.corpora or ()):
        if corpus.revision in seen:
            out.append(make_finding(
                "corpus-repeated", E, PROTOCOL_FILE, f"the corpus {corpus.name!r} has the revision "
                f"{corpus.revision!r} of another corpus of the protocol", field=f"/corpora/{i}/revision",
                value=corpus.revision, rule="each corpus of the useful work once, with its own revision",
                fix="give each corpus its own immutable revision, or list it once"))
        seen.add(corpus.revision)
    return out


def expected_ids(inputs: CampaignInputs) -> list[Finding]:
    """The first corpus's expected IDs (`_check_expected`), then each further corpus's; whether each corpus's IDs
    are all distinct is kept for the reference's rule."""
    out: list[Finding] = []
    if inputs.expected is not None:
        size = inputs.protocol.corpus.size if inputs.protocol else None
        inputs.expected_distinct = _check_expected(inputs.expected, size, out)
    for truth in inputs.further:
        if truth.expected is not None:
            truth.distinct = _check_expected(truth.expected, truth.corpus.size, out)
    return out


def corpora_repeated(inputs: CampaignInputs) -> list[Finding]:
    """Each corpus of the useful work has a revision of its own (`_corpora_findings`)."""
    return _corpora_findings(inputs.protocol) if inputs.protocol is not None else []


def references(inputs: CampaignInputs) -> list[Finding]:
    """The first corpus's reference against its expected IDs, then each further corpus's; a corpus whose reference
    labels exactly its expected IDs gets its content fingerprint."""
    out: list[Finding] = []
    if inputs.reference is not None and inputs.expected is not None:
        inputs.reference_matches = _check_reference(inputs.reference, inputs.expected, inputs.expected_distinct, out)
    for truth in inputs.further:
        if truth.reference is not None and truth.expected is not None:
            truth.matches = _check_reference(truth.reference, truth.expected, truth.distinct, out)
            truth.fingerprint = corpusprint.fingerprint(truth.reference) if truth.matches else None
    if inputs.reference_matches and inputs.reference is not None:
        inputs.fingerprint = corpusprint.fingerprint(inputs.reference)
    return out


def fingerprints(inputs: CampaignInputs) -> list[Finding]:
    """The corpora's fingerprints against the revisions that carry one, and two corpora of one content
    (corpusprint)."""
    if inputs.protocol is None:
        return []
    return corpusprint.fingerprint_findings(inputs.protocol, [inputs.fingerprint,
                                                              *(t.fingerprint for t in inputs.further)])
