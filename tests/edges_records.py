"""Small typed records for the edge tests of issue 51: a run, a configuration, acceptances and grid rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generator.audit.load.inputs.rows import GridRow
from generator.audit.recompute.decision.model import Configuration, CostPerResult, Run
from generator.audit.recompute.decision.runcells import (
    ClaimedCells,
    EnvironmentCells,
    MemoryCells,
    PhaseTiming,
    RecomputedRun,
    Timing,
)
from generator.audit.recompute.quality.acceptance import Acceptance

EXAMPLE: dict[str, Any] = json.loads((Path(__file__).resolve().parents[1] / "inputs" / "example" / "protocol.json")
                                     .read_text(encoding="utf-8"))
NO_TIMES = PhaseTiming((), 0, 0, None, None, None, None, None)


def recomputed(value: float | None = 0.9, file: str | None = "p.csv", present: bool = True) -> RecomputedRun:
    """A run's recomputation: every ID, the format valid, this metric value, from this file."""
    return RecomputedRun(10, 10, 10, 0, 0, 0, [], [], [], True, True, "macro_f1", value, None, True, True, file,
                         present)


def run(index: int, phase: str = "warm", outcome: str = "ok", *, value: float | None = 0.9,
        file: str | None = None, present: bool = True, seed: int | None = None, corpus: str | None = None,
        notes: str = "", scored: bool = True) -> Run:
    """A run on line index + 1, its prediction file warm-<index>.csv unless `file` says otherwise."""
    done = recomputed(value, file or f"{phase}-{index}.csv", present) if scored else None
    return Run(index + 1, phase, index, outcome, None, 1.0, ClaimedCells(*[None] * 9), done,
               MemoryCells(None, None, None, None), notes, seed=seed, corpus=corpus)


def config(cid: str, runs: tuple[Run, ...] = (), **fields: Any) -> Configuration:
    """A configuration `experiment/variant` of these runs, admissible, its other figures empty."""
    exp, variant = cid.split("/")
    base: dict[str, Any] = dict(
        id=cid, experiment_id=exp, variant_id=variant, variable="seed", value=1, gpu="rtx-4090",
        environment=EnvironmentCells(*[None] * 10), measurement=None, runs=runs, timing=Timing(NO_TIMES, NO_TIMES),
        attempts=len(runs), completed=len(runs), failures=0, out_of_memory=0, accepted_runs=len(runs),
        accepted_unique_corpora=1, accepted=True, memory_feasible=True, fits_window=True, fits_deadline=True,
        admissible=True, reasons=(), committed_budget_usd_minor=None, price_status=None, duration_days=7,
        cost_per_accepted_result=CostPerResult(None, "no tariff"))
    return Configuration(**{**base, **fields})


def accepted(yes: bool = True) -> Acceptance:
    """A run's acceptance: its corpus accepted or not."""
    return Acceptance(expected_ids=10, observed_ids=10, rows=10, ids_match=True, format_valid=True,
                      quality_ok=yes, corpus_accepted=yes, file_present=True)


def grid_row(variant: str, phase: str, run_index: int, **cells: Any) -> GridRow:
    """A row of the example's first experiment."""
    return GridRow.of({"experiment_id": "rtx4090-batch", "variant_id": variant, "phase": phase,
                       "run_index": run_index, **cells})
