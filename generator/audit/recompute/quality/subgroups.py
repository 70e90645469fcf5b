"""Planned subgroups judged on every run by their own rule, their unfinished IDs, a configuration's table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from generator.audit.load.inputs.protocol import Quality
from generator.audit.load.readers.idsets import Codes, as_array, ints
from generator.audit.load.readers.labelfile import LabelFile
from generator.audit.recompute.decision.runcells import SubgroupRun, SubgroupSummary
from generator.core.metrics import compute_metric, defined, metric_from_codes, quality_rule_holds

__all__ = ["GroupTruth", "judge_codes", "judge_labels", "prepare", "summarise"]


@dataclass(frozen=True)
class GroupTruth:
    """A subgroup ready to judge runs: its rule, its IDs, and where they stand in the expected order."""

    id: str
    edges: str
    threshold: float
    tolerance: float
    reference_value: float
    ids: pa.Array  # the subgroup's distinct expected IDs
    positions: Codes  # their indices in the expected IDs

    @property
    def size(self) -> int:
        return len(self.ids)


def prepare(quality: Quality, expected: pa.Array, subgroup_ids: Mapping[str, LabelFile]) -> tuple[GroupTruth, ...]:
    """Each registered subgroup whose IDs were read, limited to expected IDs (one that is not is a finding of
    validation, which withholds the answer) and taken once each."""
    out = []
    for group in quality.subgroups:
        read = subgroup_ids.get(group.id)
        if read is None or not read.readable:
            continue
        ids = pc.unique(as_array(read.ids))
        if not len(ids):
            continue  # an empty subgroup is a finding of validation; it judges no run
        where = pc.index_in(ids, value_set=expected)
        kept = pc.is_valid(where)
        threshold, tolerance, reference = quality.subgroup_rule(group)
        out.append(GroupTruth(group.id, group.edges, threshold, tolerance, reference, pc.filter(ids, kept),
                              ints(pc.filter(where, kept)).astype(np.int64)))
    return tuple(out)


def _verdict(group: GroupTruth, value: float | None, unfinished: int, direction: str) -> SubgroupRun:
    if value is None:
        return SubgroupRun(group.id, group.size, unfinished, None, None, False)
    holds, degradation = quality_rule_holds(value, group.threshold, group.tolerance, direction,
                                            group.reference_value)
    return SubgroupRun(group.id, group.size, unfinished, value, degradation, holds)


def _unfinished(group: GroupTruth, observed: pa.Array | None, missing: int) -> int:
    if observed is None:
        return group.size
    if not missing:
        return 0
    return group.size - int(pc.sum(pc.is_in(group.ids, value_set=observed)).as_py() or 0)


def judge_codes(groups: Sequence[GroupTruth], quality: Quality, truth: Codes, pred: Codes | None, n_classes: int,
                observed: pa.Array | None, missing: int) -> list[SubgroupRun]:
    """Each subgroup of a run, column-wise: `pred` the run's class codes in the expected order (None when the run
    is not scored), `observed` its IDs (None: no file), `missing` how many expected IDs it lacks."""
    out = []
    for g in groups:
        value = (defined(metric_from_codes(quality.metric, truth[g.positions], pred[g.positions], n_classes))
                 if pred is not None and g.size else None)
        out.append(_verdict(g, value, _unfinished(g, observed, missing), quality.direction))
    return out


def judge_labels(groups: Sequence[GroupTruth], quality: Quality, reference: Mapping[str, str],
                 predicted: Mapping[str, str] | None, scored: bool,
                 classes: Sequence[str] | None = None) -> list[SubgroupRun]:
    """The same with Python dictionaries (the straightforward path): `predicted` maps the file's IDs to labels."""
    out = []
    for g in groups:
        ids = g.ids.to_pylist()
        unfinished = len(ids) if predicted is None else sum(1 for i in ids if i not in predicted)
        value = (defined(compute_metric(quality.metric, [reference[i] for i in ids], [predicted[i] for i in ids],
                                        classes))
                 if scored and predicted is not None and ids else None)
        out.append(_verdict(g, value, unfinished, quality.direction))
    return out


def _worse(direction: str, a: float, b: float) -> float:
    return min(a, b) if direction == "higher_is_better" else max(a, b)


def summarise(quality: Quality,
              runs: Sequence[tuple[bool, bool, Sequence[SubgroupRun]]]) -> tuple[SubgroupSummary, ...]:
    """Per registered subgroup across a configuration's runs, given per run (completed, failed, its subgroups);
    a subgroup no run was judged on (its IDs could not be read: a finding already) is left out."""
    out = []
    for group in quality.subgroups:
        threshold, tolerance, reference = quality.subgroup_rule(group)
        mine = [(done, broke, r) for done, broke, results in runs for r in results if r.id == group.id]
        if not mine:
            continue
        completed = accepted = failed = unfinished = 0
        worst: float | None = None
        worst_degradation: float | None = None
        for done, broke, result in mine:
            if done and result.quality_value is not None:
                completed += 1
                accepted += result.accepted
                worst = (result.quality_value if worst is None
                         else _worse(quality.direction, worst, result.quality_value))
                if result.degradation is not None:
                    worst_degradation = (result.degradation if worst_degradation is None
                                         else max(worst_degradation, result.degradation))
            if broke and result.unfinished:
                failed += 1
                unfinished += result.unfinished
        out.append(SubgroupSummary(group.id, group.edges, mine[0][2].expected_ids, threshold, tolerance, reference,
                                   completed, accepted, worst, worst_degradation, failed, unfinished))
    return tuple(out)
