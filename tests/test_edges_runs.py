"""Issue 51 item 2, runs on the timeline: a file's phases one after the other, runs on one device apart, the
registered order of the warm runs, each at the millisecond tolerance and one microsecond past it."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from conftest import REPO

from generator.audit.load.findings import Finding
from generator.audit.load.inputs.measurement import MeasurementDoc, Phase
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.recompute.times import runorder, runphases, runtimes
from generator.audit.recompute.times.runphases import Dated

EXAMPLE = REPO / "inputs" / "example"
T0 = datetime(2026, 10, 6, 8, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def stamp(seconds: float) -> str:
    return at(seconds).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def dated(file: str, index: int, name: str, repeat: int | None, start: float, end: float,
          work: float | None = None, process: int = 0) -> Dated:
    phase = Phase.of({"phase": name, "repeat": repeat, "status": "ok" if work is not None else "failed",
                      "elapsed_seconds": work, "started_at": stamp(start), "ended_at": stamp(end)})
    return Dated(file, index, phase, at(start), at(end), process)


# ------------------------------------------------------------------------------------ one file's phases in order


@pytest.mark.parametrize("start,flagged", [(9.999, False), (9.998999, True), (10.0, False)])
def test_a_phase_may_start_a_millisecond_before_the_previous_ends(start: float, flagged: bool) -> None:
    phases = [dated("m.json", 0, "model_load", None, 0.0, 10.0), dated("m.json", 1, "inputs", None, start, 12.0)]
    found = runphases.order_findings(phases)
    assert [(f.code, f.field, f.claimed, f.recomputed) for f in found] == (
        [("run-times-out-of-order", "/phases/1/started_at", stamp(start), stamp(10.0))] if flagged else [])
    if flagged:
        assert found[0].message == (f"inputs started at {stamp(start)}, before model_load of the same file ended "
                                    f"({stamp(10.0)})")


def test_phases_are_ordered_by_process_then_phase_then_repeat() -> None:
    # written out of order in the file, run in order: nothing to say
    phases = [dated("m.json", 0, "warm_forward", 2, 30.0, 40.0, process=1),
              dated("m.json", 1, "warm_forward", 1, 20.0, 30.0, process=1),
              dated("m.json", 2, "cold_forward", 1, 10.0, 20.0, process=1),
              dated("m.json", 3, "cold_forward", 1, 0.0, 10.0)]
    assert runphases.order_findings(phases) == []
    # a phase without a repeat comes before the same phase with repeat 1
    same = [dated("m.json", 0, "cold_forward", 1, 10.0, 20.0), dated("m.json", 1, "cold_forward", None, 0.0, 10.0)]
    assert runphases.order_findings(same) == []
    assert runphases.order_findings([*same, dated("m.json", 2, "inputs", None, 15.0, 16.0)]) != []


def test_a_third_phase_out_of_order_is_found_too() -> None:
    phases = [dated("m.json", 0, "model_load", None, 0.0, 10.0), dated("m.json", 1, "inputs", None, 10.0, 20.0),
              dated("m.json", 2, "cold_forward", None, 15.0, 30.0)]
    assert [f.field for f in runphases.order_findings(phases)] == ["/phases/2/started_at"]


@pytest.mark.parametrize("end,work,flagged", [
    (10.0, 10.001, False), (10.0, 10.001001, True), (10.0, 9.999, False), (10.0, 10.0, False), (10.0, None, False)])
def test_a_phase_s_bracket_holds_its_own_work_within_a_millisecond(end: float, work: float | None,
                                                                    flagged: bool) -> None:
    found = runphases.order_findings([dated("m.json", 3, "warm_forward", 2, 0.0, end, work)])
    assert [(f.code, f.field, f.claimed, f.recomputed) for f in found] == (
        [("run-time-bracket-short", "/phases/3/ended_at", stamp(end), work)] if flagged else [])
    if flagged:
        assert found[0].message.startswith(f"warm_forward repeat 2 lasted 10 s from started_at {stamp(0.0)} to ")


def _doc(*timed: bool) -> MeasurementDoc:
    base = json.loads((EXAMPLE / "measurements" / "rtx4090-batch-b1.json").read_text("utf-8"))
    base["phases"] = [p if keep else {k: v for k, v in p.items() if k not in ("started_at", "ended_at")}
                      for p, keep in zip(base["phases"], timed, strict=False)]
    return MeasurementDoc.of(base)


def test_a_file_that_dates_some_phases_dates_them_all() -> None:
    assert runphases.partial_findings({"m.json": _doc(True, True, True, True)}) == []
    assert runphases.partial_findings({"m.json": _doc(False, False, False)}) == []
    (found,) = runphases.partial_findings({"m.json": _doc(True, False, True, False, True)})
    assert (found.code, found.file, found.field, found.claimed, found.recomputed) == (
        "run-times-partial", "m.json", "/phases/1", 3, 5)
    assert found.message.startswith("m.json dates 3 of its 5 phases and leaves 2 undated (the first: /phases/1, "
                                    "inputs): ")
    (warm,) = runphases.partial_findings({"m.json": _doc(True, True, True, True, False)})
    assert "(the first: /phases/4, warm_forward repeat 1)" in warm.message


# ------------------------------------------------------------------------------------ runs on one device apart

DEVICE = {"a.json": ("experiment e", "cuda:0"), "b.json": ("experiment e", "cuda:0"),
          "c.json": ("experiment e", "cuda:0"), "A.json": ("experiment e", "cuda:0"),
          "x.json": ("experiment f", "cuda:0")}


def _overlaps(*phases: Dated) -> set[tuple[str, int, str]]:
    return {(f.file, int(str(f.field).split("/")[2]), f.message.split(" while ")[1].split(" ran on ")[0])
            for f in runphases.overlap_findings(list(phases), DEVICE)}


@pytest.mark.parametrize("start,overlap", [(9.999, False), (9.998999, True), (10.0, False), (20.0, False)])
def test_runs_of_two_files_may_touch_within_a_millisecond(start: float, overlap: bool) -> None:
    found = _overlaps(dated("a.json", 0, "warm_forward", 1, 0.0, 10.0, 10.0),
                      dated("b.json", 0, "warm_forward", 1, start, start + 10.0, 10.0))
    both = {("b.json", 0, "warm_forward repeat 1 of a.json"), ("a.json", 0, "warm_forward repeat 1 of b.json")}
    assert found == (both if overlap else set())


def test_overlapping_runs_are_told_apart_by_file_name_in_its_case_and_by_device() -> None:
    assert _overlaps(dated("a.json", 0, "warm_forward", 1, 0.0, 10.0, 10.0),
                     dated("A.json", 0, "warm_forward", 1, 5.0, 15.0, 10.0)) != set()
    # another rental's device of the same name, or a file of no device: no overlap
    assert _overlaps(dated("a.json", 0, "warm_forward", 1, 0.0, 10.0, 10.0),
                     dated("x.json", 0, "warm_forward", 1, 5.0, 15.0, 10.0)) == set()
    assert _overlaps(dated("a.json", 0, "warm_forward", 1, 0.0, 10.0, 10.0),
                     dated("z.json", 0, "warm_forward", 1, 5.0, 15.0, 10.0)) == set()


def test_a_run_is_reported_against_the_run_ending_last() -> None:
    found = _overlaps(dated("a.json", 0, "warm_forward", 1, 0.0, 30.0, 30.0),
                      dated("b.json", 0, "warm_forward", 2, 1.0, 20.0, 19.0),
                      dated("c.json", 0, "warm_forward", 3, 10.0, 40.0, 30.0))
    assert ("c.json", 0, "warm_forward repeat 1 of a.json") in found
    assert ("c.json", 0, "warm_forward repeat 2 of b.json") not in found


@pytest.mark.parametrize("second_end", [10.0, 9.5])
def test_a_file_s_latest_run_is_the_one_ending_last(second_end: float) -> None:
    # a.json's second phase ends with the first (or just before it): the first stays the one b.json overlaps
    found = _overlaps(dated("a.json", 0, "warmup", None, 0.0, 10.0, 10.0),
                      dated("a.json", 1, "warm_forward", 1, 5.0, second_end, second_end - 5.0),
                      dated("b.json", 0, "warm_forward", 1, 8.0, 20.0, 12.0))
    assert found == {("b.json", 0, "warmup of a.json"), ("a.json", 0, "warm_forward repeat 1 of b.json")}


# ------------------------------------------------------------------------------------ the registered warm order


def example() -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    protocol = json.loads((EXAMPLE / "protocol.json").read_text("utf-8"))
    docs = {v["measurement"]: json.loads((EXAMPLE / v["measurement"]).read_text("utf-8"))
            for e in protocol["experiments"] for v in e["variants"]}
    return protocol, docs


ORDER = ["b1", "b4", "b8", "b4", "b8", "b1", "b8", "b1", "b4", "b1", "b4", "b8", "b4", "b8", "b1"]
RTX = "measurements/rtx4090-batch-{}.json"


def order_found(protocol: dict[str, Any], docs: dict[str, dict[str, Any]]) -> list[Finding]:
    found = runtimes.run_time_findings(Protocol.of(protocol), {k: MeasurementDoc.of(d) for k, d in docs.items()},
                                       "resultats-bruts.csv", [], [])
    return [f for f in found if f.code in ("run-order-not-registered", "drawn-sequence-missing")]


def warm(doc: dict[str, Any], repeat: int) -> dict[str, Any]:
    return next(p for p in doc["phases"] if p["phase"] == "warm_forward" and p["repeat"] == repeat)


def swap_starts(docs: dict[str, dict[str, Any]], a: tuple[str, int], b: tuple[str, int]) -> None:
    """Exchange two warm runs' times: the runs then started in the other order."""
    pa, pb = warm(docs[RTX.format(a[0])], a[1]), warm(docs[RTX.format(b[0])], b[1])
    for key in ("started_at", "ended_at"):
        pa[key], pb[key] = pb[key], pa[key]


