"""Data-parallel runs over a lot's GPUs, tested on the CPU with two gloo processes (issue 38): the same sharding and
gathering code as on GPUs, predictions identical to a one-process run, and `check`'s rules for each GPU's share."""

from __future__ import annotations

import copy
import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from test_campaign_run import errors, tiny  # noqa: F401 - the tiny model, corpus and protocol fixture

torch = pytest.importorskip("torch")

from generator.gpu.campaign import campaign_run, lot  # noqa: E402
from generator.gpu.campaign.campaign_inputs import Settings, read_corpus  # noqa: E402
from generator.gpu.models.loading import load_model  # noqa: E402


@pytest.mark.parametrize(("count", "world", "sizes"), [(24, 2, [12, 12]), (25, 2, [13, 12]), (1, 2, [1, 0]),
                                                       (10, 3, [4, 3, 3])])
def test_shards_are_contiguous_blocks_in_rank_order(count: int, world: int, sizes: list[int]) -> None:
    bounds = lot.shard_bounds(count, world)
    assert [end - start for start, end in bounds] == sizes
    assert [i for start, end in bounds for i in range(start, end)] == list(range(count))


def test_two_gloo_processes_give_the_predictions_of_one(tiny: dict[str, Path]) -> None:  # noqa: F811
    corpus = tiny["corpus"] / "eval.jsonl"
    model = load_model(str(tiny["model"]), "cpu", "float32", 64)
    ids, texts = read_corpus(corpus)
    alone = [(i, str(label)) for b in range(0, len(ids), 5)
             for i, label in zip(ids[b:b + 5], model.predict(texts[b:b + 5]), strict=True)]
    st = Settings(batch=5, precision="float32", context=64, seed=7, gpu_count=2)
    with lot.Lot(torch, str(tiny["model"]), "cpu", 2) as pair:
        pair.load(st)
        result = pair.run(model, corpus, st)
        warmup = pair.run(model, corpus, st, limit=3)
    assert result.done == alone
    assert [(s.device, s.texts, s.completed, s.status) for s in result.shares] == [("cpu", 12, 12, "ok")] * 2
    assert warmup.done == alone[:3] and [s.texts for s in warmup.shares] == [2, 1]


def _gpu_count_protocol(tiny: dict[str, Path], tmp_path: Path) -> Path:  # noqa: F811
    protocol = json.loads(tiny["protocol"].read_text(encoding="utf-8"))
    exp = protocol["experiments"][0]
    exp.update(id="lot", variable="gpu_count", variants=[
        {"id": "g1", "value": 1, "measurement": "measurements/lot-g1.json"},
        {"id": "g2", "value": 2, "measurement": "measurements/lot-g2.json"}])
    exp["fixed"]["batch"] = 4
    path = tmp_path / "protocol.json"
    path.write_text(json.dumps(protocol, indent=2), encoding="utf-8")
    return path


def test_a_campaign_over_two_processes_writes_each_share_and_checks_clean(tiny: dict[str, Path],  # noqa: F811
                                                                        tmp_path: Path) -> None:
    out = tmp_path / "camp"
    config = campaign_run.CampaignConfig(protocol=_gpu_count_protocol(tiny, tmp_path), model=str(tiny["model"]),
                                         corpus=tiny["corpus"], device="cpu", out=out, allow_cpu_for_tests=True)
    result = campaign_run.run_campaign(config)
    assert result.failed_attempts == 0
    assert errors(out) == []
    predictions = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.glob("predictions/*/*/*.csv")}
    for name, data in predictions.items():
        if "/g2/" in name:
            assert data == predictions[name.replace("/g2/", "/g1/")]  # sharded and gathered in input order
    doc = json.loads((out / "measurements" / "lot-g2.json").read_text(encoding="utf-8"))
    passes = [p for p in doc["phases"] if p["phase"] in ("cold_forward", "warmup", "warm_forward")]
    assert len(passes) == 1 + 1 + 2
    assert all([d["texts"] for d in p["devices"]] == [12, 12] for p in passes if p["phase"] != "warmup")
    single = json.loads((out / "measurements" / "lot-g1.json").read_text(encoding="utf-8"))
    assert all("devices" not in p for p in single["phases"])  # the one-GPU path is unchanged
    with (out / "resultats-bruts.csv").open(encoding="utf-8", newline="") as fh:
        assert {r["gpu_count"] for r in csv.DictReader(fh)} == {"0"}  # a CPU test run uses no GPU


