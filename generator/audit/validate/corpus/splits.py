"""Training and tuning data kept apart from the comparison corpus: no split shares an ID with the expected IDs of
any corpus (000/001/002 §1; 003 'Eingaben, Referenz und Manifest vorbereiten'). The reference value's split is
`reforigin`'s."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.load import CampaignInputs
from generator.audit.load.readers.idsets import as_array
from generator.audit.load.readers.labelfile import LabelFile

PROTOCOL_FILE = "protocol.json"
SHOWN = 5  # the shared IDs a finding names; the count says how many there are


def _shared(split: LabelFile, expected: LabelFile) -> tuple[int, list[str]]:
    """How many distinct IDs of the split are expected IDs too, and the first few in the split's order."""
    ids: pa.Array = as_array(split.ids)
    mask = pc.fill_null(pc.is_in(ids, value_set=as_array(expected.ids)), False)
    shared = pc.filter(ids, mask)
    first = list(dict.fromkeys(str(v) for v in shared.slice(0, 10 * SHOWN).to_pylist()))[:SHOWN]
    return len(pc.unique(shared)), first


def split_findings(protocol: Protocol, expected: Sequence[LabelFile | None],
                   splits: dict[str, LabelFile]) -> list[Finding]:
    """Each registered split against the expected IDs of every corpus (the first, then the further ones)."""
    out: list[Finding] = []
    for i, split in enumerate(protocol.splits or ()):
        read = splits.get(split.name)
        if read is None or not read.readable:
            continue  # a split that cannot be read is a finding of its own already
        for corpus in expected:
            if corpus is None or not corpus.readable:
                continue  # nor can an expected-IDs file
            count, first = _shared(read, corpus)
            if count:
                out.append(make_finding(
                    "split-overlaps-evaluation", Severity.ERROR, PROTOCOL_FILE, f"the {split.name} split "
                    f"({split.ids}) shares {count} ID(s) with the expected IDs of the corpus ({corpus.file}), first "
                    + ", ".join(repr(v) for v in first), field=f"/splits/{i}/ids", claimed=0, recomputed=count,
                    rule="training and tuning data are kept apart from the comparison corpus",
                    fix="evaluate on texts the model was not trained or tuned on: remove the shared IDs from the "
                        "split, or choose another comparison corpus, and register the protocol again"))
    return out


def splits(inputs: CampaignInputs) -> list[Finding]:
    """The rule of `validate`: each registered split against every corpus's expected IDs (`split_findings`)."""
    if inputs.protocol is None:
        return []
    return split_findings(inputs.protocol, [inputs.expected, *(t.expected for t in inputs.further)], inputs.split_ids)
