"""Issue 31 items 5-8 in units: outcomes as the notes write them, separation without spread, the driver; issue 47
item 4: each incident explained in notes."""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import EXAMPLE, GRID, REPO
from seed_rules import OK_NOTE, RTX, SETUPS, set_row
from seed_rules_outcomes import m_registered_exclusion

from generator.audit.check import check_campaign
from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.inputs.rows import GridRow
from generator.audit.load.readers.grid import row_outcome
from generator.audit.recompute.decision import model
from generator.audit.recompute.times import timing
from generator.core.jsonvalue import JsonValue

# Imported by each test (as `importlib.import_module`) so that, before these modules existed, each test failed
# on its own behaviour rather than the whole file on an import.


def _module(name: str) -> Any:
    return importlib.import_module(f"generator.audit.{name}")


@pytest.mark.parametrize("notes", ["outcome=Failed", "run; outcome=crashed; completed=3", "outcome=", "x outcome=OOM"])
def test_unknown_outcome_is_not_a_completed_run(notes: str) -> None:
    # `[a-z]+` used to skip "Failed" (read as no outcome at all: a completed run) and take "crashed" as a status
    outcome = row_outcome(notes)
    assert outcome.status != "ok", outcome
    attempts = _module("validate.registered")
    assert not outcome.known and not outcome.completed_run and not outcome.failed, outcome
    found = attempts.row_outcome_findings(outcome, None, 7, "grid.csv")
    assert [(f.code, f.line, f.field) for f in found] == [("unknown-outcome", 7, "notes")]


def test_exclusion_reads_its_cause() -> None:
    outcome = row_outcome("killed; outcome=excluded; cause=provider-maintenance; completed=12")
    attempts = _module("validate.registered")
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
    attempts = _module("recompute.evidence.attempts")
    sep = attempts.separation(a, b)
    assert sep.decides is False and "no spread" in sep.reason and sep.gap == pytest.approx(56.4)
    five = timing.phase_stats([95.3, 96.4, 97.0, 98.8, 96.0], 0), timing.phase_stats([39.9, 40.0, 40.5, 42.1, 40.1], 0)
    assert attempts.separation(*five) == timing.separation(*five)


@pytest.mark.parametrize(("driver", "runtime", "code"), [
    (None, "12.8", "driver-not-recorded"), ("  ", "12.8", "driver-not-recorded"),
    ("12.8", "12.8", "driver-is-runtime-version"), ("570.86.15", "12.8", None), ("580.159.04", None, None)])
def test_driver_row(driver: str | None, runtime: str | None, code: str | None) -> None:
    row = GridRow.of({"driver_version": driver, "runtime_version": runtime})
    found = _module("recompute.evidence.provenance").driver_row_findings(row, 4, "g.csv")
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
        provenance = _module("recompute.evidence.provenance")
        return [f.code for f in provenance.measurement_findings(protocol, {"m.json": doc})]

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


# Issue 47 item 4: an incident row explains itself in notes (error=, reason= or explanation=, in words).
@pytest.mark.parametrize(("notes", "found"), [
    ("outcome=oom; completed=408", True),  # the row: only what the machine reads
    (f"{OK_NOTE}; outcome=oom; completed=408", True),  # free text about the row is no explanation of the incident
    ("outcome=oom; completed=408; reason=x", False),  # one visible character is an explanation
    ("outcome=oom; completed=408; reason= x ", False),
    ("outcome=oom; completed=408; reason=   ", True),  # only blanks
    ("outcome=oom; completed=408; reason=\u00a0\u200b\ufeff", True),  # only characters that show nothing
    ("outcome=oom; completed=408; reason=;", True),
    ("outcome=oom; completed=408; myreason=memory", True),  # another key that ends in "reason" explains nothing
    ("outcome=failed; completed=3; error=process killed by the scheduler", False),
    ("outcome=aborted; completed=1000; explanation=the provider restarted the machine", False),
    ("outcome=excluded; cause=preemption", True),  # the registered cause names the rule, not what happened
    ("outcome=resumed; resumed=b8/warm/3", True),
    ("outcome=resumed; resumed=b8/warm/3; reason=resumed from the checkpoint after the node restart", False),
    (None, False), ("", False), (OK_NOTE, False), ("outcome=ok", False),  # an ok row needs nothing
    ("outcome=crashed", False),  # an unknown outcome is its own error (unknown-outcome), not an incident
])
def test_an_incident_explains_itself_in_notes(notes: str | None, found: bool) -> None:
    found_here = _module("validate.registered").incident_findings(row_outcome(notes), notes, 11, "resultats-bruts.csv")
    assert [(f.code, f.severity.value, f.file, f.line, f.field, f.value) for f in found_here] == \
        ([("incident-unexplained", "warning", "resultats-bruts.csv", 11, "notes", notes)] if found else [])


def test_an_unexplained_incident_names_its_row_in_check(tmp_path: Path) -> None:
    # the example's out-of-memory row reduced to outcome= and completed=: a warning naming the grid file, its line,
    # the field and the value as written; b8 stays inadmissible and b4 answers
    folder = tmp_path / "campaign"
    shutil.copytree(EXAMPLE, folder)
    line = set_row(folder, RTX, "b8", "warm", 3, notes="outcome=oom; completed=408")
    result = check_campaign(folder)
    found = [f for f in result.findings if f.code == "incident-unexplained"]
    assert [(f.file, f.line, f.field, f.claimed, f.configurations) for f in found] == \
        [(GRID, line, "notes", "outcome=oom; completed=408", ("rtx4090-batch/b8",))]
    assert [f for f in result.findings if f.is_error] == []
    assert result.decision["decision"]["answer"] == "rtx4090-batch/b4"
    # the example's own row says what happened (error=...): nothing to report
    assert not [f for f in check_campaign(EXAMPLE).findings if f.code == "incident-unexplained"]
