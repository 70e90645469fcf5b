"""The reference value's origin registered (`quality.reference.source`): a registered split, a publication with its
citation, or an earlier gpu-audit bundle; unregistered, it may include evaluation data (000/001/002 §1; 003
'Eingaben, Referenz und Manifest vorbereiten').

The tolerance is measured against the reference value, so a reference measured on the evaluation corpus itself
would let a configuration pass by matching what it was tuned on. A split source is checked here to be registered;
`splits` checks every registered split's IDs against every corpus's expected IDs. A publication or a bundle names
what a reader can look up. A protocol without an origin stays valid (campaigns already run keep their
registration): it is a warning, and the note says so on page 1.
"""

from __future__ import annotations

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.inputs.work import QualityReference
from generator.audit.validate.tariffrules import as_written, blank

PROTOCOL_FILE = "protocol.json"
AT = "/quality/reference"
EXAMPLES = ('{"kind": "split", "split": "tuning"} (the split registered in `splits` with its revision and IDs), '
            '{"kind": "publication", "citation": "authors, title, year, DOI or URL"}, or {"kind": "bundle", '
            '"id": "GA-...", "fingerprint": "<SHA-256 of that bundle\'s data/decision.json>"}')
ORIGIN_RULE = ("the reference value names where it comes from: a registered split kept apart from the evaluation "
               "corpus, a publication, or an earlier gpu-audit bundle")


def _unregistered(reference: QualityReference) -> Finding:
    return make_finding(
        "reference-origin-unregistered", Severity.WARNING, PROTOCOL_FILE,
        f"the reference value {reference.value} ({reference.name!r}) names no origin: no registered split, "
        "publication or earlier gpu-audit bundle, so it may include evaluation data", field=AT, value=None,
        rule=ORIGIN_RULE,
        fix=f"register quality.reference.source before the runs: {EXAMPLES}; a protocol whose runs are done keeps "
            "its registration, and this warning with it")


def _split_unknown(cited: str, field: str, protocol: Protocol) -> Finding:
    names = ", ".join(s.name for s in protocol.splits or ()) or "none"
    return make_finding(
        "reference-split-unknown", Severity.ERROR, PROTOCOL_FILE, f"the reference value names the split "
        f"{cited!r}, which the protocol does not register (registered: {names})", field=field, value=cited,
        rule="the reference value names the registered split it was measured on",
        fix="register the split in `splits` with its revision and IDs, or name one that is registered")


def _conflict(reference: QualityReference) -> Finding | None:
    """`split` and `source` both given: they must say the same (`split` is the older spelling of a split source)."""
    source, split = reference.source, reference.split
    if source is None or split is None or (source.kind == "split" and source.split == split):
        return None
    said = f"the {source.split} split" if source.kind == "split" else f"a {source.kind}"
    return make_finding(
        "reference-origin-conflict", Severity.ERROR, PROTOCOL_FILE, f"the reference value is said to be measured "
        f"on the {split} split (`split`) and to come from {said} (`source`)", field=f"{AT}/split", value=split,
        rule="the reference value has one origin: `split` is the same as a source of kind split",
        fix="keep `source` alone, or give `split` the split the source names")


def origin_findings(protocol: Protocol) -> list[Finding]:
    """The reference's origin: registered, and where it names a split, a registered one; a citation that names
    something; `split` and `source` agreeing."""
    reference = protocol.quality.reference
    source = reference.origin()
    if source is None:
        return [_unregistered(reference)]
    out: list[Finding] = []
    conflict = _conflict(reference)
    if conflict is not None:
        out.append(conflict)
    registered = {s.name for s in protocol.splits or ()}
    if reference.split is not None and reference.split not in registered:
        out.append(_split_unknown(reference.split, f"{AT}/split", protocol))
    if reference.source is not None and reference.source.kind == "split" and reference.source.split is not None \
            and reference.source.split not in registered:
        out.append(_split_unknown(reference.source.split, f"{AT}/source/split", protocol))
    if source.kind == "publication" and blank(source.citation):
        written = source.citation or ""
        out.append(make_finding(
            "reference-citation-blank", Severity.ERROR, PROTOCOL_FILE, f"the reference value's publication is "
            f"cited as {as_written(written)!r}, which names nothing", field=f"{AT}/source/citation",
            value=as_written(written), rule="a publication the reference comes from is cited: authors, title, "
                                            "year, and a DOI or URL",
            fix="write the citation, or register the split or the bundle the reference value was measured on"))
    return out
