"""Training and tuning data kept apart from the comparison corpus: no split shares an ID with the expected IDs,
and the reference value names a split the protocol registers (000/001/002 §1; 003 'Eingaben, Referenz und
Manifest vorbereiten')."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from generator.audit.findings import Finding, Severity, make_finding
from generator.audit.idsets import as_array
from generator.audit.inputs.protocol import Protocol
from generator.audit.readers.labelfile import LabelFile

PROTOCOL_FILE = "protocol.json"
SHOWN = 5  # the shared IDs a finding names; the count says how many there are


def _shared(split: LabelFile, expected: LabelFile) -> tuple[int, list[str]]:
    """How many distinct IDs of the split are expected IDs too, and the first few in the split's order."""
    ids: pa.Array = as_array(split.ids)
    mask = pc.fill_null(pc.is_in(ids, value_set=as_array(expected.ids)), False)
    shared = pc.filter(ids, mask)
    first = list(dict.fromkeys(str(v) for v in shared.slice(0, 10 * SHOWN).to_pylist()))[:SHOWN]
    return len(pc.unique(shared)), first


def split_findings(protocol: Protocol, expected: LabelFile | None, splits: dict[str, LabelFile]) -> list[Finding]:
    """Each split against the expected IDs, and the reference's split against the registered ones."""
    out: list[Finding] = []
    registered = protocol.splits or ()
    for i, split in enumerate(registered):
        read = splits.get(split.name)
        if read is None or expected is None or not read.readable or not expected.readable:
            continue  # a split or an expected-IDs file that cannot be read is a finding of its own already
        count, first = _shared(read, expected)
        if count:
            out.append(make_finding(
                "split-overlaps-evaluation", Severity.ERROR, PROTOCOL_FILE, f"the {split.name} split "
                f"({split.ids}) shares {count} ID(s) with the expected IDs of the corpus, first "
                + ", ".join(repr(v) for v in first), field=f"/splits/{i}/ids", claimed=0, recomputed=count,
                rule="training and tuning data are kept apart from the comparison corpus",
                fix="evaluate on texts the model was not trained or tuned on: remove the shared IDs from the "
                    "split, or choose another comparison corpus, and register the protocol again"))
    cited = protocol.quality.reference.split
    if cited is not None and cited not in {s.name for s in registered}:
        names = ", ".join(s.name for s in registered) or "none"
        out.append(make_finding(
            "reference-split-unknown", Severity.ERROR, PROTOCOL_FILE, f"the reference value names the split "
            f"{cited!r}, which the protocol does not register (registered: {names})",
            field="/quality/reference/split", value=cited,
            rule="the reference value names the registered split it was measured on",
            fix="register the split in `splits` with its revision and IDs, or name one that is registered"))
    return out