def test_the_example_follows_its_rotation_and_its_drawn_sequence() -> None:
    protocol, docs = example()
    assert order_found(protocol, docs) == []
    protocol["experiments"][0].update(order="drawn", drawn_sequence=ORDER)
    assert order_found(protocol, docs) == []


@pytest.mark.parametrize("order", ["rotated", "drawn"])
def test_two_runs_swapped_leave_the_registered_order(order: str) -> None:
    protocol, docs = example()
    if order == "drawn":
        protocol["experiments"][0].update(order="drawn", drawn_sequence=ORDER)
    swap_starts(docs, ("b8", 2), ("b1", 2))  # round 2: b4, b1, b8 where b4, b8, b1 was due
    (found,) = order_found(protocol, docs)
    assert (found.code, found.field) == ("run-order-not-registered", "/experiments/0/order")
    assert found.message.endswith("run 5 is b1 2 where b8 2 was due")
    assert ("(every round runs each variant once and the first variant rotates)" in found.message) is (
        order == "rotated")
    assert ("(the runs follow the drawn sequence)" in found.message) is (order == "drawn")
    assert found.claimed == runorder._text([("b1", 1), ("b4", 1), ("b8", 1), ("b4", 2), ("b1", 2), ("b8", 2),
                                            *[(v, r) for v, r in zip(ORDER[6:], [3, 3, 3, 4, 4, 4, 5, 5, 5],
                                                                     strict=True)]])


