"""Edges of the decision record (issue 51): every part of decision.json is a frozen value (what was decided is what is
rendered and verified), and its JSON mapping reads back exactly what it wrote."""

from __future__ import annotations

import dataclasses
import inspect
import json
from pathlib import Path

import pytest

from generator.audit.inputs.protocol import ExperimentSpec, Resume
from generator.audit.inputs.rows import GridRow
from generator.audit.recompute import answer, model, resumes, runcells, tally
from generator.audit.recompute.acceptance import Acceptance

ROOT = Path(__file__).resolve().parents[1]

RECORDS = sorted({cls for module in (answer, runcells, model) for _, cls in inspect.getmembers(module, inspect.isclass)
                  if dataclasses.is_dataclass(cls) and cls.__module__ == module.__name__},
                 key=lambda c: f"{c.__module__}.{c.__qualname__}")


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: c.__qualname__)
def test_every_part_of_the_decision_is_frozen(cls: type) -> None:
    record: object = object.__new__(cls)
    first = dataclasses.fields(cls)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(record, first, None)


def _row(phase: str, run: int, notes: str = "", elapsed: float | None = 10.0, **cells: object) -> GridRow:
    return GridRow.of({"experiment_id": "e", "variant_id": "v", "phase": phase, "run_index": run, "notes": notes,
                       "elapsed_seconds": elapsed, "corpus_revision": "c@1", **cells})  # type: ignore[dict-item]


def _exp() -> ExperimentSpec:
    exp = json.loads((ROOT / "inputs" / "example" / "protocol.json").read_text(encoding="utf-8"))["experiments"][0]
    return ExperimentSpec.of(exp)


def test_a_configuration_tallied_in_phase_and_run_order() -> None:
    rows = [_row("warm", 2, "outcome=oom; completed=3", None), _row("warm", 1), _row("cold", 2, elapsed=7.0),
            _row("cold", 1, "outcome=failed; completed=0", None), _row("warm", 3, "outcome=excluded; cause=p"),
            _row("warm", 4, "outcome=aborted", None)]
    items = [(i, r, 10 + i) for i, r in enumerate(rows)]
    accepted = {1: Acceptance(10, 10, 10, corpus_accepted=True, corpus="content-a"),
                2: Acceptance(10, 10, 10, corpus_accepted=True),
                4: Acceptance(10, 10, 10, corpus_accepted=True)}
    t = tally.tally(items, _exp(), None, accepted)
    assert [(r.phase, r.run_index, r.line) for r in t.runs] == [("cold", 1, 13), ("cold", 2, 12), ("warm", 1, 11),
                                                                  ("warm", 2, 10), ("warm", 3, 14), ("warm", 4, 15)]
    assert (t.failures, t.oom, t.failed, t.completed) == ({"cold": 1, "warm": 2}, 1, ["failed", "oom", "aborted"], 2)
    assert t.durations == {"cold": [7.0], "warm": [10.0]}
    assert (t.accepted_runs, t.accepted_corpora) == (2, {"content-a", "c@1"})  # the excluded run is not accepted
    assert [(through, failed) for through, failed, _ in t.subgroups] == [(True, False), (True, False), (False, False)]
    assert [r.notes for r in t.runs][3] == "outcome=oom; completed=3" and t.runs[0].recomputed is None


def test_a_resume_variant_tallies_its_resumption_as_the_completed_run() -> None:
    plan = resumes.ResumePlan("v", Resume("b1", "x"), {("v", "warm", 1)}, {1: 30.0})
    rows = [(0, _row("warm", 1, "outcome=failed; completed=2", None), 2),
            (1, _row("warm", 2, "outcome=resumed; resumed=v/warm/1"), 3),
            (2, _row("warm", 3, "outcome=oom", None), 4)]
    t = tally.tally(rows, _exp(), plan, {1: Acceptance(1, 1, 1, corpus_accepted=True)})
    assert (t.failures["warm"], t.oom, t.failed, t.completed, t.durations["warm"]) == (2, 1, ["oom"], 1, [40.0])
    assert (t.accepted_runs, t.runs[1].resumed, t.runs[1].run_index) == (1, "v/warm/1", 2)
