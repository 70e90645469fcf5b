"""Issue 51's edges of resumes: a chain of two resumptions, each invalid target by its own message, a resumption
claimed twice, an interrupted attempt dated on the edge, and the resumed duration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.load.inputs.protocol import ExperimentSpec, Resume
from generator.audit.load.inputs.rows import GridRow
from generator.audit.load.readers.grid import row_outcome
from generator.audit.recompute.evidence import resumes
from generator.audit.recompute.evidence.resumes import ResumePlan

EXAMPLE = json.loads((Path(__file__).resolve().parents[1] / "inputs" / "example" / "protocol.json")
                     .read_text(encoding="utf-8"))
GRID = "grid.csv"
SETTING = "restart after an out-of-memory stop, resume after the last completed input"


def _exp(*variants: dict[str, Any]) -> ExperimentSpec:
    return ExperimentSpec.of({**EXAMPLE["experiments"][0], "variants": [
        {"id": "b8", "value": 8, "measurement": "b8.json"},
        {"id": "b8-resume", "value": 8, "measurement": "resume.json", "resume": {"of": "b8", "setting": SETTING}},
        *variants]})


def _at(second: int) -> str:
    return f"2026-10-06T09:{second // 60:02d}:{second % 60:02d}Z"


COUNTERS = dict.fromkeys(("baseline_allocated_bytes", "baseline_reserved_bytes", "final_allocated_bytes",
                          "final_reserved_bytes", "peak_allocated_bytes", "peak_reserved_bytes"))


def _doc(warm: dict[int, tuple[int, int]], cold: tuple[int, int] | None = None) -> MeasurementDoc:
    """A measurement whose warm run r (and its one cold run) started and ended at these seconds after 09:00."""
    phases: list[dict[str, Any]] = [{"phase": "warm_forward", "repeat": r, "started_at": _at(a), "ended_at": _at(b)}
              for r, (a, b) in warm.items()]
    if cold is not None:
        phases.insert(0, {"phase": "cold_forward", "started_at": _at(cold[0]), "ended_at": _at(cold[1])})
    return MeasurementDoc.of({
        "schema_version": "1", "environment": {"python_version": "3.11", "device": "cuda:0", "gpu_available": True},
        "configuration": {"device": "cuda:0", "batch": 8, "dtype": "float32", "warmup": 0, "repeats": 5},
        "phases": [{"status": "ok", "elapsed_seconds": 1.0, **COUNTERS, **p} for p in phases]})


MEASURED = {"b8.json": _doc({3: (0, 100), 4: (200, 230)}), "resume.json": _doc({3: (300, 340), 4: (400, 425)})}


def _row(variant: str, run: int | None, notes: str = "", phase: str = "warm", **cells: Any) -> GridRow:
    return GridRow.of({"experiment_id": "rtx4090-batch", "variant_id": variant, "phase": phase, "run_index": run,
                       "notes": notes, "seed": 1234, "corpus_revision": "c1", **cells})


def _plans(*rows: GridRow, exp: ExperimentSpec | None = None,
           measured: dict[str, MeasurementDoc] | None = None) -> tuple[dict[str, ResumePlan], list[Any]]:
    """The rows as (index, row, line): row i on line i + 2."""
    return resumes.plans(exp or _exp(), [(i, r, i + 2) for i, r in enumerate(rows)],
                         MEASURED if measured is None else measured, GRID)


OOM = "outcome=oom; completed=400; error=CUDA out of memory"


def test_one_resumption_adds_the_interrupted_time() -> None:
    plans, findings = _plans(_row("b8", 3, OOM), _row("b8-resume", 3, "outcome=resumed; resumed=b8/warm/3"))
    assert findings == []
    plan = plans["b8-resume"]
    assert plan.interrupted == {("b8", "warm", 3)} and plan.added == {1: 100.0}
    assert resumes.duration(plan, 1, 50.5) == 150.5 and resumes.duration(plan, 0, 50.5) == 50.5


def test_a_chain_of_two_resumptions_counts_every_part() -> None:
    # b8's run 3 stops; its resumption stops in turn; a second resumption completes the corpus: the time of both
    # interrupted attempts is the completed one's, and both are interrupted attempts of the plan.
    plans, findings = _plans(_row("b8", 3, OOM), _row("b8-resume", 3, f"resumed=b8/warm/3; {OOM}"),
                             _row("b8-resume", 4, "outcome=resumed; resumed=b8-resume/warm/3"))
    assert findings == []
    plan = plans["b8-resume"]
    assert plan.interrupted == {("b8", "warm", 3), ("b8-resume", "warm", 3)}
    assert plan.added == {2: 140.0} and plan.interrupted_seconds == 140.0
    # the interrupted resumption is no completed run; the completed one is
    assert not resumes.through(plan, 1, row_outcome(OOM))
    assert resumes.through(plan, 2, row_outcome("outcome=resumed; resumed=b8-resume/warm/3"))


@pytest.mark.parametrize("rows,said", [
    ([_row("b8-resume", 3, "outcome=resumed")], "names no resumed=<variant>/<phase>/<run_index>: every attempt of "
                                                "a resume variant resumes one"),
    ([_row("b8-resume", 3, "outcome=resumed; resumed=b8/hot/3")],
     "names resumed='b8/hot/3', which is no <variant>/<phase>/<run_index>"),
    ([_row("b8", 3, OOM), _row("b8-resume", 3, "resumed=b8/warm/3")],
     "names resumed=b8/warm/3 but is written outcome=ok: a resumption is outcome=resumed once it completed the "
     "corpus, or keeps the failure that interrupted it in turn"),
    ([_row("b8-resume", 3, "outcome=resumed; resumed=b8-resume/warm/3")],
     "resumes b8-resume/warm/3, itself: its own failure is a failure of b8-resume, never resumed by itself"),
    ([_row("b1", 3, OOM), _row("b8-resume", 3, "outcome=resumed; resumed=b1/warm/3")],
     "resumes b1/warm/3, an attempt of neither b8 nor b8-resume"),
    ([_row("b8-resume", 3, "outcome=resumed; resumed=b8/warm/9")], "resumes b8/warm/9, which has no row in the grid"),
    ([_row("b8", 3), _row("b8-resume", 3, "outcome=resumed; resumed=b8/warm/3")],
     "resumes b8/warm/3, which was not interrupted (its notes give no outcome=failed, oom or aborted)"),
    ([_row("b8", 3, OOM), _row("b8-resume", 1, "outcome=resumed; resumed=b8/warm/3", phase="cold")],
     "resumes b8/warm/3, a warm attempt, as a cold one"),
    ([_row("b8", 3, OOM), _row("b8-resume", 3, "outcome=resumed; resumed=b8/warm/3", seed=99)],
     "runs seed 99, where b8/warm/3, the attempt it resumes, ran seed 1234"),
    ([_row("b8", 3, OOM), _row("b8-resume", 3, "outcome=resumed; resumed=b8/warm/3", corpus_revision="c2")],
     "runs corpus c2, where b8/warm/3, the attempt it resumes, ran corpus c1"),
    ([_row("b8", 3, OOM), _row("b8-resume", 3, "outcome=resumed; resumed=b8/warm/3"),
      _row("b8-resume", 4, "outcome=resumed; resumed=b8/warm/3")],
     "resumes b8/warm/3, which the attempt on line 3 resumes already"),
])
def test_each_invalid_resumption_says_why(rows: list[GridRow], said: str) -> None:
    plans, findings = _plans(*rows)
    [finding] = findings
    last = rows[-1]
    assert finding.code == "resume-target-invalid" and finding.line == len(rows) + 1
    assert finding.message == (f"attempt {last.phase} {last.run_index} of resume variant b8-resume {said}")
    assert finding.fix == ("name the interrupted attempt of b8 this attempt resumes, as resumed=b8/<phase>/"
                           "<run_index>, once, under its seed and corpus, with outcome=resumed once the corpus is "
                           "completed")
    assert len(rows) - 1 not in plans["b8-resume"].added


def test_resumptions_that_resume_each_other_loop() -> None:
    plans, findings = _plans(_row("b8-resume", 3, f"resumed=b8-resume/warm/4; {OOM}"),
                             _row("b8-resume", 4, f"resumed=b8-resume/warm/3; {OOM}"),
                             _row("b8-resume", 5, "outcome=resumed; resumed=b8-resume/warm/4"))
    assert [f.line for f in findings] == [2, 3, 4]
    assert all("a resumption whose chain does not go back to an interrupted attempt of b8" in f.message
               for f in findings)
    assert plans["b8-resume"].interrupted == set()


def test_a_resumption_of_a_resumption_that_resumes_nothing_valid_loops() -> None:
    # b8-resume/warm/3 resumes an attempt of no variant it may: the resumption of it goes back to no b8 attempt.
    plans, findings = _plans(_row("b1", 2, OOM), _row("b8-resume", 3, f"resumed=b1/warm/2; {OOM}"),
                             _row("b8-resume", 4, "outcome=resumed; resumed=b8-resume/warm/3"))
    assert [(f.line, "neither" in f.message, "chain does not go back" in f.message) for f in findings] == [
        (3, True, False), (4, False, True)]


@pytest.mark.parametrize("notes", ["outcome=resumed", "resumed=b8/warm/3", f"resumed=b8/warm/3; {OOM}"])
def test_a_resumption_in_a_variant_without_a_resume_setting(notes: str) -> None:
    _, findings = _plans(_row("b8", 3, notes))
    assert [(f.code, f.line, f.claimed) for f in findings] == [
        ("resume-not-declared", 2, row_outcome(notes).status)]


def test_a_variant_without_a_resume_setting_and_no_resumption_is_no_finding() -> None:
    assert _plans(_row("b8", 3, OOM), _row("b8", 4)) == ({"b8-resume": ResumePlan("b8-resume", Resume("b8", SETTING))},
                                                          [])


def test_a_row_without_run_index_is_no_attempt_of_run_one() -> None:
    # b8's run 1 went through; a row with an empty run_index failed: the resumption of run 1 resumes no interruption.
    _, findings = _plans(_row("b8", 1), _row("b8", None, OOM),
                         _row("b8-resume", 1, "outcome=resumed; resumed=b8/warm/1"))
    assert [f.message.endswith("which was not interrupted (its notes give no outcome=failed, oom or aborted)")
            for f in findings] == [True]


# ------------------------------------------------------------------------------------ the interrupted time

@pytest.mark.parametrize("start,end,added", [
    (100, 100, 0.0),  # started and ended in one second: measured, 0 s
    (101, 100, None),  # ended one second before it started: no time
    (100, 101, 1.0),
])
def test_the_interrupted_time_on_the_edge(start: int, end: int, added: float | None) -> None:
    measured = {**MEASURED, "b8.json": _doc({3: (start, end)})}
    plans, findings = _plans(_row("b8", 3, OOM), _row("b8-resume", 3, "outcome=resumed; resumed=b8/warm/3"),
                             measured=measured)
    assert plans["b8-resume"].added == {1: added}
    assert [f.code for f in findings] == ([] if added is not None else ["resume-time-unmeasured"])


def test_an_unmeasured_part_of_a_chain_leaves_the_time_unmeasured() -> None:
    measured = {**MEASURED, "resume.json": _doc({4: (400, 425)})}  # the interrupted resumption (3) is not dated
    plans, findings = _plans(_row("b8", 3, OOM), _row("b8-resume", 3, f"resumed=b8/warm/3; {OOM}"),
                             _row("b8-resume", 4, "outcome=resumed; resumed=b8-resume/warm/3"), measured=measured)
    assert plans["b8-resume"].added == {2: None} and plans["b8-resume"].interrupted_seconds is None
    [finding] = findings
    assert (finding.code, finding.line, finding.field) == ("resume-time-unmeasured", 4, "elapsed_seconds")
    assert "(b8-resume/warm/3) has no measured start and end" in finding.message


def test_a_variant_without_a_measurement_has_no_interrupted_time() -> None:
    exp = ExperimentSpec.of({**EXAMPLE["experiments"][0], "variants": [
        {"id": "b8", "value": 8},
        {"id": "b8-resume", "value": 8, "measurement": "resume.json", "resume": {"of": "b8", "setting": SETTING}}]})
    plans, _ = _plans(_row("b8", 3, OOM), _row("b8-resume", 3, "outcome=resumed; resumed=b8/warm/3"), exp=exp)
    assert plans["b8-resume"].added == {1: None}


def test_the_interrupted_attempt_is_found_by_its_exact_variant() -> None:
    # A variant B8 (another case) measured apart: b8's time is b8's measurement's.
    exp = ExperimentSpec.of({**EXAMPLE["experiments"][0], "variants": [
        {"id": "B8", "value": 16, "measurement": "other.json"}, {"id": "b8", "value": 8, "measurement": "b8.json"},
        {"id": "b8-resume", "value": 8, "measurement": "resume.json", "resume": {"of": "b8", "setting": SETTING}}]})
    measured = {**MEASURED, "other.json": _doc({3: (0, 7)})}
    plans, _ = _plans(_row("b8", 3, OOM), _row("b8-resume", 3, "outcome=resumed; resumed=b8/warm/3"), exp=exp,
                      measured=measured)
    assert plans["b8-resume"].added == {1: 100.0}


def test_a_cold_attempt_is_timed_from_its_cold_phase() -> None:
    doc = _doc({}, cold=(10, 70))
    plans, findings = _plans(_row("b8", 1, OOM, phase="cold"),
                             _row("b8-resume", 1, "outcome=resumed; resumed=b8/cold/1", phase="cold"),
                             measured={**MEASURED, "b8.json": doc})
    assert findings == [] and plans["b8-resume"].added == {1: 60.0}


# ------------------------------------------------------------------------------------ names, durations, sums

@pytest.mark.parametrize("text,key", [
    ("b8/warm/3", ("b8", "warm", 3)), ("b8/cold/12", ("b8", "cold", 12)),
    ("b8/hot/3", None), ("b8/warm/x", None), ("b8/warm", None), ("x/b8/warm/3", None), ("b8/warm/-1", None),
    ("", None), (None, None),
])
def test_a_resumed_name(text: str | None, key: tuple[str, str, int] | None) -> None:
    assert resumes.parse_target(text) == key


def test_the_interrupted_seconds_and_durations() -> None:
    plan = ResumePlan("b8-resume", Resume("b8", SETTING), added={4: 2.5, 7: 0.0000004})
    assert plan.interrupted_seconds == 2.5
    plan.added[9] = 1.0000006
    assert plan.interrupted_seconds == 3.500001
    plan.added[11] = None
    assert plan.interrupted_seconds is None
    assert resumes.duration(plan, 4, 10.0000004) == 12.5
    assert resumes.duration(plan, 11, 10.0) == 10.0 and resumes.duration(None, 4, 10.0000006) == 10.000001
    assert resumes.through(None, 4, row_outcome("outcome=resumed")) is False
    assert resumes.through(plan, 5, row_outcome("outcome=resumed")) is False
    assert resumes.through(plan, 4, row_outcome("outcome=resumed")) is True
    assert resumes.through(None, 5, row_outcome("")) is True


def test_a_resumption_of_an_attempt_of_no_variant_has_no_interrupted_time() -> None:
    # The resume variant resumes b16, which the experiment does not register: its attempt has no measurement.
    exp = ExperimentSpec.of({**EXAMPLE["experiments"][0], "variants": [
        {"id": "b8", "value": 8, "measurement": "b8.json"},
        {"id": "b8-resume", "value": 8, "measurement": "resume.json", "resume": {"of": "b16", "setting": SETTING}}]})
    plans, _ = _plans(_row("b16", 3, OOM), _row("b8-resume", 3, "outcome=resumed; resumed=b16/warm/3"), exp=exp)
    assert plans["b8-resume"].added == {1: None}


@pytest.mark.parametrize("started,ended", [(True, False), (False, True)])
def test_an_attempt_dated_at_one_end_only_has_no_interrupted_time(started: bool, ended: bool) -> None:
    dated: dict[str, Any] = {**({"started_at": _at(0)} if started else {}), **({"ended_at": _at(100)} if ended else {})}
    phases: list[Any] = [{"phase": "warm_forward", "repeat": 3, "status": "ok", "elapsed_seconds": 1.0, **COUNTERS,
                          **dated}]
    doc = MeasurementDoc.of({"schema_version": "1", "environment": {"python_version": "3.11", "device": "cuda:0",
                                                                    "gpu_available": True},
                             "configuration": {"device": "cuda:0", "batch": 8, "dtype": "float32", "warmup": 0,
                                               "repeats": 5}, "phases": phases})
    plans, _ = _plans(_row("b8", 3, OOM), _row("b8-resume", 3, "outcome=resumed; resumed=b8/warm/3"),
                      measured={**MEASURED, "b8.json": doc})
    assert plans["b8-resume"].added == {1: None}


def test_a_resumption_of_an_invalid_interrupted_resumption_goes_back_to_nothing() -> None:
    # b8-resume's run 3 resumes b8's run 3 under another seed (invalid), and stops; run 4 resumes it: its chain
    # passes through an invalid resumption and goes back to no interrupted attempt of b8.
    _, findings = _plans(_row("b8", 3, OOM), _row("b8-resume", 3, f"resumed=b8/warm/3; {OOM}", seed=99),
                         _row("b8-resume", 4, "outcome=resumed; resumed=b8-resume/warm/3", seed=99))
    assert [(f.line, "ran seed 1234" in f.message, "chain does not go back" in f.message) for f in findings] == [
        (3, True, False), (4, False, True)]
