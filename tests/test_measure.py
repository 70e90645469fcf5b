"""Tests of `gpu-audit measure` (estimate, environment, run) and of the committed H200 measurements."""

from __future__ import annotations

import json
import os
import platform
import stat
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from generator import __version__
from generator.cli.main import main
from generator.core.errors import OutputExistsError, UsageError
from generator.gpu.measure import environment, estimate, measure

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "schemas" / "measurement.schema.json").read_text(encoding="utf-8"))
H200_DIR = ROOT / "inputs" / "measurements-h200"
H200_RUNS = {
    "h200-small-fp32.json": {"batch": 1, "context": 16, "width": 64, "dtype": "float32", "warmup": 1, "repeats": 2},
    "h200-large-fp32.json": {"batch": 2, "context": 128, "width": 1024, "dtype": "float32", "warmup": 3, "repeats": 5},
    "h200-large-bf16.json": {"batch": 2, "context": 128, "width": 1024, "dtype": "bfloat16", "warmup": 3, "repeats": 5},
}
BYTE_FIELDS = ("baseline_allocated_bytes", "baseline_reserved_bytes", "final_allocated_bytes",
               "final_reserved_bytes", "peak_allocated_bytes", "peak_reserved_bytes")
SMALL_RUN = ["--batch", "1", "--context", "16", "--width", "64", "--dtype", "float32",
             "--warmup", "1", "--repeats", "2"]


