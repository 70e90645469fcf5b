"""Issue 51 item 2, run times against the protocol and grid durations against their measured runs: registration,
window and deadline each at the instant and one microsecond past it, a duration at the millisecond tolerance."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from conftest import REPO
from test_edges_runs import stamp

from generator.audit.load.findings import Finding
from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.inputs.rows import GridRow
from generator.audit.recompute.times import runtimes

EXAMPLE = REPO / "inputs" / "example"
GRID = "resultats-bruts.csv"
FILE = "measurements/rtx4090-batch-b1.json"
BASE = json.loads((EXAMPLE / FILE).read_text("utf-8"))
# one process: set-up, a cold run, the warm-up, three warm runs with idle time between them
PHASES: list[tuple[str, int | None, float, float, float | None]] = [
    ("model_load", None, 0.0, 3.0, 3.0), ("inputs", None, 3.0, 4.0, 1.0), ("cold_forward", None, 4.0, 14.0, 10.0),
    ("warmup", None, 14.0, 20.0, 6.0), ("warm_forward", 1, 30.0, 40.0, 10.0), ("warm_forward", 2, 50.0, 60.0, 10.0),
    ("warm_forward", 3, 80.0, 90.0, 10.0)]


def protocol(**change: Any) -> dict[str, Any]:
    data = json.loads((EXAMPLE / "protocol.json").read_text("utf-8"))
    exp = data["experiments"][0]
    exp["variants"] = [v for v in exp["variants"] if v["id"] == "b1"]
    data["experiments"] = [exp]
    # the window and the deadline far around the runs, the registration long before them
    data.update(registered_at=stamp(-3600), deadline="2026-10-09T18:00")
    data["window"].update(start="2026-10-06T09:00", end="2026-10-06T12:00", timezone="Europe/Paris")
    data.update(change)
    return data


def measurement(phases: Sequence[tuple[str, int | None, float, float, float | None]] | None = None,
                **change: Any) -> dict[str, Any]:
    out = []
    for name, repeat, start, end, work in PHASES if phases is None else phases:
        out.append({**BASE["phases"][0], "phase": name, "repeat": repeat, "elapsed_seconds": work,
                    "status": "ok" if work is not None else "failed", "started_at": stamp(start),
                    "ended_at": stamp(end)})
    return {**BASE, "phases": out, **change}


def row(phase: str, run_index: int | None, seconds: float | None, variant: str = "b1") -> GridRow:
    return GridRow.of({"experiment_id": "rtx4090-batch", "variant_id": variant, "phase": phase,
                       "run_index": run_index, "elapsed_seconds": seconds})


def found(p: dict[str, Any], docs: dict[str, dict[str, Any]], rows: list[GridRow] | None = None) -> list[Finding]:
    rows = rows or []
    return runtimes.run_time_findings(Protocol.of(p), {k: MeasurementDoc.of(d) for k, d in docs.items()}, GRID,
                                      rows, list(range(2, len(rows) + 2)))


def seen(findings: list[Finding]) -> list[tuple[str, str, int | None, str | None, object]]:
    return sorted((f.code, f.file, f.line, f.field, f.claimed) for f in findings)


def test_the_base_is_clean() -> None:
    assert found(protocol(), {FILE: measurement()},
                 [row("cold", 1, 10.0), row("warm", 1, 10.0), row("warm", 2, 10.0), row("warm", 3, 10.0)]) == []


# ------------------------------------------------------------------------ registration, window, deadline


@pytest.mark.parametrize("registered,flagged", [(0.0, True), (-0.000001, False), (0.5, True)])
def test_a_run_starting_at_the_registration_is_before_it(registered: float, flagged: bool) -> None:
    out = found(protocol(registered_at=stamp(registered)), {FILE: measurement()}, [row("warm", 1, 10.0)])
    assert seen([f for f in out if f.code == "run-before-registration"]) == (
        [("run-before-registration", FILE, None, "/phases/0/started_at", stamp(0.0))] if flagged else [])


# the window in Paris (+02:00): 2026-10-06T10:00 is 08:00Z, the base's T0
@pytest.mark.parametrize("start,end,field,claimed", [
    ("2026-10-06T10:00:00", "2026-10-06T10:01:30", None, None),                  # both edges on a run's times
    ("2026-10-06T10:00:00.000001", "2026-10-06T12:00", "/phases/0/started_at", stamp(0.0)),
    ("2026-10-06T10:00:00.5", "2026-10-06T12:00", "/phases/0/started_at", stamp(0.0)),
    ("2026-10-06T09:00", "2026-10-06T10:01:29.999999", "/phases/6/ended_at", stamp(90.0)),
    ("2026-10-06T09:00", "2026-10-06T10:01:29.5", "/phases/6/ended_at", stamp(90.0)),
])
def test_a_run_on_the_window_s_edges_is_inside(start: str, end: str, field: str | None, claimed: str | None) -> None:
    p = protocol()
    p["window"].update(start=start, end=end)
    out = [f for f in found(p, {FILE: measurement()}, [row("warm", 3, 10.0)]) if f.code == "run-outside-window"]
    grid = [("run-outside-window", GRID, 2, "elapsed_seconds", claimed)] if field == "/phases/6/ended_at" else []
    assert seen(out) == ([] if field is None else sorted([("run-outside-window", FILE, None, field, claimed), *grid]))
    if field is not None:
        first = field.endswith("started_at")
        ran = "model_load ran " + stamp(0.0) if first else "warm_forward repeat 3 ran " + stamp(80.0)
        assert out[0].message.startswith(ran + " to ")


@pytest.mark.parametrize("deadline,flagged", [("2026-10-06T10:01:30", False), ("2026-10-06T10:01:29.999999", True),
                                              ("2026-10-06T10:01:29.5", True)])
def test_a_run_ending_on_the_deadline_is_in_time(deadline: str, flagged: bool) -> None:
    out = [f for f in found(protocol(deadline=deadline), {FILE: measurement()}) if f.code == "run-after-deadline"]
    assert seen(out) == ([("run-after-deadline", FILE, None, "/phases/6/ended_at", stamp(90.0))] if flagged else [])


def test_a_protocol_whose_registration_names_no_moment_places_no_run() -> None:
    out = found(protocol(registered_at="2026-09-30T10:00:00"), {FILE: measurement()})
    assert out == []


@pytest.mark.parametrize("start,end,field,message", [
    ("2026-10-06T08:00:00", stamp(3.0), "/phases/0/started_at", "started_at '2026-10-06T08:00:00' is no UTC moment"),
    (stamp(0.0), "2026-13-06T08:00:03Z", "/phases/0/ended_at", "ended_at '2026-13-06T08:00:03Z' is no UTC moment"),
    (stamp(3.0), stamp(0.0), "/phases/0/ended_at",
     f"ended_at {stamp(0.0)} is before started_at {stamp(3.0)}"),
])
def test_times_that_name_no_moment_or_run_backwards_are_invalid(start: str, end: str, field: str,
                                                                message: str) -> None:
    doc = measurement()
    doc["phases"][0].update(started_at=start, ended_at=end)
    out = [f for f in found(protocol(), {FILE: doc}) if f.code == "run-time-invalid"]
    assert [(f.file, f.field, f.message) for f in out] == [(FILE, field, message)]
    assert out[0].claimed == (start if field.endswith("started_at") else end)


@pytest.mark.parametrize("length", [0.0, 0.5])
def test_a_phase_of_no_length_or_under_a_second_is_a_valid_run(length: float) -> None:
    doc = measurement()
    doc["phases"][1].update(ended_at=stamp(3.0 + length), elapsed_seconds=length)
    doc["phases"][2].update(started_at=stamp(3.0 + length))
    assert found(protocol(), {FILE: doc}) == []
    # and it is placed on the timeline: starting before the previous phase ended is out of order
    doc["phases"][1].update(started_at=stamp(2.0), ended_at=stamp(2.0 + length))
    assert [f.code for f in found(protocol(), {FILE: doc})] == ["run-times-out-of-order"]


def test_a_phase_ending_just_before_it_starts_is_only_invalid() -> None:
    doc = measurement()
    doc["phases"][1].update(started_at=stamp(3.5), ended_at=stamp(3.0))
    assert [f.code for f in found(protocol(), {FILE: doc})] == ["run-time-invalid"]


def test_a_campaign_without_times_warns_once_and_errs_on_each_file() -> None:
    undated = measurement()
    for p in undated["phases"]:
        del p["started_at"], p["ended_at"]
    out = found(protocol(), {FILE: undated})
    assert [(f.code, f.file) for f in out] == [("no-run-times", "protocol.json"), ("run-times-missing", FILE)]
    assert "(nor does any other measurement)" in out[1].message
    p = protocol()
    p["experiments"][0]["variants"].append({"id": "b4", "value": 4, "measurement": "m4.json"})
    out = found(p, {FILE: measurement(), "m4.json": undated})
    assert [(f.code, f.file) for f in out] == [("run-times-missing", "m4.json")]
    assert "while the campaign's other measurements do" in out[0].message


def test_a_time_error_is_on_the_measurement_and_on_each_grid_row_of_that_run() -> None:
    rows = [row("warm", 3, 10.0), row("warm", 2, 10.0), row("warm", 3, 10.0, variant="b4"), row("other", 3, 10.0),
            row("warm", None, 10.0)]
    out = [f for f in found(protocol(deadline="2026-10-06T10:01:00"), {FILE: measurement()}, rows)
           if f.code == "run-after-deadline"]
    assert seen(out) == [("run-after-deadline", FILE, None, "/phases/6/ended_at", stamp(90.0)),
                         ("run-after-deadline", GRID, 2, "elapsed_seconds", stamp(90.0))]
    assert out[1].message.startswith(f"this run ({FILE} /phases/6/ended_at = {stamp(90.0)}) ended at ")


def test_a_run_starting_on_the_window_s_start_and_ending_past_its_end_is_out_by_its_end() -> None:
    p = protocol()
    p["window"].update(start="2026-10-06T10:00:00", end="2026-10-06T10:00:02")  # phase 0 runs 08:00:00Z-08:00:03Z
    out = [f for f in found(p, {FILE: measurement()}) if f.code == "run-outside-window" and f.field
           and f.field.startswith("/phases/0/")]
    assert [(f.field, f.claimed) for f in out] == [("/phases/0/ended_at", stamp(3.0))]


def test_a_grid_row_without_a_run_index_is_tied_to_no_phase() -> None:
    # format 2 names a first pass that is no cold run of the grid with repeat null: a row without a run_index
    # is not that pass
    doc = measurement(schema_version="2")
    out = found(protocol(deadline="2026-10-06T10:00:10"), {FILE: doc}, [row("cold", None, 10.0)])
    assert {f.code for f in out} >= {"run-after-deadline"}
    assert [f for f in out if f.file == GRID and f.code == "run-after-deadline"] == []


def test_a_format_2_file_s_processes_are_ordered_one_after_the_other() -> None:
    phases = [("model_load", None, 0.0, 3.0, 3.0), ("inputs", None, 3.0, 4.0, 1.0),
              ("cold_forward", 1, 4.0, 14.0, 10.0),
              ("model_load", None, 15.0, 18.0, 3.0), ("inputs", None, 18.0, 19.0, 1.0),
              ("cold_forward", 2, 19.0, 29.0, 10.0), ("warmup", None, 30.0, 36.0, 6.0),
              ("warm_forward", 1, 40.0, 50.0, 10.0)]
    assert found(protocol(), {FILE: measurement(phases, schema_version="2")}) == []


def test_runs_of_two_files_on_one_device_at_once_overlap() -> None:
    p = protocol()
    p["experiments"][0]["variants"].append({"id": "b4", "value": 4, "measurement": "m4.json"})
    later = [(n, r, s + 1000.0, e + 1000.0, w) for n, r, s, e, w in PHASES]
    assert [f for f in found(p, {FILE: measurement(), "m4.json": measurement(later)})
            if f.code == "runs-overlap"] == []
    during = [(n, r, s + 88.5, e + 88.5, w) for n, r, s, e, w in PHASES]
    out = [f for f in found(p, {FILE: measurement(), "m4.json": measurement(during)}) if f.code == "runs-overlap"]
    assert seen(out) == [("runs-overlap", "m4.json", None, "/phases/0/started_at", stamp(88.5)),
                         ("runs-overlap", FILE, None, "/phases/6/started_at", stamp(80.0))]


# ------------------------------------------------------------------------ a grid duration against its run


def durations(rows: list[GridRow], doc: dict[str, Any] | None = None, p: dict[str, Any] | None = None,
              codes: tuple[str, ...] = ("duration-below-measured", "duration-beyond-bracket", "duration-unmeasured",
                                        "cold-run-unmeasured")) -> list[Finding]:
    docs = {FILE: measurement() if doc is None else doc}
    return [f for f in found(protocol() if p is None else p, docs, rows) if f.code in codes]


@pytest.mark.parametrize("claimed,flagged", [(9.999, False), (9.998999, True), (10.0, False)])
def test_a_duration_a_millisecond_below_its_measured_work_holds(claimed: float, flagged: bool) -> None:
    out = durations([row("warm", 2, claimed)])
    assert [(f.code, f.line, f.claimed, f.recomputed) for f in out] == (
        [("duration-below-measured", 2, claimed, 10.0)] if flagged else [])


def test_a_timer_without_inference_is_not_held_to_the_forward_pass() -> None:
    p = protocol()
    p["timer"]["covers"] = ["read_corpus", "tokenization"]
    assert durations([row("warm", 2, 5.0)], p=p) == []


# warm run 2 ran 50-60 s; its process ran warm run 1 until 40 s and warm run 3 from 80 s: 40 s idle, cap 20 s
@pytest.mark.parametrize("covers,allowed,why", [
    (["transfer", "inference"], 10.0, "and the timer covers only transfer and inference"),
    (["inference"], 10.0, "and the timer covers only transfer and inference"),
    (["read_corpus", "inference"], 20.0, f"ran no other phase only from {stamp(40.0)} to {stamp(60.0)}"),
    (["inference", "materialize_predictions"], 20.0, "the host steps it leaves out add at most"),
    (["read_corpus", "inference", "materialize_predictions"], 20.0, "the host steps it leaves out add at most"),
])
def test_a_duration_is_bounded_by_its_bracket_and_the_idle_time_its_timer_covers(covers: list[str], allowed: float,
                                                                                  why: str) -> None:
    p = protocol()
    p["timer"]["covers"] = covers
    assert durations([row("warm", 2, allowed + 0.001)], p=p) == []
    (f,) = durations([row("warm", 2, allowed + 0.001001)], p=p)
    assert (f.code, f.line, f.field, f.recomputed) == ("duration-beyond-bracket", 2, "elapsed_seconds", allowed)
    assert f.message.startswith(f"elapsed_seconds {allowed + 0.001001:g} is longer than {FILE} allows for this run "
                                f"({allowed:g} s): its measured phase lasted 10 s ")
    assert why in f.message


def _with(*changes: tuple[int, float, float]) -> dict[str, Any]:
    doc = measurement()
    for index, start, end in changes:
        doc["phases"][index].update(started_at=stamp(start), ended_at=stamp(end))
    return doc


@pytest.mark.parametrize("doc,allowed", [
    # the phase before ends on the run's start, the phase after starts on its end: no idle time at all
    (_with((4, 40.0, 50.0), (6, 60.0, 70.0)), 10.0),
    # idle exactly twice the bracket: still the idle time
    (_with((4, 35.0, 45.0), (6, 65.0, 75.0)), 20.0),
    # a phase ending inside the run, or starting inside it, is no bound (the order check has its own finding)
    (_with((4, 30.0, 50.5), (6, 59.5, 90.0)), 20.0),
    # the run first in its file: the window's start bounds it; last: the window's end
    (measurement([("warm_forward", 2, 50.0, 60.0, 10.0)]), 20.0),
])
def test_the_idle_time_is_bounded_by_the_nearest_phases(doc: dict[str, Any], allowed: float) -> None:
    p = protocol()
    p["timer"]["covers"] = ["read_corpus", "inference", "materialize_predictions"]
    assert durations([row("warm", 2, allowed + 0.001)], doc, p) == []
    (f,) = durations([row("warm", 2, allowed + 0.001001)], doc, p)
    assert f.recomputed == allowed


@pytest.mark.parametrize("covers,run,doc,allowed", [
    # before the run: the latest phase ending by its start (one ending inside the run is no bound)
    (["read_corpus", "inference"], 2, _with((3, 14.0, 45.0), (4, 45.2, 50.5)), 15.0),
    # after the run: the first phase starting from its end (one starting inside the run is no bound)
    (["inference", "materialize_predictions"], 1, _with((5, 45.0, 55.0)), 15.0),
    (["inference", "materialize_predictions"], 1, _with((5, 39.5, 45.0), (6, 45.5, 55.0)), 15.5),
])
def test_the_idle_time_ends_at_the_nearest_phase_outside_the_run(covers: list[str], run: int, doc: dict[str, Any],
                                                                  allowed: float) -> None:
    p = protocol()
    p["timer"]["covers"] = covers
    assert durations([row("warm", run, allowed)], doc, p) == []
    (f,) = durations([row("warm", run, allowed + 0.5)], doc, p)
    assert f.recomputed == allowed


def test_the_idle_time_exactly_the_cap_is_said_as_idle_time() -> None:
    p = protocol()
    p["timer"]["covers"] = ["read_corpus", "inference", "materialize_predictions"]
    (f,) = durations([row("warm", 2, 30.5)], _with((4, 35.0, 45.0), (6, 65.0, 75.0)), p)
    assert f"ran no other phase only from {stamp(45.0)} to {stamp(65.0)}" in f.message


def test_the_allowed_time_is_given_to_the_microsecond() -> None:
    (f,) = durations([row("warm", 2, 30.0)], _with((5, 50.0, 60.000001)))
    assert f.recomputed == 20.000002


def test_a_run_of_no_length_bounds_its_duration_by_nothing_more() -> None:
    doc = _with((5, 55.0, 55.0))
    doc["phases"][5]["elapsed_seconds"] = 0.0
    (f,) = durations([row("warm", 2, 0.5)], doc)
    assert (f.code, f.recomputed) == ("duration-beyond-bracket", 0.0)
    doc = _with((5, 55.0, 55.5))
    doc["phases"][5]["elapsed_seconds"] = 0.5
    (f,) = durations([row("warm", 2, 1.1)], doc)
    assert (f.code, f.recomputed) == ("duration-beyond-bracket", 1.0)


@pytest.mark.parametrize("key", ["started_at", "ended_at"])
def test_a_run_whose_time_names_no_moment_bounds_no_duration(key: str) -> None:
    doc = measurement()
    doc["phases"][5][key] = "2026-10-06T08:00:55"  # no offset: its own finding (run-time-invalid)
    assert durations([row("warm", 2, 99.0)], doc) == []


def test_rows_that_are_no_run_are_not_durations() -> None:
    rows = [row("warm", 2, 99.0, variant="B1"), row("other", 2, 99.0), row("warm", None, 99.0),
            row("warm", 2, None)]
    assert durations(rows) == []


def test_a_row_of_a_failed_untimed_phase_is_no_duration_to_prove() -> None:
    doc = measurement()
    doc["phases"][5].update(elapsed_seconds=None, status="failed")
    assert durations([row("warm", 2, 99.0)], doc) == []
    doc["phases"][5].update(status="ok")
    (f,) = durations([row("warm", 2, 99.0)], doc)
    assert f.code == "duration-unmeasured"
    assert f"{FILE} has no measured phase with a duration for warm run 2" in f.message


def test_a_duration_without_a_measured_phase_is_one_error_per_configuration() -> None:
    rows = [row("warm", r, float(r)) for r in (4, 5, 6, 7)]
    (f,) = durations(rows)
    assert (f.code, f.line, f.claimed) == ("duration-unmeasured", 2, 4.0)
    assert f.message.startswith(f"4 elapsed_seconds of rtx4090-batch/b1 are tied to no measured phase (line 2: 4 s, "
                                f"{FILE} has no measured phase with a duration for warm run 4; line 3: 5 s, ")
    assert f.message.endswith("warm run 6; and 1 more): typed by hand, nothing proves them")
    (three,) = durations(rows[:3])
    assert three.message.endswith("warm run 6): typed by hand, nothing proves them")
    (zero,) = durations([row("warm", 4, 0.0)])
    assert zero.claimed == 0.0


def test_a_variant_without_a_measurement_has_its_durations_unmeasured() -> None:
    p = protocol()
    del p["experiments"][0]["variants"][0]["measurement"]
    (f,) = durations([row("cold", 2, 5.0), row("warm", 1, 5.0)], p=p)
    assert f.code == "duration-unmeasured" and "line 2: 5 s, no measurement is linked to the variant" in f.message


def test_a_linked_measurement_that_could_not_be_read_says_nothing_here() -> None:
    p = protocol()
    p["experiments"][0]["variants"][0]["measurement"] = "unreadable.json"
    assert [f for f in found(p, {}, [row("warm", 1, 5.0)]) if f.code.startswith("duration")] == []


def test_later_cold_runs_of_format_1_are_a_warning_listing_five_lines() -> None:
    rows = [row("cold", r, 10.0 + r) for r in range(2, 8)]
    (f,) = durations(rows)
    assert (f.code, f.line, f.claimed) == ("cold-run-unmeasured", 2, 12.0)
    assert f.message.startswith("6 cold run(s) of rtx4090-batch/b1 after the first (lines 2, 3, 4, 5, 6 and 1 more) ")
    (five,) = durations(rows[:5])
    assert "(lines 2, 3, 4, 5, 6) " in five.message
    # cold run 1 has its phase; without it, it is unmeasured
    doc = measurement([p for p in PHASES if p[0] != "cold_forward"])
    assert [f.code for f in durations([row("cold", 1, 10.0)], doc)] == ["duration-unmeasured"]


def test_a_cold_run_a_format_2_file_lacks_is_unmeasured() -> None:
    doc = measurement([(n, 1 if n == "cold_forward" else r, s, e, w) for n, r, s, e, w in PHASES],
                      schema_version="2")
    assert durations([row("cold", 1, 10.0)], doc) == []
    assert [f.code for f in durations([row("cold", 2, 10.0)], doc)] == ["duration-unmeasured"]
    # the format is that of the row's own variant, not of one whose id differs only in case
    p = protocol()
    p["experiments"][0]["variants"].insert(0, {"id": "B1", "value": 1, "measurement": "format1.json"})
    docs = {FILE: MeasurementDoc.of(doc), "format1.json": MeasurementDoc.of(measurement())}
    out = runtimes.run_time_findings(Protocol.of(p), docs, GRID, [row("cold", 2, 10.0)], [2])
    assert [f.code for f in out if f.code in ("duration-unmeasured", "cold-run-unmeasured")] == ["duration-unmeasured"]
