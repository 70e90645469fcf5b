"""Issue 47 item 1: measured evidence is required for an answer. A configuration that can be the answer, or that it
is compared with, rests on a measurement of its own runs with dated phases, each grid row tied to a measured
phase; missing evidence is an error on that configuration, missing everywhere withholds the answer."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from conftest import GRID, read_grid, write_grid
from seed_rules import RTX, edit_json, edit_protocol, index_of, line_of, meas, pred, set_rows

from generator.audit.check import check_campaign
from generator.audit.recompute.decision.gate import UNMEASURED_REASON

B1, B4, B8 = f"{RTX}/b1", f"{RTX}/b4", f"{RTX}/b8"


def _unlink(folder: Path, *variants: tuple[int, int]) -> None:
    """Remove the protocol's link to these variants' measurements (all of them when none is named)."""
    def change(p: Any) -> None:
        for i, exp in enumerate(p["experiments"]):
            for j, v in enumerate(exp["variants"]):
                if not variants or (i, j) in variants:
                    v.pop("measurement", None)

    edit_protocol(folder, change)


def _decision(folder: Path) -> tuple[dict[str, Any], list[Any]]:
    result = check_campaign(folder)
    return result.decision["decision"], result.findings


def _config(folder: Path, config: str) -> dict[str, Any]:
    return next(c for c in check_campaign(folder).decision["configurations"] if c["id"] == config)


def test_no_measurement_at_all_withholds_the_answer_with_one_plain_reason(campaign: Path) -> None:
    # measurements/ deleted and the protocol's links to it removed: once two warnings and an answer
    shutil.rmtree(campaign / "measurements")
    _unlink(campaign)
    decision, findings = _decision(campaign)
    assert decision["answer"] is None and decision["status"] == "withheld"
    assert decision["reason"] == UNMEASURED_REASON
    assert "gpu-audit campaign run" in decision["fix"] and "mesure_memoire.py measure" in decision["fix"]
    unlinked = [f for f in findings if f.code == "measurement-not-linked"]
    assert len(unlinked) == 6 and all(f.is_error for f in unlinked)
    assert unlinked[0].field == "/experiments/0/variants/0/measurement"
    assert "no variant of the campaign does" in unlinked[0].message
    assert "`gpu-audit measure run`" in str(unlinked[0].fix)
    # check still reports everything it can: the typed durations, each configuration's own verdicts
    typed = {f.configurations for f in findings if f.code == "duration-unmeasured"}
    assert len(typed) == 6 and all(f.is_error for f in findings if f.code == "duration-unmeasured")
    assert {e["configuration"] for e in decision["excluded"]} == {f"{e}/{v}" for e in (RTX, "b200-batch")
                                                                 for v in ("b1", "b4", "b8")}


def test_durations_typed_by_hand_do_not_decide_the_tie(campaign: Path) -> None:
    # b1's durations typed as 20 s, nothing measured: b1 once won the b1/b4 budget tie on them
    shutil.rmtree(campaign / "measurements")
    _unlink(campaign)
    set_rows(campaign, RTX, "b1", elapsed_seconds="20")
    decision, _ = _decision(campaign)
    assert decision["answer"] is None and decision["reason"] == UNMEASURED_REASON


def _oom_replaced_by_copied_success(folder: Path) -> None:
    """b8's out-of-memory warm run 3 replaced by a copy of its successful warm run 1 (row and predictions)."""
    rows = read_grid(folder)
    h = rows[0]
    copy = list(rows[index_of(folder, RTX, "b8", "warm", 1)])
    copy[h.index("run_index")] = "3"
    rows[index_of(folder, RTX, "b8", "warm", 3)] = copy
    write_grid(folder, rows)
    shutil.copyfile(folder / pred(RTX, "b8", "warm", 1), folder / pred(RTX, "b8", "warm", 3))