def validate_measurement(document: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(document)


def validate_environment(env: dict[str, Any]) -> None:
    sub = dict(SCHEMA["properties"]["environment"])
    jsonschema.Draft202012Validator(sub).validate(env)


def hide_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `import torch` fail in this process, as on a machine without PyTorch."""
    monkeypatch.setitem(sys.modules, "torch", None)


def torch_without_gpu() -> Any:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU; the no-GPU refusal cannot be observed here")
    return torch


# --------------------------------------------------------------------------- estimate


def test_estimate_seed_example_text(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["measure", "estimate", "--parameters", "7000000000", "--bits", "16", "--reserve-gib", "4"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "14,000,000,000 bytes" in out
    assert "13.04 GiB" in out
    assert "17.04 GiB" in out
    assert "14.00 GB" in out and "18.29 GB" in out
    assert "assumption" in out and "not a measurement" in out
    for item in ("activations", "KV cache", "quantisation metadata", "gradients", "optimiser state", "libraries"):
        assert item in out
    assert "does not predict whether a real model fits" in out


def test_estimate_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["measure", "estimate", "--parameters", "7e9", "--bits", "16", "--reserve-gib", "4", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert data["bytes_per_parameter"] == 2
    assert data["weight_bytes"] == 14_000_000_000
    assert round(data["weight_gib"], 2) == 13.04
    assert round(data["total_gib"], 2) == 17.04
    assert data["total_bytes"] == 14_000_000_000 + 4 * 2**30
    assert data["reserve_is_assumption"] is True and data["predicts_fit"] is False


@pytest.mark.parametrize("bits,expected", [(1, 1), (4, 1), (8, 1), (9, 2), (12, 2), (16, 2), (17, 3), (32, 4)])
def test_estimate_rounds_bits_up_to_whole_bytes(bits: int, expected: int) -> None:
    est = estimate.estimate_weights(1000, bits)
    assert est.bytes_per_parameter == expected
    assert est.weight_bytes == 1000 * expected
    assert est.reserve_bytes == 0 and est.total_bytes == est.weight_bytes


def test_estimate_gib_and_gb_units() -> None:
    est = estimate.estimate_weights(2**30, 8, "0.5")
    assert est.weight_gib == 1
    assert est.weight_gb == Decimal(2**30) / 10**9
    assert est.total_gib == Decimal("1.5")


@pytest.mark.parametrize("argv,fragment", [
    (["--parameters", "0", "--bits", "16"], "--parameters must be positive"),
    (["--parameters", "-7", "--bits", "16"], "--parameters must be positive"),
    (["--parameters", "1.5", "--bits", "16"], "not a whole number"),
    (["--parameters", "many", "--bits", "16"], "not a number"),
    (["--parameters", "1000", "--bits", "0"], "--bits must be a positive"),
    (["--parameters", "1000", "--bits", "-8"], "--bits must be a positive"),
    (["--parameters", "1000", "--bits", "8", "--reserve-gib", "-1"], "--reserve-gib must be"),
    (["--parameters", "1000", "--bits", "8", "--reserve-gib", "nan"], "--reserve-gib must be"),
])
def test_estimate_invalid_input_exits_2(argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["measure", "estimate", *argv])
    captured = capsys.readouterr()
    assert rc == 2
    assert captured.out == ""
    assert "gpu-audit: error:" in captured.err and fragment in captured.err


def test_estimate_library_rejects_bad_types() -> None:
    with pytest.raises(UsageError):
        estimate.estimate_weights(True, 16)
    with pytest.raises(UsageError):
        estimate.estimate_weights(10, 16.0)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- environment


def test_environment_without_torch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    hide_torch(monkeypatch)
    target = tmp_path / "environment.json"
    rc = main(["measure", "environment", "--device", "cuda:0", "--output", str(target)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "gpu available:   false" in out
    written = json.loads(target.read_text(encoding="utf-8"))
    env = written["environment"]
    validate_environment(env)
    assert env["gpu_available"] is False
    assert env["torch_version"] is None and env["runtime"] is None
    assert "PyTorch could not be imported" in env["unavailable_reason"]
    assert env["python_version"] == platform.python_version()


def test_environment_with_torch_but_no_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    torch = torch_without_gpu()
    rc = main(["measure", "environment", "--device", "cuda:0", "--json"])
    env = json.loads(capsys.readouterr().out)
    assert rc == 0
    validate_environment(env)
    assert env["gpu_available"] is False
    assert env["torch_version"] == str(torch.__version__)
    assert env["unavailable_reason"]
    assert env["gpu_name"] is None and env["gpu_total_memory_bytes"] is None


def test_environment_collects_no_environment_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_AUDIT_SECRET_PROBE", "do-not-leak-4711")
    env = environment.collect_environment("cuda:0")
    assert set(env) == set(SCHEMA["properties"]["environment"]["properties"]) - {"devices"}  # one GPU: none listed
    assert "do-not-leak-4711" not in json.dumps(env)


def test_environment_refuses_existing_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "environment.json"
    target.write_text("keep me", encoding="utf-8")
    rc = main(["measure", "environment", "--output", str(target)])
    assert rc == 2
    assert "already exists" in capsys.readouterr().err
    assert target.read_text(encoding="utf-8") == "keep me"


@pytest.mark.parametrize("device", ["cpu", "cuda", "gpu0", "cuda:x", "cuda:0 "])
def test_non_explicit_gpu_device_is_a_usage_error(device: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["measure", "environment", "--device", device])
    assert rc == 2
    assert "cuda:N" in capsys.readouterr().err


def _fake_nvidia_smi(folder: Path, body: str) -> None:
    _fake_tool(folder, "nvidia-smi", body)


@pytest.mark.skipif(os.name != "posix", reason="uses a shell script as nvidia-smi")
def test_driver_version_read_from_nvidia_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_nvidia_smi(tmp_path, 'case "$*" in *driver_version*) printf "580.159.03\\n580.159.03\\n";; *) exit 3;; esac')
    monkeypatch.setenv("PATH", str(tmp_path))
    assert environment.read_driver_version() == "580.159.03"


@pytest.mark.skipif(os.name != "posix", reason="uses a shell script as nvidia-smi")
def test_driver_version_null_when_nvidia_smi_fails_or_is_absent(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_nvidia_smi(tmp_path, "echo 'NVIDIA-SMI has failed' ; exit 9")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert environment.read_driver_version() is None
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert environment.read_driver_version() is None


# --------------------------------------------------------------------------- run: refusals


def test_run_without_torch_exits_2_and_writes_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    hide_torch(monkeypatch)
    target = tmp_path / "m.json"
    rc = main(["measure", "run", "--device", "cuda:0", *SMALL_RUN, "--output", str(target)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "PyTorch could not be imported" in err
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_run_with_torch_but_no_gpu_exits_2_and_writes_nothing(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    torch_without_gpu()
    target = tmp_path / "m.json"
    rc = main(["measure", "run", "--device", "cuda:0", *SMALL_RUN, "--output", str(target)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "cannot measure on cuda:0" in err and "CPU" in err
    assert list(tmp_path.iterdir()) == []


def test_run_refuses_existing_output_before_any_work(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "m.json"
    target.write_text('{"previous": true}\n', encoding="utf-8")

    def must_not_run(config: measure.RunConfig) -> measure.MeasurementResult:
        raise AssertionError("measured although the output exists")

    monkeypatch.setattr(measure, "run_measurement", must_not_run)
    rc = main(["measure", "run", "--device", "cuda:0", *SMALL_RUN, "--output", str(target)])
    assert rc == 2
    assert "already exists" in capsys.readouterr().err
    assert target.read_text(encoding="utf-8") == '{"previous": true}\n'


@pytest.mark.parametrize("option,value,fragment", [
    ("--batch", "0", "--batch must be"), ("--context", "0", "--context must be"),
    ("--width", "-1", "--width must be"), ("--warmup", "-1", "--warmup must be"),
    ("--repeats", "0", "--repeats must be"),
])
def test_run_invalid_configuration_exits_2(option: str, value: str, fragment: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    argv = list(SMALL_RUN)
    argv[argv.index(option) + 1] = value
    target = tmp_path / "m.json"
    rc = main(["measure", "run", "--device", "cuda:0", *argv, "--output", str(target)])
    assert rc == 2
    assert fragment in capsys.readouterr().err
    assert not target.exists()


def test_run_missing_output_folder_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["measure", "run", "--device", "cuda:0", *SMALL_RUN, "--output", str(tmp_path / "no" / "m.json")])
    assert rc == 2
    assert "does not exist" in capsys.readouterr().err


def test_python_m_generator_measure_needs_only_the_standard_library(tmp_path: Path) -> None:
    """As on the GPU machine: no pandas, jinja2, jsonschema; here torch hidden too, so run refuses."""
    code = (
        "import sys, runpy\n"
        "for name in ('torch', 'numpy', 'pandas', 'jinja2', 'jsonschema', 'weasyprint'):\n"
        "    sys.modules[name] = None\n"
        "runpy.run_module('generator', run_name='__main__')\n"
    )
    target = tmp_path / "m.json"

    def gpu_audit(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", code, "measure", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=120, check=False)

    est = gpu_audit("estimate", "--parameters", "7000000000", "--bits", "16", "--reserve-gib", "4")
    assert est.returncode == 0, est.stderr
    assert "17.04 GiB" in est.stdout
    env = gpu_audit("environment", "--device", "cuda:0", "--json")
    assert env.returncode == 0, env.stderr
    assert json.loads(env.stdout)["gpu_available"] is False
    run = gpu_audit("run", "--device", "cuda:0", *SMALL_RUN, "--output", str(target))
    assert run.returncode == 2
    assert "gpu-audit: error: cannot measure: PyTorch could not be imported" in run.stderr
    assert not target.exists()


# --------------------------------------------------------------------------- output files


def test_write_new_json_refuses_existing_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    measure.write_new_json(target, {"a": 1})
    assert json.loads(target.read_text(encoding="utf-8")) == {"a": 1}
    with pytest.raises(OutputExistsError):
        measure.write_new_json(target, {"a": 2})
    assert json.loads(target.read_text(encoding="utf-8")) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_write_new_json_refuses_a_file_that_appears_meanwhile(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "out.json"
    monkeypatch.setattr(measure, "check_new_output", lambda path: None)  # the file appears after the check
    target.write_text("other writer", encoding="utf-8")
    with pytest.raises(OutputExistsError):
        measure.write_new_json(target, {"a": 1})
    assert target.read_text(encoding="utf-8") == "other writer"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


# --------------------------------------------------------------------------- run: the phase protocol


class FakeCounters:
    """Allocator counters for a CPU stand-in, so the phase protocol runs without a GPU (tests only).

    Can raise an out-of-memory error at the synchronisation that ends the phase number `fail_phase`.
    """

    def __init__(self, torch: Any, fail_phase: int | None = None) -> None:
        self.torch = torch
        self.fail_phase = fail_phase
        self.resets = 0
        self.just_reset = False
        self.calls: list[str] = []

    def synchronize(self) -> None:
        self.calls.append("sync")
        if self.just_reset:
            self.just_reset = False
            if self.resets == self.fail_phase:
                raise self.torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    def reset_peaks(self) -> None:
        self.calls.append("reset")
        self.resets += 1
        self.just_reset = True

    def allocated(self) -> int:
        self.calls.append("read")
        return 1000 * self.resets

    def reserved(self) -> int:
        return 2048 * (self.resets + 1)

    def peak_allocated(self) -> int:
        return 1000 * self.resets + 500

    def peak_reserved(self) -> int:
        return 2048 * (self.resets + 1) + 512


def _measure_on_cpu(fail_phase: int | None = None, **overrides: Any) -> tuple[measure.MeasurementResult, FakeCounters]:
    torch = pytest.importorskip("torch")
    values: dict[str, Any] = {"device": "cuda:0", "batch": 2, "context": 3, "width": 8, "dtype": "float32",
                              "warmup": 2, "repeats": 3, "seed": 7}
    values.update(overrides)
    config = measure.RunConfig(**values)
    env = environment.collect_environment("cuda:0", devices_used=1)
    counters = FakeCounters(torch, fail_phase)
    return measure._measure(torch, config, env, counters, torch.device("cpu")), counters


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_phase_protocol_document_is_valid(dtype: str) -> None:
    result, counters = _measure_on_cpu(dtype=dtype)
    doc = result.document
    validate_measurement(doc)
    assert result.failed is False
    assert doc["tool"] == f"gpu-audit {__version__} measure"
    assert doc["synthetic_data"] is False
    assert doc["environment"]["devices_used"] == 1
    assert doc["configuration"]["dtype"] == dtype and doc["configuration"]["seed"] == 7
    names = [(p["phase"], p["repeat"], p["iterations"]) for p in doc["phases"]]
    assert names == [("model_load", None, 1), ("inputs", None, 1), ("cold_forward", None, 1),
                     ("warmup", None, 2), ("warm_forward", 1, 1), ("warm_forward", 2, 1), ("warm_forward", 3, 1)]
    assert all(p["status"] == "ok" and p["error"] is None and p["elapsed_seconds"] >= 0 for p in doc["phases"])
    # each phase: sync, read baselines, reset peaks, (run), sync, read final values
    assert counters.calls[:5] == ["sync", "read", "reset", "sync", "read"]
    assert counters.calls.count("reset") == len(doc["phases"])


def test_synthetic_model_description_matches_the_torch_model() -> None:
    torch = pytest.importorskip("torch")
    width = 8
    model = torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(), torch.nn.Linear(4 * width, width))
    desc = measure.synthetic_model_description(width, batch=2, context=3)
    assert desc["parameter_count"] == sum(p.numel() for p in model.parameters()) == 8 * width**2 + 5 * width
    assert desc["input_shape"] == [2, 3, width]
    assert desc["layers"][0]["weight_shape"] == list(model[0].weight.shape)
    assert desc["layers"][2]["weight_shape"] == list(model[2].weight.shape)


def test_out_of_memory_fails_the_phase_and_stops() -> None:
    result, _ = _measure_on_cpu(fail_phase=3)  # the third phase is cold_forward
    doc = result.document
    validate_measurement(doc)
    assert result.failed is True
    assert [p["phase"] for p in doc["phases"]] == ["model_load", "inputs", "cold_forward"]
    failed = doc["phases"][-1]
    assert failed["status"] == "failed" and failed["elapsed_seconds"] is None
    assert "out of memory" in failed["error"] and "Tried to allocate" in failed["error"]
    assert all(failed[name] is not None for name in BYTE_FIELDS)


def test_failed_run_still_writes_its_file_and_exits_1(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    result, _ = _measure_on_cpu(fail_phase=5)  # the first warm_forward
    monkeypatch.setattr(measure, "run_measurement", lambda config: result)
    target = tmp_path / "m.json"
    rc = main(["measure", "run", "--device", "cuda:0", *SMALL_RUN, "--output", str(target)])
    out = capsys.readouterr().out
    assert rc == 1
    assert "a phase failed" in out and "out of memory" in out
    written = json.loads(target.read_text(encoding="utf-8"))
    validate_measurement(written)
    assert [p["status"] for p in written["phases"]] == ["ok", "ok", "ok", "ok", "failed"]


def test_successful_run_prints_summary_and_exits_0(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    result, _ = _measure_on_cpu()
    monkeypatch.setattr(measure, "run_measurement", lambda config: result)
    target = tmp_path / "m.json"
    rc = main(["measure", "run", "--device", "cuda:0", *SMALL_RUN, "--output", str(target)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "warm_forward: median" in out and "never add them" in out
    assert json.loads(target.read_text(encoding="utf-8")) == result.document


def test_warm_forward_summary() -> None:
    rows = [{"phase": "warm_forward", "status": "ok", "elapsed_seconds": s} for s in (0.3, 0.1, 0.2, 0.4)]
    rows.append({"phase": "warmup", "status": "ok", "elapsed_seconds": 9.0})
    summary = measure.warm_forward_summary(rows)
    assert summary == {"count": 4, "median_seconds": pytest.approx(0.25), "min_seconds": 0.1, "max_seconds": 0.4}
    assert measure.warm_forward_summary(rows[-1:]) is None


# --------------------------------------------------------------------------- committed H200 measurements


def test_h200_folder_holds_the_three_runs_and_the_environment() -> None:
    names = {p.name for p in H200_DIR.iterdir()}
    assert set(H200_RUNS) <= names
    assert {"environment.json", "README.md"} <= names


@pytest.mark.parametrize("name", sorted(H200_RUNS))
def test_h200_measurement_is_valid_and_consistent(name: str) -> None:
    doc = json.loads((H200_DIR / name).read_text(encoding="utf-8"))
    validate_measurement(doc)
    expected = H200_RUNS[name]
    config = doc["configuration"]
    assert {k: config[k] for k in expected} == expected
    assert config["device"] == "cuda:0"
    assert doc["synthetic_data"] is False
    assert doc["tool"].startswith("gpu-audit ") and doc["tool"].endswith(" measure")
    env = doc["environment"]
    assert env["gpu_available"] is True and env["devices_used"] == 1
    assert "H200" in env["gpu_name"] and env["runtime"] == "cuda"
    width = config["width"]
    assert doc["synthetic_model"]["parameter_count"] == 8 * width**2 + 5 * width
    assert doc["synthetic_model"]["input_shape"] == [config["batch"], config["context"], width]

    phases = doc["phases"]
    assert len(phases) == 4 + config["repeats"]
    assert [p["phase"] for p in phases] == (["model_load", "inputs", "cold_forward", "warmup"]
                                            + ["warm_forward"] * config["repeats"])
    assert [p["repeat"] for p in phases[4:]] == list(range(1, config["repeats"] + 1))
    assert phases[3]["iterations"] == config["warmup"]
    for p in phases:
        assert p["status"] == "ok" and p["error"] is None and p["elapsed_seconds"] > 0
        assert all(isinstance(p[f], int) for f in BYTE_FIELDS)
        assert p["peak_allocated_bytes"] >= p["baseline_allocated_bytes"]
        assert p["peak_allocated_bytes"] >= p["final_allocated_bytes"]
        assert p["peak_reserved_bytes"] >= p["baseline_reserved_bytes"]
        assert p["peak_reserved_bytes"] >= p["final_reserved_bytes"]
        for which in ("baseline", "final", "peak"):
            assert p[f"{which}_allocated_bytes"] <= p[f"{which}_reserved_bytes"]
        assert p["peak_reserved_bytes"] <= env["gpu_total_memory_bytes"]
    # weights persist from model_load on: every later baseline holds at least the weights
    element = 4 if config["dtype"] == "float32" else 2
    weights = doc["synthetic_model"]["parameter_count"] * element
    assert all(p["baseline_allocated_bytes"] >= weights for p in phases[1:])


def test_h200_environment_file_is_valid() -> None:
    data = json.loads((H200_DIR / "environment.json").read_text(encoding="utf-8"))
    env = data["environment"]
    validate_environment(env)
    assert env["gpu_available"] is True and "H200" in env["gpu_name"]
    assert env["driver_version"] and env["torch_version"] and env["runtime_version"]


@pytest.mark.skipif(os.name != "posix", reason="uses shell scripts as the vendor tools")
def test_driver_version_of_a_rocm_stack_is_read_with_amd_smi_then_rocm_smi(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    _fake_tool(tmp_path, "nvidia-smi", 'printf "580.159.03\\n"')  # present, but not the ROCm stack's driver
    _fake_tool(tmp_path, "rocm-smi", """printf '{"system": {"Driver version": "6.3.6"}}'""")
    assert environment.read_driver_version(runtime="hip") == "6.3.6"
    _fake_tool(tmp_path, "amd-smi", """printf '[{"gpu": 0, "driver": {"name": "amdgpu", "version": "6.8.5"}}]'""")
    assert environment.read_driver_version(runtime="hip") == "6.8.5"
    assert environment.read_driver_version(runtime="cuda") == "580.159.03"
    _fake_tool(tmp_path, "amd-smi", "exit 4")
    _fake_tool(tmp_path, "rocm-smi", "printf 'not json'")
    assert environment.read_driver_version(runtime="hip") is None


def _fake_tool(folder: Path, name: str, body: str) -> None:
    script = folder / name
    script.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