def _two_gpu_doc() -> dict[str, Any]:
    """A measurement of a pass over two GPUs, as a runner on a two-GPU lot writes it."""
    share = {"device": "cuda:0", "texts": 500, "completed": 500, "status": "ok", "error": None,
             "elapsed_seconds": 1.0, "baseline_allocated_bytes": 100, "baseline_reserved_bytes": 200,
             "peak_allocated_bytes": 300, "peak_reserved_bytes": 400}
    other = {**share, "device": "cuda:1", "peak_allocated_bytes": 350, "peak_reserved_bytes": 380}
    phase = {"phase": "warm_forward", "repeat": 1, "iterations": 1, "status": "ok", "error": None,
             "elapsed_seconds": 1.1, "baseline_allocated_bytes": 100, "baseline_reserved_bytes": 200,
             "final_allocated_bytes": 100, "final_reserved_bytes": 200, "peak_allocated_bytes": 350,
             "peak_reserved_bytes": 400, "devices": [share, other]}
    env = {"python_version": "3.12.3", "torch_version": "2.11.0", "device": "cuda:0", "gpu_available": True,
           "gpu_name": "NVIDIA H200", "devices_used": 2, "visible_device_count": 2,
           "devices": [{"device": "cuda:0", "gpu_name": "NVIDIA H200", "gpu_uuid": "GPU-a",
                        "gpu_total_memory_bytes": 10},
                       {"device": "cuda:1", "gpu_name": "NVIDIA H200", "gpu_uuid": "GPU-b",
                        "gpu_total_memory_bytes": 10}]}
    return {"schema_version": "1", "environment": env, "phases": [phase],
            "configuration": {"device": "cuda:0", "batch": 8, "dtype": "float32", "warmup": 0, "repeats": 1},
            "model": {"name": "m"}}


def _codes(doc: dict[str, Any]) -> list[str]:
    from generator.audit.load.inputs.measurement import MeasurementDoc
    from generator.audit.recompute.evidence.lotdevices import check_devices

    return sorted(f.code for f in check_devices(MeasurementDoc.of(doc), "m.json"))


