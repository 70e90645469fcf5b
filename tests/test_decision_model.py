"""The typed decision: its records mirror decision.schema.json, round-trip losslessly and keep decision.json's bytes."""

from __future__ import annotations

import hashlib
import json
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import EXAMPLE, REPO, read_grid, write_grid

from generator.audit.check import check_campaign
from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.recompute.decision import model
from generator.audit.recompute.decision.gate import UNMEASURED_REASON, decide
from generator.core.jsonrecord import from_json_value, to_json_value
from generator.core.system.resources import schemas_dir

H200 = REPO / "inputs" / "h200-campaign"

# SHA-256 of the recomputed parts (window, experiments, configurations, decision) of inputs/example's
# decision.json, canonical JSON. It pins what recompute and the gate produce: a change here is a change of the
# decision, to be made on purpose (regenerate with _recomputed_digest(check_campaign(EXAMPLE).decision)).
# Last changed on purpose by issue 50: the example's experiment descriptions name each GPU by its model.
EXAMPLE_RECOMPUTED_SHA256 = "d52946e5a3cc86bbba154eb71c96d73a170f279ffff00365a579d8d2abdb3365"


def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((schemas_dir() / "decision.schema.json").read_text(encoding="utf-8"))
    return schema


def _as_written(decision: dict[str, Any]) -> bytes:
    """decision.json's bytes, as `gpu-audit check --out` writes them."""
    return (json.dumps(decision, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def _recomputed_digest(decision: dict[str, Any]) -> str:
    part = {k: decision[k] for k in ("window", "experiments", "configurations", "decision")}
    text = json.dumps(part, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _names(node: dict[str, Any]) -> set[str]:
    return set(node.get("required", ())) | set(node.get("properties", {}))


def _fields(cls: type) -> set[str]:
    return {f.name for f in fields(cls)}


def _oom_deleted(campaign: Path) -> Path:
    """The gate's planted defect: b8's out-of-memory row and its file deleted, so its evidence has an error."""
    rows = read_grid(campaign)
    head = rows[0]
    (oom,) = [i for i, r in enumerate(rows) if i and r[head.index("variant_id")] == "b8"
              and r[head.index("phase")] == "warm" and "outcome=oom" in r[-1]]
    index = rows[oom][head.index("run_index")]
    write_grid(campaign, [r for i, r in enumerate(rows) if i != oom])
    (campaign / "predictions" / "rtx4090-batch" / "b8" / f"warm-{index}.csv").unlink()
    return campaign


def _round_trip(decision: dict[str, Any]) -> None:
    doc = model.DecisionDocument.from_json_dict(decision)
    again = doc.to_json_dict()
    assert again == decision
    # Same keys in the same order too (a reader iterating a part sees what it saw before), and the same bytes.
    assert json.dumps(again, ensure_ascii=False) == json.dumps(decision, ensure_ascii=False)
    assert _as_written(again) == _as_written(decision)
    jsonschema.validate(again, _schema())


@pytest.mark.parametrize("folder", [EXAMPLE, H200], ids=["example", "h200"])
def test_published_campaigns_round_trip(folder: Path) -> None:
    _round_trip(check_campaign(folder).decision)


def test_planted_defects_round_trip(campaign: Path) -> None:
    decision = check_campaign(_oom_deleted(campaign)).decision
    assert any(c["evidence"]["errors"] for c in decision["configurations"])
    _round_trip(decision)


def test_an_unreadable_campaign_round_trips(campaign: Path) -> None:
    (campaign / "protocol.json").write_text("{not json", encoding="utf-8")
    decision = check_campaign(campaign).decision
    assert decision["decision"]["status"] == "withheld" and decision["campaign"] is None
    _round_trip(decision)


def test_the_example_decision_is_unchanged() -> None:
    assert _recomputed_digest(check_campaign(EXAMPLE).decision) == EXAMPLE_RECOMPUTED_SHA256


def test_a_key_without_a_field_is_refused() -> None:
    decision = check_campaign(H200).decision
    decision["configurations"][0]["new_key"] = 1
    with pytest.raises(ValueError, match="Configuration has no field for new_key"):
        model.DecisionDocument.from_json_dict(decision)


def test_every_schema_property_has_a_field() -> None:
    schema = _schema()
    top, defs = schema["properties"], schema["$defs"]
    configuration = defs["configuration"]["properties"]
    # Records whose schema names every key: their fields are exactly the schema's properties.
    exact: list[tuple[dict[str, Any], type]] = [
        (schema, model.DecisionDocument), (defs["configuration"], model.Configuration),
        (top["decision"], model.Decision), (defs["finding_ref"], model.FindingRef),
        (defs["rank_entry"], model.RankEntry), (defs["timing"], model.PhaseTiming),
        (configuration["timing"], model.Timing), (configuration["evidence"], model.Evidence),
        (configuration["cost_per_accepted_result"], model.CostPerResult), (top["window"], model.Window),
        (top["campaign"], model.CampaignSummary), (top["rule"], model.QualityRule), (top["tool"], model.Tool),
        (top["inputs"]["items"], model.InputFingerprint), (defs["finding"], Finding),
        (top["window"]["properties"]["packages"]["items"], model.PackageCover),
        (top["decision"]["properties"]["unpriced"]["items"], model.Unpriced),
        (top["decision"]["properties"]["excluded"]["items"], model.Excluded),
        (top["decision"]["properties"]["ties"]["items"], model.Tie),
    ]
    for node, cls in exact:
        missing = _names(node) - _fields(cls)
        assert not missing, f"{cls.__name__} lacks a field for {sorted(missing)}"
    # Findings carry `extra` beside the schema's keys; the others are the schema's exactly.
    for node, cls in exact:
        extra = _fields(cls) - _names(node) - ({"extra"} if cls is Finding else set())
        assert not extra, f"{cls.__name__} has fields the schema does not name: {sorted(extra)}"
    # Experiments and runs hold more than the schema requires (what the protocol registered, completed items).
    assert _names(top["experiments"]["items"]) <= _fields(model.Experiment)
    assert _names(configuration["runs"]["items"]) <= _fields(model.Run)


def test_a_finding_serialises_as_its_own_record() -> None:
    f = make_finding("no-tariff", Severity.WARNING, "f.csv", "message", line=3, field="c", claimed=1, recomputed=2,
                     extra={"k": [1]}, configurations=("e/v",))
    assert to_json_value(f) == f.to_dict()
    assert from_json_value(Finding, f.to_dict()) == f


# A measurement with one dated phase: the gate answers only from configurations whose runs were measured.
_MEASURED = model.Measurement(file="m.json", environment={}, configuration={}, synthetic_data=False,
                              phases=[{"phase": "cold_forward", "started_at": "2026-10-05T07:00:00.000000Z",
                                       "ended_at": "2026-10-05T07:01:00.000000Z"}])


def _config(cid: str, *, budget: int | None, warm: tuple[float, ...], admissible: bool = True,
            price_status: str | None = "published") -> model.Configuration:
    stats = model.PhaseTiming(durations=warm, successes=len(warm), failures=0, median=sorted(warm)[len(warm) // 2],
                              min=min(warm), max=max(warm), p95=None, tail_note="few")
    return model.Configuration(
        id=cid, experiment_id=cid.split("/")[0], variant_id=cid.split("/")[1], variable="batch", value=1, gpu="g",
        environment=model.EnvironmentCells(*[None] * 10), measurement=_MEASURED, runs=(),
        timing=model.Timing(warm=stats, cold=stats), attempts=1,
        completed=1, failures=0, out_of_memory=0, accepted_runs=1, accepted_unique_corpora=1, accepted=True,
        memory_feasible=True, fits_window=True, fits_deadline=True, admissible=admissible,
        reasons=() if admissible else ("not accepted",), committed_budget_usd_minor=budget,
        price_status=price_status, duration_days=7,
        cost_per_accepted_result=model.CostPerResult(None, "no tariff for this GPU and duration"))


def test_decide_gives_evidence_and_excludes_configurations_with_errors() -> None:
    configs = [_config("e/a", budget=100, warm=(5.0, 5.1, 5.2)), _config("e/b", budget=100, warm=(9.0, 9.1, 9.2)),
               _config("e/c", budget=50, warm=(1.0,), admissible=False), _config("e/d", budget=None, warm=(2.0,))]
    error = make_finding("variant-value-mismatch", Severity.ERROR, "grid.csv", "bad", line=4, field="batch",
                         configurations=("e/b",))
    gated, decision = decide(configs, [error])
    assert decision.answer == "e/a" and decision.status == "answered"
    assert [e.configuration for e in decision.excluded] == ["e/b", "e/c"]
    assert gated[1].evidence is not None and gated[1].evidence.errors[0].where() == \
        "variant-value-mismatch at grid.csv:4 (batch)"
    assert "evidence" not in configs[0].to_json_dict()  # the key appears once findings are attributed
    assert "evidence" in gated[0].to_json_dict()
    schema = _schema()
    jsonschema.validate(decision.to_json_dict(), {**schema["properties"]["decision"], "$defs": schema["$defs"]})


def test_decide_withholds_the_answer_when_no_configuration_was_measured() -> None:
    # issue 47 item 1: one measured configuration answers; none (or none with a dated phase) is one plain reason
    undated = replace(_MEASURED, phases=[{"phase": "cold_forward"}])
    configs = [replace(_config("e/a", budget=100, warm=(5.0,)), measurement=None),
               replace(_config("e/b", budget=50, warm=(9.0,)), measurement=undated)]
    _, decision = decide(configs, [])
    assert (decision.answer, decision.status, decision.reason) == (None, "withheld", UNMEASURED_REASON)
    assert "gpu-audit measure run" in str(decision.fix)
    _, decision = decide([configs[0], _config("e/b", budget=50, warm=(9.0,))], [])
    assert decision.answer == "e/b"