def test_the_order_is_not_judged_while_one_warm_run_is_undated() -> None:
    protocol, docs = example()
    swap_starts(docs, ("b8", 2), ("b1", 2))
    for key in ("started_at", "ended_at"):
        del warm(docs[RTX.format("b4")], 3)[key]
    assert order_found(protocol, docs) == []


def test_a_variant_absent_from_the_first_round_keeps_its_place_in_the_rotation() -> None:
    protocol, docs = example()
    b8 = docs[RTX.format("b8")]
    b8["phases"].remove(warm(b8, 1))
    assert order_found(protocol, docs) == []


def test_a_cold_run_numbered_in_format_2_is_no_warm_run() -> None:
    protocol, docs = example()
    for variant in ("b1", "b4", "b8"):
        doc = docs[RTX.format(variant)]
        doc["schema_version"] = "2"
        next(p for p in doc["phases"] if p["phase"] == "cold_forward")["repeat"] = 1
    assert order_found(protocol, docs) == []
    swap_starts(docs, ("b8", 2), ("b1", 2))
    assert [f.code for f in order_found(protocol, docs)] == ["run-order-not-registered"]


def test_a_resumption_is_not_in_the_registered_order() -> None:
    protocol, docs = example()
    variants = protocol["experiments"][0]["variants"]
    variants.append({"id": "b8r", "value": 8, "measurement": "measurements/resumed.json",
                     "resume": {"of": "b8", "setting": "x"}})
    resumed = copy.deepcopy(docs[RTX.format("b8")])
    docs["measurements/resumed.json"] = resumed
    assert order_found(protocol, docs) == []