def test_one_configuration_unmeasured_beside_measured_ones_is_an_error_on_it(campaign: Path) -> None:
    # b8's measurement unlinked and deleted, its out-of-memory run replaced by a copied success: b8, the fastest
    # at the same budget, would be the answer on the grid alone
    _unlink(campaign, (0, 2))
    (campaign / meas(RTX, "b8")).unlink()
    _oom_replaced_by_copied_success(campaign)
    decision, findings = _decision(campaign)
    mine = [f for f in findings if f.code == "measurement-not-linked"]
    assert [(f.field, f.configurations, f.is_error) for f in mine] == [
        ("/experiments/0/variants/2/measurement", (B8,), True)]
    assert "while the campaign's other variants do" in mine[0].message
    assert decision["answer"] == B4 and decision["status"] == "answered"
    b8 = next(c for c in check_campaign(campaign).decision["configurations"] if c["id"] == B8)
    assert b8["admissible"] is False and any("measurement-not-linked" in r for r in b8["reasons"])


def test_a_grid_row_not_tied_to_a_measured_phase_is_an_error(campaign: Path) -> None:
    # b4's measurement keeps no warm_forward repeat 2: its row's duration rests on nothing measured
    edit_json(campaign, meas(RTX, "b4"), lambda d: d.update(
        phases=[p for p in d["phases"] if not (p["phase"] == "warm_forward" and p.get("repeat") == 2)]))
    decision, findings = _decision(campaign)
    mine = [f for f in findings if f.code == "duration-unmeasured"]
    assert [(f.file, f.line, f.field, f.configurations) for f in mine] == [
        (GRID, line_of(campaign, RTX, "b4", "warm", 2), "elapsed_seconds", (B4,))]
    assert mine[0].is_error and "has no measured phase with a duration for warm run 2" in mine[0].message
    assert decision["answer"] != B4


def _lab_output(doc: dict[str, Any]) -> None:
    """b4's file rewritten as the Lab's `mesure_memoire.py measure` writes it (004 §3): environment, configuration,
    synthetic_model and phases, no format version, no dates, the driver unseen."""
    for key in [k for k in doc if k not in ("environment", "configuration", "phases")]:
        del doc[key]
    doc["environment"]["driver_version"] = None
    doc["synthetic_model"] = {"architecture": "Linear(64, 256) -> GELU -> Linear(256, 64)", "parameter_count": 33088}
    for phase in doc["phases"]:
        phase.pop("started_at", None)
        phase.pop("ended_at", None)


def test_the_labs_output_linked_as_a_measurement_says_what_it_lacks(campaign: Path) -> None:
    edit_json(campaign, meas(RTX, "b4"), _lab_output)
    decision, findings = _decision(campaign)
    mine = [f for f in findings if f.code == "lab-measurement-unreadable"]
    assert [(f.file, f.field, f.configurations, f.is_error) for f in mine] == [(meas(RTX, "b4"), "/", (B4,), True)]
    message = mine[0].message
    for lacks in ('schema_version "1"', "it measured the Lab's synthetic MLP", "started_at and ended_at on its "
                  "phases (9 of 9 undated)", "environment.driver_version"):
        assert lacks in message, message
    assert "`gpu-audit measure run`" in str(mine[0].fix)
    assert decision["answer"] != B4 and not _config(campaign, B4)["admissible"]


def test_blank_environment_and_memory_cells_beside_a_measurement_are_errors(campaign: Path) -> None:
    # GPU model, GPU count, software versions and memory left blank: the measurement observed every one of them
    blank = dict.fromkeys(("gpu_model", "gpu_count", "python_version", "torch_version", "runtime_version",
                           "peak_allocated_bytes"), "")
    line = set_rows(campaign, RTX, "b4", **blank)[0]
    decision, findings = _decision(campaign)
    mine = sorted((f.code, f.field) for f in findings if f.line == line and f.file == GRID)
    assert mine == [("environment-not-seen", "python_version"), ("environment-not-seen", "runtime_version"),
                    ("environment-not-seen", "torch_version"), ("gpu-count-not-seen", "gpu_count"),
                    ("gpu-model-not-seen", "gpu_model"), ("memory-disagrees", "peak_allocated_bytes")], mine
    said = next(f for f in findings if f.line == line and f.field == "gpu_model")
    assert said.is_error and "gpu_model is empty where the runtime reported NVIDIA GeForce RTX 4090" in said.message
    assert decision["answer"] != B4