def _changed(path: str, value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(_two_gpu_doc())
    *head, last = path.split("/")
    target: Any = doc
    for key in head:
        target = target[int(key)] if key.isdigit() else target[key]
    if value is None and isinstance(target, list):
        del target[int(last)]
    else:
        target[int(last) if last.isdigit() else last] = value
    return doc


def test_the_measurement_of_a_pass_over_two_gpus_checks_clean() -> None:
    assert _codes(_two_gpu_doc()) == []


@pytest.mark.parametrize(("path", "value", "code"), [
    ("environment/devices_used", 1, "lot-devices-count"),
    ("environment/devices/1/gpu_uuid", "GPU-a", "lot-device-twice"),  # one GPU counted as two
    ("phases/0/devices/1", None, "lot-share-missing"),
    ("phases/0/devices/1/completed", 0, "lot-device-idle"),
    ("phases/0/peak_allocated_bytes", 650, "lot-peak-mismatch"),  # the two GPUs' peaks summed
    ("phases/0/devices/1/peak_allocated_bytes", 390, "allocated-exceeds-reserved"),
])
def test_each_gpu_share_is_checked(path: str, value: Any, code: str) -> None:
    codes = _codes(_changed(path, value))
    assert code in codes, codes


def test_the_note_data_says_whether_each_gpu_worked() -> None:
    from generator.audit.load.inputs.measurement import MeasurementDoc
    from generator.audit.recompute.evidence.lotdevices import device_uses

    uses = device_uses(MeasurementDoc.of(_two_gpu_doc()))
    assert uses is not None
    assert [(u.device, u.texts, u.worked, u.peak_allocated_bytes) for u in uses] == [("cuda:0", 500, True, 300),
                                                                                      ("cuda:1", 500, True, 350)]
    idle = device_uses(MeasurementDoc.of(_changed("phases/0/devices/1/completed", 0)))
    assert idle is not None and [u.worked for u in idle] == [True, False]


def test_the_note_shows_each_gpu_of_the_lot_and_whether_it_worked(example_decision: Path) -> None:
    import html
    import re

    from generator.render.page.note import render_html

    decision = json.loads(example_decision.read_text(encoding="utf-8"))
    config = next(c for c in decision["configurations"] if c["id"] == "b200-batch/b8")
    use = {"device": "cuda:0", "gpu_name": "NVIDIA B200", "gpu_uuid": "GPU-a", "texts": 500, "passes": 6,
           "worked": True, "peak_allocated_bytes": 2 * 2**30, "peak_reserved_bytes": 3 * 2**30}
    config["measurement"]["devices"] = [use, {**use, "device": "cuda:1", "gpu_uuid": "GPU-b", "worked": False,
                                              "passes": 5, "peak_allocated_bytes": 2**30}]
    body = render_html(decision)
    table = body.split("Memory per GPU of the lot")[1].split("</table>")[0]
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", table)).split())
    assert "B200, batch 8 b200-batch/b8 cuda:0: NVIDIA B200 GPU-a 500 2.00 GiB" in text
    assert "cuda:1: NVIDIA B200 GPU-b 500 1.00 GiB" in text and "no (5 runs recorded)" in text
    assert "Memory per GPU of the lot" not in render_html(json.loads(example_decision.read_text(encoding="utf-8")))


def test_a_lot_larger_than_the_machine_is_refused_before_any_work(tiny: dict[str, Path], tmp_path: Path,  # noqa: F811
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.core.errors import EnvironmentProblemError

    monkeypatch.setattr(campaign_run, "campaign_environment", lambda config: (torch, {"visible_device_count": 1}))
    out = tmp_path / "camp"
    config = campaign_run.CampaignConfig(protocol=_gpu_count_protocol(tiny, tmp_path), model=str(tiny["model"]),
                                         corpus=tiny["corpus"], device="cuda:0", out=out)
    with pytest.raises(EnvironmentProblemError, match="a variant uses 2 GPUs from cuda:0, but 1 is visible; "
                                                      "nothing was run"):
        campaign_run.run_campaign(config)
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["protocol.json"]


def test_a_share_that_fails_midway_keeps_what_it_completed_and_its_error() -> None:
    class Failing:
        name, revision, tokenizer_revision, parameter_count = "failing", "r", "t", 0

        def predict(self, texts: Sequence[str]) -> list[str]:
            if "c" in texts:
                raise ValueError("boom")
            return ["x"] * len(texts)

    share, done = lot._share(torch, Failing(), "cpu", 1, ["1", "2", "3"], ["a", "b", "c"], 2)
    assert done == [("1", "x"), ("2", "x")]
    assert (share.status, share.texts, share.completed, share.elapsed_seconds) == ("failed", 3, 2, None)
    assert share.error == "runtime error: RuntimeError: ValueError: boom"


def test_a_missing_share_is_named_as_the_file_writes_the_devices() -> None:
    from generator.audit.load.inputs.measurement import MeasurementDoc
    from generator.audit.recompute.evidence.lotdevices import check_devices

    (finding,) = check_devices(MeasurementDoc.of(_changed("phases/0/devices/1", None)), "m.json")
    assert finding.message == "warm_forward lists shares for cuda:0 where the run used cuda:0, cuda:1"
