"""Edges of the memory rules (issue 51): counters equal and one byte apart, the phase order cut short by a failure,
warm rows around a failed repeat, the grid row against its phase, and an out-of-memory error in any case."""

from __future__ import annotations

from typing import Any

import pytest

from generator.audit.load.findings import Finding
from generator.audit.load.inputs.measurement import MeasurementDoc, Phase
from generator.audit.load.inputs.rows import GridRow
from generator.audit.recompute.evidence import memory

SET_UP = ("model_load", "inputs", "cold_forward", "warmup")


class _Readings:
    """Memory readings by name, as a grid row or a phase gives them."""

    def __init__(self, **counters: int | None) -> None:
        self.counters = counters

    def counter(self, key: str) -> float | None:
        return self.counters.get(key)


def _phase(name: str, repeat: int | None = None, status: str = "ok", error: str | None = None,
           counters: dict[str, int | None] | None = None) -> dict[str, Any]:
    return {"phase": name, "repeat": repeat, "status": status, "error": error,
            "elapsed_seconds": None if status == "failed" else 1.0, **(counters or {})}


def _doc(phases: list[dict[str, Any]], repeats: int = 5) -> MeasurementDoc:
    data: dict[str, Any] = {
        "schema_version": "1", "environment": {"python_version": "3.12.3", "device": "cuda:0", "gpu_available": True},
        "configuration": {"device": "cuda:0", "batch": 1, "dtype": "bfloat16", "warmup": 2, "repeats": repeats},
        "phases": phases}
    return MeasurementDoc.of(data)


def _warm(*repeats: int | tuple[int, str]) -> list[dict[str, Any]]:
    """The set-up phases, then a warm_forward row per repeat (a (repeat, error) pair failed)."""
    rows = [_phase(n) for n in SET_UP]
    for r in repeats:
        rows.append(_phase("warm_forward", r[0], "failed", r[1]) if isinstance(r, tuple)
                    else _phase("warm_forward", r))
    return rows


def _codes(found: list[Finding]) -> list[str]:
    return [f.code for f in found]


BASE = {"baseline_allocated_bytes": 100, "baseline_reserved_bytes": 100, "final_allocated_bytes": 100,
        "final_reserved_bytes": 100, "peak_allocated_bytes": 100, "peak_reserved_bytes": 100}


@pytest.mark.parametrize(("change", "codes"), [
    ({}, []),  # allocated equal to reserved, peak equal to baseline: both hold at the edge
    ({"baseline_allocated_bytes": 101, "peak_allocated_bytes": 101}, ["allocated-exceeds-reserved"] * 2),
    ({"final_allocated_bytes": 101}, ["allocated-exceeds-reserved"]),
    ({"peak_allocated_bytes": 101, "peak_reserved_bytes": 101, "final_allocated_bytes": 101,
      "final_reserved_bytes": 101, "baseline_allocated_bytes": 101, "baseline_reserved_bytes": 101}, []),
    ({"peak_allocated_bytes": 99}, ["peak-below-baseline"]),
    ({"peak_reserved_bytes": 99, "peak_allocated_bytes": 99, "baseline_allocated_bytes": 99},
     ["peak-below-baseline"]),
    ({"baseline_allocated_bytes": None, "peak_reserved_bytes": None, "final_reserved_bytes": None}, []),
    ({"peak_allocated_bytes": None, "baseline_reserved_bytes": None, "final_allocated_bytes": None}, []),
])
def test_memory_invariants_hold_at_their_edge_and_fail_one_byte_past(change: dict[str, int | None],
                                                                      codes: list[str]) -> None:
    found = memory.invariant_findings(_Readings(**{**BASE, **change}), "m.json", None, "/phases/2/")
    assert _codes(found) == codes
    assert all(f.field and f.field.startswith("/phases/2/") for f in found)


def test_a_record_without_its_first_passes_is_out_of_order_unless_it_resumes() -> None:
    doc = _doc([_phase("model_load"), _phase("inputs"), *_warm(1, 2, 3, 4, 5)[4:]])
    assert _codes(memory.check_measurement(doc, "m.json")) == ["phase-order"]
    assert memory.check_measurement(doc, "m.json", resumptions=True) == []


