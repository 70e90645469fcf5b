"""The planned subgroups' ID files: registered once, not empty, each ID once, expected, in one subgroup at most,
and, where their edges cover every length, every expected ID in one."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.load import CampaignInputs
from generator.audit.load.readers.idsets import as_array, repeated_rows
from generator.audit.load.readers.labelfile import LabelFile
from generator.audit.validate.corpus.subgroupedges import EdgeRange, cover_every_length, read_edges

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
    out.extend(_cover_findings(protocol, expected, earlier))
    return out


def _cover_findings(protocol: Protocol, expected: LabelFile | None,
                    checked: list[tuple[str, pa.Array]]) -> list[Finding]:
    """Subgroups whose edges cover every length hold every expected ID; edges in no form read are said to be
    (info): whether a text was left out of them is then not checked. Only once every subgroup's IDs were read."""
    groups = protocol.quality.subgroups
    if not groups:
        return []
    read = [read_edges(g.edges) for g in groups]
    ranges = [r for r in read if r is not None]
    if len(ranges) < len(groups) or len({r.unit for r in ranges}) != 1:
        unread = [g.id for g, r in zip(groups, read, strict=True) if r is None] or [g.id for g in groups]
        return [make_finding(
            "subgroup-edges-unread", Severity.INFO, PROTOCOL_FILE, "the edges of the subgroup(s) "
            f"{', '.join(unread)} are not read as length ranges on one unit: whether the subgroups leave a text "
            "of the corpus out is not checked", field="/quality/subgroups",
            rule="the subgroups' edges are read as length ranges to check that they leave no text out",
            fix="write each subgroup's edges as `A to B tokens` or `N tokens or more` (docs/campaign-folder.md), "
                "the tokenizer after them")]
    if not cover_every_length(ranges) or len(checked) < len(groups) or expected is None or not expected.readable:
        return []  # a part of the lengths no subgroup claims, or an ID file that is a finding of its own already
    every = pc.unique(as_array(expected.ids))
    listed = pa.concat_arrays([ids.cast(every.type) for _, ids in checked])
    left_out = pc.filter(every, pc.invert(pc.is_in(every, value_set=listed)))
    if not len(left_out):
        return []
    return [_left_out(protocol, ranges, every, left_out)]


def _left_out(protocol: Protocol, ranges: list[EdgeRange], every: pa.Array, left_out: pa.Array) -> Finding:
    groups = protocol.quality.subgroups
    edges = ", ".join(f"{g.id} {r.text()}" for g, r in zip(groups, ranges, strict=True))
    files = ", ".join(g.ids for g in groups)
    return make_finding(
        "subgroup-ids-left-out", Severity.ERROR, PROTOCOL_FILE, f"the planned subgroups' edges cover every length "
        f"({edges} {ranges[0].unit}s), so every expected ID is in one of them; {len(left_out)} expected ID(s) are "
        f"in none, first {_first(left_out)}: a text taken out of its subgroup no longer counts against a "
        "configuration that gets it wrong", field="/quality/subgroups", claimed=len(every) - len(left_out),
        recomputed=len(every), value=[g.ids for g in groups],
        rule="planned subgroups whose edges cover every length hold every expected ID: removing hard examples "
             "would improve a score and shrink the corpus processed",
        fix=f"put each of them back in the ID file of the subgroup its length selects ({files}), as registered "
            "before the runs; a text is never removed because a configuration gets it wrong")


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


def subgroups(inputs: CampaignInputs) -> list[Finding]:
    """The rule of `validate`: each planned subgroup's ID file against the expected IDs (`subgroup_findings`)."""
    if inputs.protocol is None:
        return []
    return subgroup_findings(inputs.protocol, inputs.expected, inputs.subgroup_ids)
