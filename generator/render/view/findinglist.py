"""The findings as the note lists them: each severity's, a finding said alike more than once as one entry naming
the experiments and configurations it concerns, each cause with the first findings that follow from it."""

from __future__ import annotations

import json
from collections.abc import Sequence

from generator.audit.load.findings import FIRST_FOLLOW_ONS, Finding, FindingRef
from generator.audit.recompute.decision.model import Configuration
from generator.render.view.rows import Alike, Concern, FindingGroup

# What the note lists at most of one severity (docs/note.md): past it, how many are in findings.json.
FINDINGS_PER_SEVERITY = 100


def _words(f: Finding) -> str:
    """What the note shows of a finding: two findings with the same words read as one."""
    return json.dumps([f.code, f.severity.value, f.file, f.line, f.field, f.message, f.fix, f.claimed, f.recomputed],
                      sort_keys=True, default=str)


def alike(findings: Sequence[Finding]) -> list[tuple[Finding, list[Finding]]]:
    """The findings in their order, each group of findings that say the same word for word as its first one with
    all of them; a cause (a finding others follow from) stays alone, with its follow-ons under it."""
    groups: dict[str, list[Finding]] = {}
    out: list[tuple[Finding, list[Finding]]] = []
    for f in findings:
        key = _words(f)
        if f.follow_ons is None and key in groups:
            groups[key].append(f)
            continue
        members = [f]
        if f.follow_ons is None:
            groups[key] = members
        out.append((f, members))
    return out


def concerns(members: Sequence[Finding], configs: Sequence[Configuration]) -> tuple[Concern, ...]:
    """The configurations these findings concern, by experiment in the decision's order: none named where they
    are all of the experiment's."""
    named = {c for f in members for c in f.configurations}
    by_experiment: dict[str, list[str]] = {}
    for c in configs:
        by_experiment.setdefault(c.experiment_id, []).append(c.id)
    out = []
    for experiment, ids in by_experiment.items():
        hit = tuple(i for i in ids if i in named)
        if hit:
            out.append(Concern(experiment, () if len(hit) == len(ids) else hit, len(hit)))
    return tuple(out)


def finding_groups(findings: Sequence[Finding], configs: Sequence[Configuration]) -> list[FindingGroup]:
    """Each severity's findings: those that follow from no other one listed (alike ones as one entry), each cause
    with the first of its follow-ons (generator.audit.validate.followons), the follow-ons counted."""
    under: dict[FindingRef, list[Finding]] = {}
    for f in findings:
        if f.caused_by is not None:
            under.setdefault(f.caused_by, []).append(f)
    grouped = []
    for severity in ("error", "warning", "info"):
        items = tuple(f for f in findings if f.severity == severity)
        top = alike([f for f in items if f.caused_by is None])
        listed = top[:FINDINGS_PER_SEVERITY]
        grouped.append(FindingGroup(
            severity, len(items), tuple(f for f, _ in listed), sum(len(m) for _, m in top[len(listed):]),
            len(items) - sum(len(m) for _, m in top),
            tuple(tuple(under.get(FindingRef.of(f), [])[:FIRST_FOLLOW_ONS]) for f, _ in listed),
            tuple(Alike(len(m), concerns(m, configs)) if len(m) > 1 else None for _, m in listed)))
    return grouped
