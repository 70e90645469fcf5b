"""One answer, one kind of work: the rule across experiments, at its edges (issue 31, item 4)."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

from conftest import EXAMPLE, GRID

from generator.audit.check import check_campaign
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.inputs.rows import GridRow
from generator.audit.recompute.evidence import samework

PROTOCOL: dict[str, Any] = json.loads((EXAMPLE / "protocol.json").read_text(encoding="utf-8"))


def _protocol() -> dict[str, Any]:
    return copy.deepcopy(PROTOCOL)


def _rows(exp: str, **cells: Any) -> list[GridRow]:
    return [GridRow.of({"experiment_id": exp, "variant_id": "b1", **cells})]


def test_the_example_does_one_kind_of_work() -> None:
    assert samework.experiment_findings(Protocol.of(_protocol()), [], GRID) == []


def test_a_declared_variable_is_no_difference_of_work() -> None:
    # A context series beside a batch series: the context is the second one's declared variable, not a fixed
    # value left different; the batch it holds fixed is the first one's variable.
    p = _protocol()
    second = p["experiments"][1]
    second.update(variable="context", variants=[{"id": "c512", "value": 512}, {"id": "c256", "value": 256}])
    second["fixed"].update(context=None, batch=4)
    assert samework.experiment_findings(Protocol.of(p), [], GRID) == []


def test_precision_is_compared_and_batch_is_not() -> None:
    # Two precision series on two GPUs: the precision is what they compare, the batch they hold is the work.
    p = _protocol()
    for exp, batch in zip(p["experiments"], (4, 8), strict=True):
        exp.update(variable="precision", variants=[{"id": "bf16", "value": "bfloat16"},
                                                   {"id": "fp16", "value": "float16"}])
        exp["fixed"].update(precision=None, batch=batch)
    findings = samework.experiment_findings(Protocol.of(p), [], GRID)
    assert [(f.code, f.field, f.shared_input) for f in findings] == [
        ("different-work", "/experiments/1/fixed/batch", "protocol")]
    assert findings[0].message == (
        "configurations of different work: batch differs between experiments rtx4090-batch and b200-batch, "
        "ranked in one answer: rtx4090-batch 4, b200-batch 8")
    assert findings[0].claimed is None and findings[0].recomputed is None  # no Python repr in the report


def test_a_fact_left_open_is_read_from_the_grid() -> None:
    # Neither experiment fixes the batch: what their rows ran is still the work, and it differs.
    p = _protocol()
    for exp in p["experiments"]:
        exp.update(variable="precision", variants=[{"id": "b1", "value": "bfloat16"}])
        exp["fixed"].update(precision=None, batch=None)
    rows = _rows("rtx4090-batch", batch=4) + _rows("b200-batch", batch=8)
    [finding] = samework.experiment_findings(Protocol.of(p), rows, GRID)
    assert finding.field == "/experiments/1/fixed/batch"
    assert finding.message.endswith(f"rtx4090-batch 4 ({GRID}; open in protocol.json), "
                                    f"b200-batch 8 ({GRID}; open in protocol.json)")
    # The same value in both is the same work, whichever file states it.
    p["experiments"][0]["fixed"]["batch"] = 8
    assert samework.experiment_findings(Protocol.of(p), _rows("b200-batch", batch=8), GRID) == []


def test_an_unwritten_warmup_field_is_said_so() -> None:
    p = _protocol()
    del p["experiments"][0]["warmup"]["recompilation"]
    [finding] = samework.experiment_findings(Protocol.of(p), [], GRID)
    assert finding.field == "/experiments/1/warmup/recompilation"
    assert finding.message.endswith('rtx4090-batch not written, b200-batch "none (eager mode)"')


def test_three_experiments_each_named_against_the_first() -> None:
    p = _protocol()
    third = copy.deepcopy(p["experiments"][1])
    third["id"] = "b200-again"
    p["experiments"].append(third)
    for exp in p["experiments"][1:]:
        exp["fixed"]["seed"] = 99
    findings = samework.experiment_findings(Protocol.of(p), [], GRID)
    assert [f.field for f in findings] == ["/experiments/1/fixed/seed", "/experiments/2/fixed/seed"]
    assert findings[1].extra["values"] == {"rtx4090-batch": "1234", "b200-again": "99"}


def test_a_measurement_of_another_model_is_not_the_variants(tmp_path: Path) -> None:
    # The grid and the protocol agree; the measurement linked to b200-batch/b8 ran another model revision.
    folder = tmp_path / "campaign"
    shutil.copytree(EXAMPLE, folder)
    path = folder / "measurements" / "b200-batch-b8.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["model"]["revision"] = "synthetic-classifier-r2"
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    result = check_campaign(folder)
    hits = [f for f in result.findings if f.field == "/model/revision"]
    assert [(f.code, f.file, f.configurations) for f in hits] == [
        ("measurement-config-mismatch", "measurements/b200-batch-b8.json", ("b200-batch/b8",))]
    assert 'ran model revision "synthetic-classifier-r2"' in hits[0].message
    config = next(c for c in result.decision["configurations"] if c["id"] == "b200-batch/b8")
    assert config["admissible"] is False
    assert result.decision["decision"]["answer"] == "rtx4090-batch/b4"
