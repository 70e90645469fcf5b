"""Issue 31 items 1-3 where a mutation of the example does not fit: the registered order as pure functions, the
drawn sequence in the schema, the timer scope of a duration, and run times written with offsets."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
from conftest import REPO

from generator.audit.check import check_campaign
from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.recompute.times import runorder, runtimes

H200 = REPO / "inputs" / "h200-campaign"
EXAMPLE = REPO / "inputs" / "example"
GRID = "resultats-bruts.csv"
SCHEMAS = (REPO / "schemas" / "protocol.schema.json", REPO / "generator" / "schemas" / "protocol.schema.json")
# The example's RTX 4090 warm runs in the order they started (inputs/make_example.py rotates them).
EXAMPLE_ORDER = ["b1", "b4", "b8", "b4", "b8", "b1", "b8", "b1", "b4", "b1", "b4", "b8", "b4", "b8", "b1"]


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def h200() -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    protocol = load(H200 / "protocol.json")
    return protocol, {v["measurement"]: load(H200 / v["measurement"]) for v in protocol["experiments"][0]["variants"]}


def codes(protocol: dict[str, Any], docs: dict[str, dict[str, Any]]) -> list[str]:
    return sorted(f.code for f in runtimes.run_time_findings(Protocol.of(protocol),
                                                             {k: MeasurementDoc.of(d) for k, d in docs.items()},
                                                             GRID, [], []))


def order_codes(folder: Path) -> list[tuple[str, str | None]]:
    return sorted((f.code, f.field) for f in check_campaign(folder).findings
                  if f.code in ("run-order-not-registered", "drawn-sequence-missing"))


def copy_example(tmp_path: Path) -> Path:
    target = tmp_path / "example"
    shutil.copytree(EXAMPLE, target)
    return target


def edit_protocol(folder: Path, change: Any) -> None:
    protocol = load(folder / "protocol.json")
    change(protocol)
    (folder / "protocol.json").write_text(json.dumps(protocol, indent=2), encoding="utf-8")


# ------------------------------------------------------------------------------------------ the registered order


def test_rotated_shifts_the_first_round_by_one_each_round() -> None:
    runs = [(v, r) for r in (1, 2, 3) for v in ("b1", "b4", "b8")]
    assert runorder.rotated(runs, ["b1", "b4", "b8"]) == [
        ("b1", 1), ("b4", 1), ("b8", 1), ("b4", 2), ("b8", 2), ("b1", 2), ("b8", 3), ("b1", 3), ("b4", 3)]
    # a variant whose runs stopped (an out-of-memory failure ends its series) leaves its place empty
    assert runorder.rotated([("b1", 1), ("b4", 1), ("b4", 2), ("b1", 2)], ["b1", "b4"]) == [
        ("b1", 1), ("b4", 1), ("b4", 2), ("b1", 2)]


def test_drawn_gives_the_kth_draw_of_a_variant_its_kth_run() -> None:
    runs = [("b4", 1), ("b1", 1), ("b1", 2), ("b4", 2)]
    assert runorder.drawn(runs, ["b4", "b1", "b1", "b4"]) == runs
    assert runorder.drawn(runs, ["b1", "b4", "b4", "b1"]) == [("b1", 1), ("b4", 1), ("b4", 2), ("b1", 2)]


def test_the_schema_takes_a_drawn_sequence_in_both_copies() -> None:
    protocol = load(EXAMPLE / "protocol.json")
    protocol["experiments"][0].update(order="drawn", drawn_sequence=EXAMPLE_ORDER)
    for path in SCHEMAS:
        schema = load(path)
        assert "drawn_sequence" in schema["$defs"]["experiment"]["properties"]
        jsonschema.Draft202012Validator(schema).validate(protocol)


def test_runs_that_follow_their_drawn_sequence_are_clean(tmp_path: Path) -> None:
    folder = copy_example(tmp_path)
    edit_protocol(folder, lambda p: p["experiments"][0].update(order="drawn", drawn_sequence=EXAMPLE_ORDER))
    result = check_campaign(folder)
    assert [f for f in result.findings if f.is_error] == []
    assert result.decision["decision"]["answer"] == "rtx4090-batch/b4"


def test_runs_that_leave_their_drawn_sequence_are_an_error_on_the_experiment(tmp_path: Path) -> None:
    folder = copy_example(tmp_path)
    other = ["b4", "b1", "b8"] + EXAMPLE_ORDER[3:]
    edit_protocol(folder, lambda p: p["experiments"][0].update(order="drawn", drawn_sequence=other))
    result = check_campaign(folder)
    found = [f for f in result.findings if f.code == "run-order-not-registered"]
    assert [(f.file, f.field) for f in found] == [("protocol.json", "/experiments/0/order")]
    assert "run 1 is b1 1 where b4 1 was due" in found[0].message
    assert set(found[0].configurations) == {"rtx4090-batch/b1", "rtx4090-batch/b4", "rtx4090-batch/b8"}
    assert result.decision["decision"]["answer"] not in found[0].configurations


def test_a_drawn_sequence_must_name_each_variant_runs_per_variant_times(tmp_path: Path) -> None:
    folder = copy_example(tmp_path)
    edit_protocol(folder, lambda p: p["experiments"][0].update(order="drawn", drawn_sequence=EXAMPLE_ORDER[:-1]))
    assert order_codes(folder) == [("drawn-sequence-missing", "/experiments/0/drawn_sequence")]


def test_the_order_is_not_judged_without_every_warm_run_dated() -> None:
    protocol, docs = h200()
    for doc in docs.values():
        for p in doc["phases"]:
            del p["started_at"], p["ended_at"]
    assert codes(protocol, docs) == ["no-run-times"] + ["run-times-missing"] * len(docs)


# ------------------------------------------------------------------------------------- the timer scope of durations


def test_a_timer_of_the_forward_pass_alone_is_bounded_by_its_own_bracket(tmp_path: Path) -> None:
    # The example's grid durations are 1.25 times its measured forward passes (reading and tokenising on the
    # host). A timer registered as covering only transfer and inference has nowhere to put the difference.
    folder = copy_example(tmp_path)
    edit_protocol(folder, lambda p: p["timer"].update(covers=["transfer", "inference"]))
    found = [f for f in check_campaign(folder).findings if f.code == "duration-beyond-bracket"]
    assert len(found) == 35  # every completed run of both experiments (one of the 36 ran out of memory)
    assert all(f.file == GRID and f.field == "elapsed_seconds" and f.is_error for f in found)


def test_the_grid_of_the_h200_campaign_is_its_measurement_to_the_microsecond(tmp_path: Path) -> None:
    # The runner writes each duration rounded to six decimals: the rounding is no cut.
    result = check_campaign(H200)
    assert not [f for f in result.findings if f.code.startswith("duration-")]


# ------------------------------------------------------------------------------------- run times with offsets


def _in_offset(stamp: str, hours: int) -> str:
    moment = runtimes.parse_utc(stamp)
    assert moment is not None
    from datetime import timedelta, timezone

    return moment.astimezone(timezone(timedelta(hours=hours))).isoformat(timespec="microseconds")


def test_run_times_with_offsets_are_compared_as_instants() -> None:
    protocol, docs = h200()
    shifted = copy.deepcopy(docs)
    for doc in shifted.values():
        for p in doc["phases"]:
            p["started_at"], p["ended_at"] = _in_offset(p["started_at"], 2), _in_offset(p["ended_at"], -5)
    assert shifted["measurements/h200-batch-b1.json"]["phases"][0]["started_at"].endswith("+02:00")
    assert codes(protocol, shifted) == codes(protocol, docs) == []
    # 09:41:00+00:00 written as 11:41:00+02:00 sorts after the window's 09:42 as text; as an instant it is before
    shifted["measurements/h200-batch-b1.json"]["phases"][0]["started_at"] = "2026-12-01T11:41:00.000000+02:00"
    assert codes(protocol, shifted) == ["run-before-registration", "run-outside-window"]


def test_registration_with_an_offset_is_an_instant() -> None:
    protocol, docs = h200()
    first = min(runtimes.parse_utc(p["started_at"]) for d in docs.values() for p in d["phases"])  # type: ignore[type-var]
    assert first is not None
    protocol["registered_at"] = _in_offset(first.isoformat().replace("+00:00", "Z"), 2)  # the first run's instant
    assert "run-before-registration" in codes(protocol, docs)
    protocol["registered_at"] = "2026-12-01T11:41:00+02:00"  # 09:41Z: before the runs, after them as text
    assert "run-before-registration" not in codes(protocol, docs)


def test_runs_that_touch_do_not_overlap() -> None:
    protocol, docs = h200()
    b1, b4 = docs["measurements/h200-batch-b1.json"], docs["measurements/h200-batch-b4.json"]
    warm1 = next(p for p in b4["phases"] if p["phase"] == "warm_forward" and p["repeat"] == 1)
    before = next(p for p in b1["phases"] if p["phase"] == "warm_forward" and p["repeat"] == 1)
    before["ended_at"] = warm1["started_at"]  # b1's run 1 ends on the instant b4's begins
    assert codes(protocol, docs) == []
    warm1["started_at"] = _in_offset(before["started_at"], 3)  # the same instant as b1's start, another offset
    assert "runs-overlap" in codes(protocol, docs)


# ------------------------------------------------------------------------------- issue 47: the order registered


def test_an_experiment_without_its_order_is_an_error_naming_it_and_the_field(tmp_path: Path) -> None:
    # the example's B200 runs are rotated, yet without a registered order nothing says they had to be
    from generator.audit.validate.validate import validate_campaign

    folder = copy_example(tmp_path)
    edit_protocol(folder, lambda p: p["experiments"][1].pop("order"))
    found = [f for f in validate_campaign(folder).findings if f.is_error]
    where = [(f.code, f.file, f.field) for f in found]
    assert where == [("run-order-missing", "protocol.json", "/experiments/1/order")]
    assert "'b200-batch'" in found[0].message and "None" not in found[0].message
    assert '"order": "rotated"' in (found[0].fix or "") and "drawn_sequence" in (found[0].fix or "")


def test_every_committed_campaign_registers_its_order() -> None:
    for name in ("example", "h200-campaign", "minilm-campaign"):
        protocol = load(REPO / "inputs" / name / "protocol.json")
        assert all(e.get("order") in ("rotated", "drawn") for e in protocol["experiments"]), name
