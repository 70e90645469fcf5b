"""A measurement's phases in the Lab's order even when one failed, and an input order held fixed is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generator.audit.check import check_campaign

B4, B8 = "measurements/rtx4090-batch-b4.json", "measurements/rtx4090-batch-b8.json"


def _edit(folder: Path, rel: str, change: Any) -> None:
    path = folder / rel
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")


def _codes(folder: Path, file: str) -> set[str]:
    return {f.code for f in check_campaign(folder).findings if f.file == file and f.is_error}


def _failed_download(doc: Any) -> None:
    load = doc["phases"][0]
    doc["phases"].insert(0, {**load, "phase": "download", "status": "failed", "error": "mirror unreachable",
                             "elapsed_seconds": None, "started_at": load["started_at"], "ended_at": load["started_at"]})


def test_a_failed_set_up_step_does_not_hide_a_missing_warm_up(campaign: Path) -> None:
    def change(doc: Any) -> None:
        _failed_download(doc)
        doc["phases"] = [p for p in doc["phases"] if p["phase"] != "warmup"]
    _edit(campaign, B4, change)
    assert "phase-order" in _codes(campaign, B4)


def test_a_record_with_a_failure_still_has_each_set_up_step_once(campaign: Path) -> None:
    # b8 has its out-of-memory warm run; a compile phase written twice is still out of order.
    def change(doc: Any) -> None:
        load = next(p for p in doc["phases"] if p["phase"] == "model_load")
        compile_ = {**load, "phase": "compile", "started_at": load["ended_at"], "ended_at": load["ended_at"]}
        at = doc["phases"].index(load) + 1
        doc["phases"][at:at] = [compile_, dict(compile_)]
    _edit(campaign, B8, change)
    assert "phase-order" in _codes(campaign, B8)


def test_a_record_ended_by_a_failed_load_is_in_order(campaign: Path) -> None:
    # The load failed: nothing came after it, and what is there is the start of the Lab's order.
    def change(doc: Any) -> None:
        doc["phases"] = [{**doc["phases"][0], "status": "failed", "error": "out of memory while loading",
                          "elapsed_seconds": None, "final_allocated_bytes": None}]
    _edit(campaign, B4, change)
    assert "phase-order" not in _codes(campaign, B4)


def test_two_input_orders_that_read_the_same_are_one_variant(campaign: Path) -> None:
    # The measurement's order is compared case and spacing aside: two variants written so are not two orders.
    def declare(p: Any) -> None:
        exp = p["experiments"][0]
        exp["variable"], exp["fixed"]["input_order"] = "input_order", None
        exp["variants"][0]["value"], exp["variants"][1]["value"] = "grouped by length", "Grouped  by length"
        exp["variants"][2]["value"] = "expected-ids.csv order"
    _edit(campaign, "protocol.json", declare)
    assert "duplicate-variant-value" in _codes(campaign, "protocol.json")


def test_an_input_order_held_fixed_is_written(campaign: Path) -> None:
    # Only an experiment whose declared variable is input_order leaves fixed.input_order null.
    _edit(campaign, "protocol.json", lambda p: p["experiments"][0]["fixed"].update(input_order=None))
    findings = [f for f in check_campaign(campaign).findings if f.file == "protocol.json" and f.is_error]
    assert any(f.code == "schema-violation" and "input_order" in (f.field or "") for f in findings), findings