@pytest.mark.parametrize(("phases", "codes"), [
    (_warm(1, 2, 3, 4, 5), []),
    ([_phase("model_load"), _phase("compile"), *_warm(1, 2, 3, 4, 5)[1:]], []),  # an optional step, in place
    ([_phase("inputs"), _phase("model_load"), *_warm(1, 2, 3, 4, 5)[2:]], ["phase-order"]),
    ([_phase("model_load"), _phase("inputs")], ["phase-order", "warm-rows-mismatch"]),  # no failure: not cut short
    ([_phase("model_load", status="failed", error="disk full")], []),  # cut short by its failure
    ([_phase("inputs", status="failed", error="disk full")], ["phase-order"]),  # cut short, but not the start
    (_warm(1, 2, 3), ["warm-rows-mismatch"]),
])
def test_phase_order_and_warm_rows(phases: list[dict[str, Any]], codes: list[str]) -> None:
    assert _codes(memory.check_measurement(_doc(phases), "m.json")) == codes


@pytest.mark.parametrize(("repeats", "codes"), [
    ((1, 5), []),  # the first and the last declared repeat, each once, in order
    ((2,), []),
    ((0, 2), ["warm-rows-mismatch"]),
    ((1, 6), ["warm-rows-mismatch"]),  # beyond configuration.repeats
    ((3, 1), ["warm-rows-mismatch"]),
    ((2, 2), ["warm-rows-mismatch"]),
])
def test_a_resume_file_holds_the_repeats_it_resumed_each_once_in_order(repeats: tuple[int, ...],
                                                                       codes: list[str]) -> None:
    doc = _doc([_phase("model_load"), _phase("inputs"), *[_phase("warm_forward", r) for r in repeats]])
    assert _codes(memory.check_measurement(doc, "m.json", resumptions=True)) == codes


def test_warm_rows_without_a_failure_number_one_to_repeats() -> None:
    found = memory.check_measurement(_doc(_warm(1, 2, 3)), "m.json")
    assert [(f.code, f.claimed, f.recomputed) for f in found] == [("warm-rows-mismatch", 3, 5)]
    assert found[0].message.startswith("3 warm_forward rows (repeats [1, 2, 3]) where configuration.repeats is 5")


OOM = "CUDA out of memory"


@pytest.mark.parametrize(("repeats", "recomputed"), [
    ((1, 2, (3, OOM)), None),  # stops on the failed repeat
    ((1, 2, (3, OOM), 4, 5), None),  # goes on to the last declared repeat
    (((1, OOM),), None),
    ((1, (2, OOM), 3), [1, 2, 3, 4, 5]),  # goes on, then stops short of the declared repeats
    ((1, 3, (4, OOM)), [1, 2, 3, 4]),  # a gap before the failure
    (((3, OOM),), [1, 2, 3]),  # the repeats before the failed one vanished
    ((1, 1, (2, OOM)), [1, 2, 3]),  # a repeat written twice
    ((1, 2, 3, 4, 5, (6, OOM)), [1, 2, 3, 4, 5]),  # beyond the declared repeats
])
def test_warm_rows_after_a_failed_repeat(repeats: tuple[int | tuple[int, str], ...],
                                         recomputed: list[int] | None) -> None:
    found = memory.check_measurement(_doc(_warm(*repeats)), "m.json")
    assert [f.recomputed for f in found if f.code == "warm-rows-mismatch"] == ([recomputed] if recomputed else [])
    assert _codes(found) == (["warm-rows-mismatch"] if recomputed else [])


def test_a_failure_before_the_warm_rows_requires_none_and_names_no_repeat() -> None:
    phases = [*_warm()[:3], _phase("warmup", status="failed", error=OOM), _phase("warm_forward", 2)]
    [found] = memory.check_measurement(_doc(phases), "m.json")
    assert found.code == "warm-rows-mismatch" and found.recomputed == [1, 2, 3, 4, 5]
    assert "where phase 3 (warmup) failed: every repeat attempted up to the failure needs its row (none required)" \
        in found.message
    [gap] = memory.check_measurement(_doc(_warm(1, 3, (4, OOM))), "m.json")
    assert "where phase 6 (warm_forward repeat 4) failed" in gap.message and "(1..4)" in gap.message


