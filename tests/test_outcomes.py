"""Issue 31 items 5-8 in units: outcomes as the notes write them, separation without spread, the driver."""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import EXAMPLE, REPO
from seed_rules import SETUPS
from seed_rules_outcomes import m_registered_exclusion

from generator.audit.check import check_campaign
from generator.audit.inputs.measurement import MeasurementDoc
from generator.audit.inputs.protocol import Protocol
from generator.audit.inputs.rows import GridRow
from generator.audit.readers.grid import row_outcome
from generator.audit.recompute import model, timing
from generator.core.jsonvalue import JsonValue

# Imported by each test (as `importlib.import_module`) so that, before these modules existed, each test failed
# on its own behaviour rather than the whole file on an import.


def _module(name: str) -> Any:
    return importlib.import_module(f"generator.audit.recompute.{name}")


@pytest.mark.parametrize("notes", ["outcome=Failed", "run; outcome=crashed; completed=3", "outcome=", "x outcome=OOM"])
def test_unknown_outcome_is_not_a_completed_run(notes: str) -> None:
    # `[a-z]+` used to skip "Failed" (read as no outcome at all: a completed run) and take "crashed" as a status
    outcome = row_outcome(notes)
    assert outcome.status != "ok", outcome
    attempts = _module("attempts")
    assert not outcome.known and not outcome.completed_run and not outcome.failed, outcome
    found = attempts.row_outcome_findings(outcome, None, 7, "grid.csv")
    assert [(f.code, f.line, f.field) for f in found] == [("unknown-outcome", 7, "notes")]


def test_exclusion_reads_its_cause() -> None:
    outcome = row_outcome("killed; outcome=excluded; cause=provider-maintenance; completed=12")
    attempts = _module("attempts")
    assert outcome.excluded and not outcome.failed and not outcome.completed_run
    assert (outcome.cause, outcome.completed) == ("provider-maintenance", 12)
    example = json.loads((EXAMPLE / "protocol.json").read_text(encoding="utf-8"))
    registered = Protocol.of({**example, "exclusions": [{"cause": "provider-maintenance",
                                                         "description": "announced maintenance"}]})
    assert attempts.row_outcome_findings(outcome, registered, 3, "g.csv") == []
    assert [f.code for f in attempts.row_outcome_findings(outcome, None, 3, "g.csv")] == ["exclusion-not-registered"]
    bare = row_outcome("outcome=excluded")
    assert [f.code for f in attempts.row_outcome_findings(bare, registered, 3, "g.csv")] == ["exclusion-not-registered"]


def test_one_run_each_never_separates() -> None:
    # one run each: no spread, so the gap alone never "separates them" (timing.separation alone said it does)
    a, b = timing.phase_stats([96.4], 0), timing.phase_stats([40.0], 0)
    assert timing.separation(a, b).decides is True
    attempts = _module("attempts")
    sep = attempts.separation(a, b)
    assert sep.decides is False and "no spread" in sep.reason and sep.gap == pytest.approx(56.4)
    five = timing.phase_stats([95.3, 96.4, 97.0, 98.8, 96.0], 0), timing.phase_stats([39.9, 40.0, 40.5, 42.1, 40.1], 0)
    assert attempts.separation(*five) == timing.separation(*five)


@pytest.mark.parametrize(("driver", "runtime", "code"), [
    (None, "12.8", "driver-not-recorded"), ("  ", "12.8", "driver-not-recorded"),
    ("12.8", "12.8", "driver-is-runtime-version"), ("570.86.15", "12.8", None), ("580.159.04", None, None)])
def test_driver_row(driver: str | None, runtime: str | None, code: str | None) -> None:
    row = GridRow.of({"driver_version": driver, "runtime_version": runtime})
    found = _module("provenance").driver_row_findings(row, 4, "g.csv")
    assert [f.code for f in found] == ([code] if code else [])


def test_measurement_driver_may_be_unrecorded_never_copied() -> None:
    example = json.loads((EXAMPLE / "protocol.json").read_text(encoding="utf-8"))
    exp = {**example["experiments"][0], "id": "e", "variants": [{"id": "v", "value": 1, "measurement": "m.json"}]}
    protocol = Protocol.of({**example, "synthetic_data": False, "experiments": [exp]})

    def codes(env: dict[str, JsonValue]) -> list[str]:
        doc = MeasurementDoc.of({
            "schema_version": "1", "synthetic_data": False, "model": {"name": "m"},
            "environment": {"python_version": "3.11", "device": "cuda:0", "gpu_available": True, **env},
            "configuration": {"device": "cuda:0", "batch": 1, "dtype": "float32", "warmup": 0, "repeats": 1},
            "phases": []})
        return [f.code for f in _module("provenance").measurement_findings(protocol, {"m.json": doc})]

    assert codes({"driver_version": None, "runtime_version": "13.0"}) == []  # the Lab's script cannot see it
    assert codes({"driver_version": "", "runtime_version": "13.0"}) == ["driver-not-recorded"]
    assert codes({"driver_version": "13.0", "runtime_version": "13.0"}) == ["driver-is-runtime-version"]


def test_decision_lists_the_exclusion_and_reads_back(tmp_path: Path) -> None:
    # the b8 run 3 killed by the scheduler, an outside cause registered before the runs: set aside, and listed
    folder = tmp_path / "campaign"
    shutil.copytree(EXAMPLE, folder)
    prepare = SETUPS["b8-failed"][0]
    assert prepare is not None
    prepare(folder)
    m_registered_exclusion(folder)
    decision = check_campaign(folder).decision
    assert decision["decision"].get("exclusions") == [{"configuration": "rtx4090-batch/b8", "line": 11,
                                                       "phase": "warm", "run_index": 3, "cause": "preemption"}]
    schema = json.loads((REPO / "schemas" / "decision.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(decision)
    assert model.DecisionDocument.from_json_dict(decision).to_json_dict() == decision
    # the clean example excludes nothing, and its decision.json has no exclusions key: it reads as before
    assert "exclusions" not in check_campaign(EXAMPLE).decision["decision"]