@pytest.mark.parametrize("sequence,problem", [
    (None, "registers order drawn without the drawn sequence"),
    ([], "registers order drawn without the drawn sequence"),
    (ORDER[:-1], "draws b1 4 time(s); the sequence names each variant of the experiment exactly runs_per_variant "
                 "(5) times"),
    ([*ORDER, "b9"], "draws b9 1 time(s); the sequence names each variant of the experiment exactly "
                     "runs_per_variant (5) times"),
])
def test_a_drawn_sequence_names_each_variant_runs_per_variant_times(sequence: list[str] | None,
                                                                      problem: str) -> None:
    protocol, docs = example()
    protocol["experiments"][0].update(order="drawn", drawn_sequence=sequence)
    (found,) = order_found(protocol, docs)
    assert found.code == "drawn-sequence-missing" and found.message == f"experiment 'rtx4090-batch' {problem}"
    assert found.field == ("/experiments/0/drawn_sequence" if sequence else "/experiments/0/order")


def _runs(n: int) -> list[tuple[str, int]]:
    return [("b1", r) for r in range(1, n + 1)]


def test_a_message_names_fifteen_runs_then_counts_them() -> None:
    assert runorder._text(_runs(15)) == ", ".join(f"b1 {r}" for r in range(1, 16))
    assert runorder._text(_runs(16)) == ", ".join(f"b1 {r}" for r in range(1, 16)) + ", ... (16 runs)"


@pytest.mark.parametrize("actual,expected,said", [
    ([("a", 1), ("b", 1), ("c", 1)], [("a", 1), ("c", 1), ("b", 1)], "run 2 is b 1 where c 1 was due"),
    ([("a", 1), ("b", 2)], [("a", 1)], "run 2 is b 2 where no run was due"),
    ([("a", 1)], [("a", 1), ("b", 2)], "run 2 is no run where b 2 was due"),
])
def test_the_departure_names_the_first_run_out_of_place(actual: list[tuple[str, int]],
                                                        expected: list[tuple[str, int]], said: str) -> None:
    assert runorder._departure(actual, expected) == said


def test_rotated_puts_a_variant_missing_from_the_first_round_after_those_in_it() -> None:
    runs = [("b4", 1), ("b1", 1), ("b1", 2), ("b8", 2), ("b4", 2)]
    assert runorder.rotated(runs, ["b1", "b4", "b8"]) == [("b4", 1), ("b1", 1), ("b1", 2), ("b8", 2), ("b4", 2)]


def test_drawn_counts_each_variant_s_draws_from_one() -> None:
    assert runorder.drawn([("b1", 1), ("b1", 2), ("b4", 1)], ["b4", "b1", "b1"]) == [("b4", 1), ("b1", 1), ("b1", 2)]
    assert runorder.drawn([("b1", 2)], ["b1", "b1"]) == [("b1", 2)]
