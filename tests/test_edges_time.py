"""Issue 51 item 2, run times: the edges of the timing summary, the instants, a format 2 file's cold processes and
its phase order, each exactly at the limit and one unit past it (tests/mutation/ plants the bugs these catch)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from conftest import REPO

from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.recompute.decision.runcells import PhaseTiming
from generator.audit.recompute.times import coldphases, timing
from generator.core import instants
from generator.core.errors import LocalTimeError

BASE = json.loads((REPO / "inputs" / "example" / "measurements" / "rtx4090-batch-b1.json").read_text("utf-8"))

# ------------------------------------------------------------------------------------------ the timing summary


def test_the_tail_needs_twenty_observations_exactly() -> None:
    nineteen = timing.phase_stats([float(i) for i in range(1, 20)], 0)
    assert nineteen.p95 is None and nineteen.tail_note is not None and "19 observations" in nineteen.tail_note
    assert "at least 20 needed" in nineteen.tail_note
    twenty = timing.phase_stats([float(i) for i in range(1, 21)], 0)
    assert twenty.p95 == 19.0 and twenty.tail_note is None


@pytest.mark.parametrize("n,p95", [(20, 19.0), (21, 20.0), (40, 38.0), (41, 39.0)])
def test_the_p95_is_the_nearest_rank(n: int, p95: float) -> None:
    # nearest rank: the ceil(0.95 n)-th smallest; the durations given in reverse so that the sort matters
    assert timing.phase_stats([float(i) for i in range(n, 0, -1)], 0).p95 == p95


def test_the_summary_names_the_smallest_and_the_largest() -> None:
    s = timing.phase_stats([3.0, 1.0, 2.0], 4)
    assert (s.min, s.max, s.median, s.successes, s.failures) == (1.0, 3.0, 2.0, 3, 4)


def _series(*seconds: float) -> PhaseTiming:
    return timing.phase_stats(list(seconds), 0)


FULL = _series(1.0, 2.0, 3.0)


@pytest.mark.parametrize("side", ["a", "b"])
@pytest.mark.parametrize("missing", ["median", "min", "max"])
def test_a_series_missing_any_figure_never_decides(side: str, missing: str) -> None:
    # phase_stats leaves all three out together; separation promises the answer for any one of them left out
    other = _series(10.0, 11.0, 12.0)
    holed = PhaseTiming(durations=(1.0,), successes=1, failures=0, median=1.0, min=1.0, max=1.0, p95=None,
                        tail_note=None)
    holed = PhaseTiming(**{**holed.__dict__, missing: None})
    a, b = (holed, other) if side == "a" else (other, holed)
    result = timing.separation(a, b)
    assert (result.decides, result.gap, result.spread, result.reason) == (
        False, None, None, "a series has no successful run")


def test_the_gap_is_between_medians_and_the_spread_the_larger_range() -> None:
    a, b = _series(1.0, 2.0, 2.5), _series(10.0, 11.0, 15.0)  # medians 2 and 11, ranges 1.5 and 5
    result = timing.separation(a, b)
    assert (result.decides, result.gap, result.spread) == (True, 9.0, 5.0)
    assert result.reason == "the ranges are apart and the gap exceeds the spread"
    assert timing.separation(b, a).gap == 9.0 and timing.separation(b, a).spread == 5.0


@pytest.mark.parametrize("order", ["ab", "ba"])
def test_ranges_touching_at_either_end_overlap(order: str) -> None:
    low, high = _series(1.0, 1.5, 2.0), _series(2.0, 2.5, 3.0)
    a, b = (low, high) if order == "ab" else (high, low)
    result = timing.separation(a, b)
    assert (result.decides, result.gap, result.spread, result.reason) == (
        False, 1.0, 1.0, "the min-max ranges overlap")
    # a hair apart: no overlap any more (the gap 1.0 is then no larger than the spread)
    apart = timing.separation(low, _series(2.0000001, 2.5, 3.0))
    assert apart.reason == "the gap between medians is no larger than the spread"


@pytest.mark.parametrize("high,decides", [((3.5, 4.0, 4.5), False), ((3.5, 4.0000001, 4.5), True)])
def test_a_gap_exactly_the_spread_does_not_decide(high: tuple[float, ...], decides: bool) -> None:
    a, b = _series(1.0, 2.0, 3.0), _series(*high)  # apart; gap 2 = spread 2, then a hair more
    result = timing.separation(a, b)
    assert result.decides is decides
    assert result.reason == ("the ranges are apart and the gap exceeds the spread" if decides else
                             "the gap between medians is no larger than the spread")


# ------------------------------------------------------------------------------------------------- instants


@pytest.mark.parametrize("text,expected", [
    ("2026-10-06T07:30:00Z", datetime(2026, 10, 6, 7, 30, tzinfo=UTC)),
    ("2026-10-06T07:30:00+02:00", datetime(2026, 10, 6, 5, 30, tzinfo=UTC)),
    ("2026-10-06T07:30:00-04:00", datetime(2026, 10, 6, 11, 30, tzinfo=UTC)),
    ("2026-10-06T07:30:00+10:45", datetime(2026, 10, 5, 20, 45, tzinfo=UTC)),
    ("2026-10-06T07:30:00-00:30", datetime(2026, 10, 6, 8, 0, tzinfo=UTC)),
    ("2026-10-06T07:30:00.5Z", datetime(2026, 10, 6, 7, 30, 0, 500000, tzinfo=UTC)),
    ("2026-10-06T07:30:00.12345Z", datetime(2026, 10, 6, 7, 30, 0, 123450, tzinfo=UTC)),
    ("2026-10-06T07:30:00.123456Z", datetime(2026, 10, 6, 7, 30, 0, 123456, tzinfo=UTC)),
    ("2026-10-06T07:30:00.1234567Z", datetime(2026, 10, 6, 7, 30, 0, 123456, tzinfo=UTC)),
])
def test_a_stamp_is_the_instant_its_offset_names(text: str, expected: datetime) -> None:
    parsed = instants.parse_utc(text)
    assert parsed == expected and parsed is not None and parsed.utcoffset() == timedelta(0)
    assert parsed.microsecond == expected.microsecond


@pytest.mark.parametrize("text", ["2026-10-06T07:30:00", "2026-02-30T07:30:00Z", "2026-10-06T07:30:00+24:00", None,
                                  "2026-10-06 07:30:00Z"])
def test_no_moment_is_none(text: str | None) -> None:
    assert instants.parse_utc(text) is None


@pytest.mark.parametrize("text,offset", [
    ("2026-10-06T07:30+02:00", True), ("2026-10-06T07:30Z", True), ("2026-10-06T07:30", False),
    ("2026-10-06", False), ("not a time", False)])
def test_has_offset(text: str, offset: bool) -> None:
    assert instants.has_offset(text) is offset


def test_a_window_time_with_an_offset_is_that_instant_and_without_one_the_zone_s_wall_clock() -> None:
    with_offset = instants.parse_local("2026-10-06T07:30+00:00", "Europe/Paris")
    assert with_offset == datetime(2026, 10, 6, 7, 30, tzinfo=UTC)
    assert with_offset.utcoffset() == timedelta(hours=2)  # shown in the window's zone
    wall = instants.parse_local("2026-10-06T07:30", "Europe/Paris")
    assert wall == datetime(2026, 10, 6, 5, 30, tzinfo=UTC)
    with pytest.raises(LocalTimeError):
        instants.parse_local("2026-10-06", "Europe/Paris")


@pytest.mark.parametrize("text,expected", [
    ("2026-10-09", datetime(2026, 10, 9, 22, 0, tzinfo=UTC)),  # 2026-10-10 00:00 in Paris (+02:00)
    ("2026-10-09T18:00", datetime(2026, 10, 9, 16, 0, tzinfo=UTC)),
    ("2026-10-09T18:00-04:00", datetime(2026, 10, 9, 22, 0, tzinfo=UTC)),
])
def test_a_date_only_deadline_is_the_first_instant_of_the_next_day(text: str, expected: datetime) -> None:
    assert instants.deadline_instant(text, "Europe/Paris") == expected
    assert instants.deadline_instant(text, "Europe/Paris").tzinfo is not None
    assert instants.deadline_instant("2026-10-09", "UTC") == datetime(2026, 10, 10, tzinfo=UTC)


# ------------------------------------------------------------------------------------ a format 2 file's processes


def doc(*phases: tuple[str, int | None] | tuple[str, int | None, str], version: str = "2") -> MeasurementDoc:
    data: dict[str, Any] = {**BASE, "schema_version": version}
    data["phases"] = [{"phase": p[0], "repeat": p[1], "status": p[2] if len(p) > 2 else "ok"} for p in phases]
    return MeasurementDoc.of(data)


def test_the_format_with_a_cold_phase_per_cold_run_is_2() -> None:
    assert coldphases.per_cold_run(doc(version="2")) is True
    assert coldphases.per_cold_run(doc(version="1")) is False


TWO_COLD = (("model_load", None), ("inputs", None), ("cold_forward", 2), ("model_load", None), ("inputs", None),
            ("cold_forward", 1), ("warmup", None), ("warm_forward", 1))


@pytest.mark.parametrize("version,run_index,found", [
    ("2", 1, 5), ("2", 2, 2), ("2", 3, None), ("1", 1, 2), ("1", 2, None)])
def test_the_cold_phase_of_a_cold_run(version: str, run_index: int, found: int | None) -> None:
    d = doc(*TWO_COLD, version=version)
    assert coldphases.cold_phase(d, run_index) is (None if found is None else d.phases[found])


def test_each_cold_forward_ends_one_fresh_process_in_format_2_only() -> None:
    assert coldphases.processes(doc(*TWO_COLD)) == [0, 0, 0, 1, 1, 1, 2, 2]
    assert coldphases.processes(doc(*TWO_COLD, version="1")) == [0] * 8


SETUP = (("model_load", None), ("inputs", None))


def _order(d: MeasurementDoc, resumptions: bool = False) -> list[tuple[object, object]]:
    return [(f.claimed, f.recomputed) for f in coldphases.order_findings(d, "m.json", resumptions)]


@pytest.mark.parametrize("phases", [
    (*SETUP, ("cold_forward", 1), *SETUP, ("cold_forward", 2), ("warmup", None), ("warm_forward", 1)),
    # the optional set-up steps where a process has them, each in its place
    (("download", None), ("install", None), ("model_load", None), ("compile", None), ("inputs", None),
     ("cold_forward", 1), *SETUP, ("cold_forward", 2), ("warmup", None)),
    (*SETUP, ("cold_forward", 1), ("model_load", None), ("compile", None), ("inputs", None), ("cold_forward", 2),
     ("warmup", None)),
])
def test_a_format_2_file_in_the_order_it_runs_is_clean(phases: tuple[tuple[str, int | None], ...]) -> None:
    assert _order(doc(*phases)) == []


@pytest.mark.parametrize("phases,expected", [
    # the second process without its model_load
    ((*SETUP, ("cold_forward", 1), ("inputs", None), ("cold_forward", 2), ("warmup", None)),
     ["model_load", "inputs", "cold_forward", "model_load", "inputs", "cold_forward", "warmup"]),
    # compile after inputs
    ((("model_load", None), ("inputs", None), ("compile", None), ("cold_forward", 1), ("warmup", None)),
     ["model_load", "compile", "inputs", "cold_forward", "warmup"]),
    # no warm-up after the cold runs
    ((*SETUP, ("cold_forward", 1), ("warm_forward", 1)), ["model_load", "inputs", "cold_forward", "warmup"]),
    # no cold pass, and no inputs
    ((("model_load", None), ("warmup", None)), ["model_load", "inputs", "cold_forward", "warmup"]),
    ((("install", None), ("model_load", None), ("inputs", None), ("warmup", None)),
     ["install", "model_load", "inputs", "cold_forward", "warmup"]),
])
def test_a_format_2_file_out_of_order_says_the_order_expected(phases: tuple[tuple[str, int | None], ...],
                                                               expected: list[str]) -> None:
    found = coldphases.order_findings(doc(*phases), "m.json", False)
    assert [(f.code, f.recomputed) for f in found] == [("phase-order", expected)]
    assert found[0].claimed == [p[0] for p in phases if p[0] != "warm_forward"]
    assert f"expected {expected} then one warm_forward per repeat" in found[0].message


RESUMED = (*SETUP, ("cold_forward", 1), *SETUP, ("cold_forward", 2))


@pytest.mark.parametrize("tail,expected", [
    ((*SETUP, ("warmup", None), ("warm_forward", 1)), None),
    ((*SETUP, ("warm_forward", 1)), None),
    ((("install", None), *SETUP, ("warm_forward", 1)), None),
    ((("model_load", None), ("warm_forward", 1)),
     ["model_load", "inputs", "cold_forward", "model_load", "inputs", "cold_forward", "model_load", "inputs"]),
    ((("inputs", None), ("model_load", None), ("warmup", None)),
     ["model_load", "inputs", "cold_forward", "model_load", "inputs", "cold_forward", "model_load", "inputs",
      "warmup"]),
])
def test_a_resume_variant_s_warm_process_has_its_set_up_and_inputs(tail: tuple[tuple[str, int | None], ...],
                                                                    expected: list[str] | None) -> None:
    found = coldphases.order_findings(doc(*RESUMED, *tail), "m.json", True)
    assert [f.recomputed for f in found] == ([] if expected is None else [expected])


@pytest.mark.parametrize("phases,flagged", [
    # ended by a failed step before any warm run: the order it got through is fine
    ((("model_load", None, "failed"),), False),
    ((*SETUP, ("cold_forward", 1), ("model_load", None, "failed")), False),
    # the same truncated order without a failure is not
    ((*SETUP, ("cold_forward", 1), ("model_load", None)), True),
    # a failed step that is not a prefix of the order
    ((("inputs", None, "failed"),), True),
    # a failed warm run does not excuse a missing warm-up
    ((*SETUP, ("cold_forward", 1), ("warm_forward", 1, "failed")), True),
    # a failed step followed by warm runs does not either
    ((*SETUP, ("cold_forward", 1, "failed"), ("warm_forward", 1)), True),
])
def test_a_file_ended_by_a_failure_is_judged_on_the_order_it_got_through(
        phases: tuple[tuple[str, int | None, str], ...], flagged: bool) -> None:
    found = coldphases.order_findings(doc(*phases), "m.json", False)
    assert [f.code for f in found if "expected" in f.message] == (["phase-order"] if flagged else [])


@pytest.mark.parametrize("repeats,resumptions,fine", [
    ([1, 2], False, True), ([None], False, True), ([], False, True), ([2], False, False), ([1, 3], False, False),
    ([2, 1], False, False), ([1, 2, 3], False, True),
    ([1, 2], True, True), ([2, 3], True, True), ([2, 1], True, False), ([1, 1], True, False),
    ([None, 1], True, False), ([None], True, False),
])
def test_cold_runs_are_numbered_1_2_in_order(repeats: list[int | None], resumptions: bool, fine: bool) -> None:
    phases: list[tuple[str, int | None]] = []
    for r in repeats:
        phases += [*SETUP, ("cold_forward", r)]
    found = [f for f in coldphases.order_findings(doc(*phases, *SETUP, ("warmup", None)), "m.json", resumptions)
             if "cold_forward repeats" in f.message]
    assert len(found) == (0 if fine else 1)
    if not fine:
        assert found[0].claimed == repeats and found[0].recomputed == list(range(1, len(repeats) + 1))
        assert found[0].message.startswith(f"cold_forward repeats are {repeats}: ")
