"""The planned subgroups' ID files against the corpus: each names expected IDs only, is not empty, and each
subgroup is registered once (003 'Beispiel')."""

from __future__ import annotations

import pyarrow.compute as pc

from generator.audit.findings import Finding, Severity, make_finding
from generator.audit.idsets import as_array
from generator.audit.inputs.protocol import Protocol
from generator.audit.readers.labelfile import LabelFile

PROTOCOL_FILE = "protocol.json"
SHOWN = 5  # the IDs a finding names; the count says how many there are


def subgroup_findings(protocol: Protocol, expected: LabelFile | None,
                      subgroup_ids: dict[str, LabelFile]) -> list[Finding]:
    """Each registered subgroup's IDs against the expected IDs; a subgroup ID registered twice."""
    out: list[Finding] = []
    seen: set[str] = set()
    for i, group in enumerate(protocol.quality.subgroups):
        where = f"/quality/subgroups/{i}"
        if group.id in seen:
            out.append(make_finding(
                "subgroup-repeated", Severity.ERROR, PROTOCOL_FILE, f"the subgroup {group.id!r} is registered twice",
                field=f"{where}/id", value=group.id, rule="each planned subgroup is registered once, with one rule",
                fix="give each subgroup its own ID, or remove the second one, and register the protocol again"))
            continue
        seen.add(group.id)
        read = subgroup_ids.get(group.id)
        if read is None or expected is None or not read.readable or not expected.readable:
            continue  # a file that cannot be read is a finding of its own already
        ids = pc.unique(as_array(read.ids))
        if not len(ids):
            out.append(make_finding(
                "subgroup-empty", Severity.ERROR, PROTOCOL_FILE, f"the {group.id} subgroup ({group.ids}) lists no ID: "
                "its metric cannot be computed", field=f"{where}/ids", value=group.ids,
                rule="a planned subgroup names the expected IDs it is judged on",
                fix=f"list the subgroup's IDs in {group.ids} (header `id`), as its edges select them"))
            continue
        unknown = pc.filter(ids, pc.invert(pc.is_in(ids, value_set=as_array(expected.ids))))
        if len(unknown):
            first = ", ".join(repr(v) for v in unknown.slice(0, SHOWN).to_pylist())
            out.append(make_finding(
                "subgroup-id-not-expected", Severity.ERROR, PROTOCOL_FILE, f"the {group.id} subgroup ({group.ids}) "
                f"lists {len(unknown)} ID(s) that are not expected IDs of the corpus, first {first}",
                field=f"{where}/ids", claimed=len(ids), recomputed=len(ids) - len(unknown),
                rule="a subgroup is part of the comparison corpus: every ID it lists is an expected ID",
                fix=f"keep in {group.ids} only expected IDs (from {protocol.files.expected_ids}), selected by the "
                    "subgroup's edges, and register the protocol again"))
    return out