def test_the_phase_describing_a_row() -> None:
    doc = _doc(_warm(1, 2, 3, 4, 5))
    assert memory.phase_for_row(doc, "cold", 1) is doc.phases[2]
    assert memory.phase_for_row(doc, "warm", 2) is doc.phases[5]
    assert memory.phase_for_row(doc, "warm", 6) is None
    assert memory.phase_for_row(doc, "other", 1) is None


PHASE = {"baseline_allocated_bytes": 10, "baseline_reserved_bytes": 30, "peak_allocated_bytes": 50,
         "peak_reserved_bytes": 80}


def _agree(grid: dict[str, int | None], phase: dict[str, int | None]) -> list[Finding]:
    cells = {**PHASE, **grid}
    return memory.agreement_findings(GridRow.of(cells), 7, "grid.csv", Phase.of(_phase("warm_forward", 1, counters={
        **PHASE, **phase})), "m.json")


@pytest.mark.parametrize(("grid", "phase", "found"), [
    ({}, {}, []),
    ({"baseline_allocated_bytes": 0}, {"baseline_allocated_bytes": 0}, []),  # a real zero on both sides
    ({"baseline_allocated_bytes": 0}, {"baseline_allocated_bytes": None}, [("zero-not-measured", 0, None)]),
    ({"baseline_allocated_bytes": 5}, {"baseline_allocated_bytes": None}, []),
    ({"baseline_allocated_bytes": None}, {"baseline_allocated_bytes": None}, []),
    ({"baseline_allocated_bytes": None}, {}, [("memory-disagrees", "", 10)]),
    ({"baseline_allocated_bytes": 11}, {}, [("memory-disagrees", 11, 10)]),  # one byte apart
])
def test_a_grid_row_against_its_phase(grid: dict[str, int | None], phase: dict[str, int | None],
                                      found: list[tuple[str, object, object]]) -> None:
    assert [(f.code, f.claimed, f.recomputed) for f in _agree(grid, phase)] == found


@pytest.mark.parametrize(("grid", "phase", "hint"), [
    ({"baseline_reserved_bytes": 40}, {}, "allocated was added to reserved"),
    ({"peak_reserved_bytes": 130}, {}, "allocated was added to reserved"),
    ({"peak_allocated_bytes": 30}, {}, "the two peaks were subtracted"),
    ({"baseline_reserved_bytes": 31}, {}, ""),
    ({"baseline_allocated_bytes": 80 - 50}, {}, ""),  # what peak - peak would give, on a baseline: no hint
    ({"baseline_reserved_bytes": 31}, {"baseline_allocated_bytes": None}, ""),
    ({"peak_allocated_bytes": 51}, {"peak_reserved_bytes": None}, ""),
    ({"peak_reserved_bytes": 81}, {"peak_allocated_bytes": None}, ""),
])
def test_the_disagreement_names_the_arithmetic_that_made_it(grid: dict[str, int | None],
                                                            phase: dict[str, int | None], hint: str) -> None:
    [found] = _agree(grid, phase)
    plain = f"{found.field} {found.claimed} disagrees with m.json ({found.recomputed})"
    assert found.code == "memory-disagrees"
    assert found.message.startswith(plain) and (hint in found.message if hint else found.message == plain)


def _outcome(notes: str, status: str, error: str | None = None) -> list[str]:
    row = GridRow.of({"notes": notes})
    phase = Phase.of(_phase("warm_forward", 1, status, error))
    return _codes(memory.outcome_findings(row, 3, "grid.csv", phase, "m.json"))


@pytest.mark.parametrize(("notes", "status", "error", "codes"), [
    ("", "ok", None, []),
    ("outcome=failed", "ok", None, ["outcome-disagrees-measurement"]),
    ("outcome=excluded; cause=power", "ok", None, ["outcome-disagrees-measurement"]),
    ("", "failed", "RuntimeError: device lost", ["outcome-disagrees-measurement"]),
    ("outcome=failed", "failed", "RuntimeError: device lost", []),
    ("outcome=failed", "failed", "CUDA Out Of Memory", ["outcome-disagrees-measurement"]),
    ("outcome=failed", "failed", "torch.OutOfMemoryError", ["outcome-disagrees-measurement"]),
    ("outcome=oom", "failed", "CUDA out of memory", []),
])
def test_the_row_tells_the_outcome_the_measurement_recorded(notes: str, status: str, error: str | None,
                                                            codes: list[str]) -> None:
    assert _outcome(notes, status, error) == codes
