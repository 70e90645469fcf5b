"""The planned subgroups' ID files: registered once, not empty, each ID once, expected, in one subgroup at most."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from generator.audit.findings import Finding, Severity, make_finding
from generator.audit.idsets import as_array, repeated_rows
from generator.audit.inputs.protocol import Protocol
from generator.audit.readers.labelfile import LabelFile

PROTOCOL_FILE = "protocol.json"
SHOWN = 5  # the IDs a finding names; the count says how many there are


def subgroup_findings(protocol: Protocol, expected: LabelFile | None,
                      subgroup_ids: dict[str, LabelFile]) -> list[Finding]:
    """Each registered subgroup's IDs: registered once, not empty, each ID once, expected IDs only, and in no
    other subgroup."""
    out: list[Finding] = []
    seen: set[str] = set()
    earlier: list[tuple[str, pa.Array]] = []  # the subgroups checked so far, with their distinct IDs
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
        if read is None or expected is None or not read.readable or not expected.readable \
                or any(p.is_error for p in read.problems):
            continue  # a file that cannot be read, or is refused, is a finding of its own already
        out.extend(_id_findings(protocol, group.id, group.ids, where, as_array(read.ids), expected, earlier))
    return out


def _first(values: pa.Array) -> str:
    return ", ".join(repr(v) for v in values.slice(0, SHOWN).to_pylist())


def _id_findings(protocol: Protocol, name: str, rel: str, where: str, listed: pa.Array, expected: LabelFile,
                 earlier: list[tuple[str, pa.Array]]) -> list[Finding]:
    """One subgroup's ID file against the expected IDs and the subgroups before it."""
    ids = pc.unique(listed)
    if not len(ids):
        return [make_finding(
            "subgroup-empty", Severity.ERROR, PROTOCOL_FILE, f"the {name} subgroup ({rel}) lists no ID: its metric "
            "cannot be computed", field=f"{where}/ids", value=rel,
            rule="a planned subgroup names the expected IDs it is judged on",
            fix=f"list the subgroup's IDs in {rel} (header `id`), as its edges select them")]
    out = []
    repeated = repeated_rows(listed)
    if repeated:
        out.append(make_finding(
            "subgroup-id-repeated", Severity.ERROR, PROTOCOL_FILE, f"the {name} subgroup ({rel}) lists "
            f"{len(repeated)} ID(s) more than once, first {_first(listed.take(pa.array(repeated[:SHOWN])))}",
            field=f"{where}/ids", claimed=len(listed), recomputed=len(ids),
            rule="a planned subgroup lists each of its texts once, as its edges select them",
            fix=f"list each ID once in {rel}"))
    unknown = pc.filter(ids, pc.invert(pc.is_in(ids, value_set=as_array(expected.ids))))
    if len(unknown):
        out.append(make_finding(
            "subgroup-id-not-expected", Severity.ERROR, PROTOCOL_FILE, f"the {name} subgroup ({rel}) lists "
            f"{len(unknown)} ID(s) that are not expected IDs of the corpus, first {_first(unknown)}",
            field=f"{where}/ids", claimed=len(ids), recomputed=len(ids) - len(unknown),
            rule="a subgroup is part of the comparison corpus: every ID it lists is an expected ID",
            fix=f"keep in {rel} only expected IDs (from {protocol.files.expected_ids}), selected by the "
                "subgroup's edges, and register the protocol again"))
    for other, other_ids in earlier:
        shared = pc.filter(ids, pc.is_in(ids, value_set=other_ids))
        if len(shared):
            out.append(make_finding(
                "subgroups-overlap", Severity.ERROR, PROTOCOL_FILE, f"the {name} subgroup ({rel}) shares "
                f"{len(shared)} ID(s) with the {other} subgroup, first {_first(shared)}: a text counted in both "
                "would dilute the one it does not belong to", field=f"{where}/ids", claimed=len(shared),
                recomputed=0, rule="planned subgroups are set apart by their edges: each text in one subgroup at "
                "most", fix="select each subgroup's IDs by its edges alone, so that no text is in two"))
    earlier.append((name, ids))
    return out
