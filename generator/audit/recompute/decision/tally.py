"""One configuration's rows tallied: its runs, completed runs (resumptions included), failures and acceptance."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from generator.audit.load.inputs.protocol import ExperimentSpec
from generator.audit.load.readers.grid import row_outcome
from generator.audit.recompute.decision.model import ClaimedCells, MemoryCells, Run
from generator.audit.recompute.decision.runcells import SubgroupRun
from generator.audit.recompute.evidence import resumes
from generator.audit.recompute.money.package import Row
from generator.audit.recompute.quality.acceptance import Acceptance


@dataclass
class Tally:
    """One configuration's rows counted: its runs, durations and failures per phase, and what was accepted."""

    runs: list[Run] = field(default_factory=list)
    durations: dict[str, list[float]] = field(default_factory=lambda: {"cold": [], "warm": []})
    failures: dict[str, int] = field(default_factory=lambda: {"cold": 0, "warm": 0})
    accepted_corpora: set[str] = field(default_factory=set)
    accepted_runs: int = 0
    completed: int = 0
    oom: int = 0
    failed: list[str] = field(default_factory=list)  # the outcome of each failed attempt that excludes
    # Per attempt: completed, failed, and its subgroups' verdicts (for the configuration's subgroup table).
    subgroups: list[tuple[bool, bool, list[SubgroupRun]]] = field(default_factory=list)


def _run(row_item: Row, exp: ExperimentSpec, acc: Acceptance | None) -> Run:
    """One attempt as decision.json records it."""
    _, row, line = row_item
    outcome = row_outcome(row.notes)
    return Run(line=line, phase=str(row.phase), run_index=int(row.run_index or 0), outcome=outcome.status,
               completed_items=outcome.completed, elapsed_seconds=row.elapsed_seconds,
               claimed=ClaimedCells(row.expected_ids, row.observed_ids, row.ids_match, row.format_valid,
                                    row.quality_metric, row.quality_threshold, row.quality_tolerance,
                                    row.quality_value, row.corpus_accepted),
               recomputed=acc.record() if acc else None,
               memory=MemoryCells(row.baseline_allocated_bytes, row.baseline_reserved_bytes,
                                  row.peak_allocated_bytes, row.peak_reserved_bytes),
               notes=row.notes or "", seed=row.seed if exp.seeds else None, resumed=outcome.resumed,
               corpus=row.corpus_revision if exp.further_corpora else None)


def tally(rows: list[Row], exp: ExperimentSpec, plan: resumes.ResumePlan | None,
          acceptances: Mapping[int, Acceptance]) -> Tally:
    """Walk the configuration's rows in phase and run order: failures kept as failures, never timed as 0 (each
    run with its seed when the experiment lists common seeds, and its corpus when the work is several). In a
    resume variant, an interrupted attempt it resumed is a failure that does not exclude it, and a resumption
    that completed is a completed run (timed with the interrupted time added, judged on every subgroup)."""
    t = Tally()
    for item in sorted(rows, key=lambda r: r[1].key()[2:]):
        index, row, _ = item
        _, variant, phase, run_index = row.key()
        outcome = row_outcome(row.notes)
        acc = acceptances.get(index)
        through = resumes.through(plan, index, outcome)
        if outcome.failed:
            t.failures[phase] += 1
            if plan is None or (variant, phase, run_index) not in plan.interrupted:
                t.oom += outcome.status == "oom"
                t.failed.append(outcome.status)
        elif through:  # an excluded, unknown or stray resumed outcome is neither timed nor a failure
            t.completed += 1
            if row.elapsed_seconds is not None:
                t.durations[phase].append(resumes.duration(plan, index, row.elapsed_seconds))
        if acc is not None and acc.corpus_accepted and through:
            t.accepted_runs += 1
            t.accepted_corpora.add(acc.corpus or str(row.corpus_revision))  # one content, one corpus
        if acc is not None:
            t.subgroups.append((through, outcome.failed, acc.subgroups))
        t.runs.append(_run(item, exp, acc))
    return t
