"""The device measured is the one rented (issue 47 item 2): a GPU of the rental's model, in the registered count;
a test run, a run on the CPU or another GPU model is an error on its configuration, which is then never ranked."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from generator.audit.check import check_campaign
from generator.audit.load.findings import Finding
from generator.audit.recompute.evidence.rentaldevice import is_rented_model

ROOT = Path(__file__).resolve().parents[1]
H200 = ROOT / "inputs" / "h200-campaign"
EXAMPLE = ROOT / "inputs" / "example"
B1 = "measurements/h200-batch-b1.json"
RTX_B4 = "measurements/rtx4090-batch-b4.json"
DEVICE_CODES = {"gpu-not-rented", "device-not-gpu", "test-run", "gpu-count-not-registered"}


@pytest.mark.parametrize(("name", "gpu", "model", "rented"), [
    ("NVIDIA H200", "h200", None, True),
    ("NVIDIA H100", "h200", None, False),
    ("NVIDIA H200 NVL", "h200", None, False),
    ("NVIDIA GeForce RTX 4090", "rtx-4090", "GeForce RTX 4090", True),
    ("NVIDIA GeForce RTX 4090", "rtx-4090", None, True),  # the brand word set aside, the id names it
    ("NVIDIA GeForce RTX 4090 D", "rtx-4090", "GeForce RTX 4090", False),
    ("NVIDIA GeForce RTX 5070", "rtx-4090", "GeForce RTX 4090", False),
    ("NVIDIA B200", "b200", "B200", True),
    ("AMD Instinct MI300X", "mi300x", None, True),
    ("NVIDIA H100 80GB HBM3", "h100", "H100", True),  # memory and form factor described, the same model
    ("NVIDIA A100-SXM4-80GB", "a100", "A100 80GB", True),
    ("NVIDIA A100-SXM4-40GB", "a100-80gb", "A100 80GB", False),  # the rented name states 80 GB
    ("NVIDIA H100 PCIe", "h100-sxm", "H100 SXM", False),
    ("cpu", "h200", None, False),
    ("", "h200", None, False),
])
def test_the_runtime_name_is_the_rented_model_whole(name: str, gpu: str, model: str | None, rented: bool) -> None:
    assert is_rented_model(name, gpu, model) is rented


def _copy(src: Path, tmp_path: Path) -> Path:
    folder = tmp_path / src.name
    shutil.copytree(src, folder)
    return folder


def _edit(folder: Path, rel: str, change: Any) -> None:
    path = folder / rel
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")


def _device(folder: Path) -> tuple[list[Finding], dict[str, Any]]:
    result = check_campaign(folder)
    return [f for f in result.findings if f.code in DEVICE_CODES], result.decision


def _config(decision: dict[str, Any], cid: str) -> dict[str, Any]:
    return next(c for c in decision["configurations"] if c["id"] == cid)


@pytest.mark.parametrize("src", [H200, EXAMPLE, ROOT / "inputs" / "minilm-campaign"])
def test_the_committed_campaigns_measured_the_rented_gpu(src: Path) -> None:
    # the real H200 campaigns and the synthetic example (whose generated environments name the rented GPUs)
    assert _device(src)[0] == []


@pytest.mark.parametrize("other", ["NVIDIA H100", "NVIDIA H100 80GB HBM3", "NVIDIA H200 NVL"])
def test_another_gpu_model_is_an_error_on_its_configuration(tmp_path: Path, other: str) -> None:
    folder = _copy(H200, tmp_path)
    _edit(folder, B1, lambda d: d["environment"].update(gpu_name=other))
    found, decision = _device(folder)
    assert [(f.code, f.file, f.field, f.claimed) for f in found] == [
        ("gpu-not-rented", B1, "/environment/gpu_name", other)]
    assert found[0].configurations == ("h200-batch/b1",)
    assert other in found[0].message and "'h200'" in found[0].message
    b1 = _config(decision, "h200-batch/b1")
    assert not b1["admissible"] and "gpu-not-rented" in {e["code"] for e in b1["evidence"]["errors"]}
    assert _config(decision, "h200-batch/b4")["admissible"]


def test_a_rented_rtx_4090_measured_on_a_4090_d_is_no_answer(tmp_path: Path) -> None:
    folder = _copy(EXAMPLE, tmp_path)
    _edit(folder, RTX_B4, lambda d: d["environment"].update(gpu_name="NVIDIA GeForce RTX 4090 D"))
    found, decision = _device(folder)
    assert [(f.code, f.file, f.field) for f in found] == [("gpu-not-rented", RTX_B4, "/environment/gpu_name")]
    assert "GeForce RTX 4090" in found[0].message
    assert decision["decision"]["answer"] != "rtx4090-batch/b4"
    assert "rtx4090-batch/b4" not in [r["configuration"] for r in decision["decision"]["ranking"]]


def test_a_measurement_marked_test_run_is_an_error(tmp_path: Path) -> None:
    folder = _copy(H200, tmp_path)
    _edit(folder, B1, lambda d: d.update(test_run=True))
    found, decision = _device(folder)
    assert [(f.code, f.file, f.field, f.claimed) for f in found] == [("test-run", B1, "/test_run", True)]
    assert _config(decision, "h200-batch/b1")["test_run"] is True
    assert "test_run" not in _config(decision, "h200-batch/b4")


def test_test_run_false_is_no_finding(tmp_path: Path) -> None:
    folder = _copy(H200, tmp_path)
    _edit(folder, B1, lambda d: d.update(test_run=False))
    assert _device(folder)[0] == []


def test_a_measurement_on_the_cpu_is_an_error(tmp_path: Path) -> None:
    folder = _copy(H200, tmp_path)
    _edit(folder, B1, lambda d: d["environment"].update(device="cpu", gpu_available=False, gpu_name=None))
    found, decision = _device(folder)
    assert ("device-not-gpu", B1, "/environment/device") in [(f.code, f.file, f.field) for f in found]
    assert _config(decision, "h200-batch/b1")["test_run"] is True


def test_devices_used_beyond_the_registered_count_is_an_error(tmp_path: Path) -> None:
    folder = _copy(H200, tmp_path)
    _edit(folder, B1, lambda d: d["environment"].update(devices_used=2, visible_device_count=2))
    found, _ = _device(folder)
    assert [(f.code, f.field, f.claimed, f.recomputed) for f in found] == [
        ("gpu-count-not-registered", "/environment/devices_used", 2, 1)]
