"""`measure run`: the Lab's synthetic MLP measured phase by phase on one GPU, and its measurement file."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator import __version__
from generator.core.errors import EnvironmentProblemError, OutputExistsError, UsageError
from generator.core.system.safefiles import write_new_file
from generator.gpu.measure.environment import collect_environment, import_torch, parse_device
from generator.gpu.measure.phases import CudaCounters, run_phase

DTYPES = ("float32", "float16", "bfloat16")
HIDDEN_FACTOR = 4
MAX_REPEATS = 100_000 - 4  # the schema allows 100000 phase rows; four are not warm_forward


# --------------------------------------------------------------------------- output files


def check_new_output(path: Path) -> None:
    """Refuse an output path that exists or whose folder is missing, before any work is done."""
    if os.path.lexists(path):
        raise OutputExistsError(f"{path} already exists; nothing is overwritten: choose a new file name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"the folder of {path} does not exist; create it first")


def write_new_json(path: Path, document: dict[str, Any]) -> None:
    """Write `document` to a path that must not exist yet, in full or not at all (never over another file)."""
    check_new_output(path)
    text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    try:
        write_new_file(path, text.encode("utf-8"), what="measurement file")
    except OutputExistsError:
        raise OutputExistsError(f"{path} appeared while measuring; nothing is overwritten") from None


# --------------------------------------------------------------------------- measurement


@dataclass(frozen=True)
class RunConfig:
    """The configuration of one measurement; validated on creation."""

    device: str
    batch: int
    context: int
    width: int
    dtype: str
    warmup: int
    repeats: int
    seed: int | None = 0

    def __post_init__(self) -> None:
        parse_device(self.device)
        for name, minimum in (("batch", 1), ("context", 1), ("width", 1), ("warmup", 0), ("repeats", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise UsageError(f"--{name} must be a whole number >= {minimum}, got {value!r}")
        if self.repeats > MAX_REPEATS:
            raise UsageError(f"--repeats must be at most {MAX_REPEATS}, got {self.repeats}")
        if self.dtype not in DTYPES:
            raise UsageError(f"--dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            raise UsageError(f"--seed must be a whole number, got {self.seed!r}")

    def to_dict(self) -> dict[str, Any]:
        """The schema's `configuration` object."""
        return {
            "device": self.device, "batch": self.batch, "context": self.context, "width": self.width,
            "dtype": self.dtype, "warmup": self.warmup, "repeats": self.repeats, "seed": self.seed,
        }


def synthetic_model_description(width: int, batch: int, context: int) -> dict[str, Any]:
    """The schema's `synthetic_model` object for Linear(width, 4*width) -> GELU -> Linear(4*width, width)."""
    hidden = HIDDEN_FACTOR * width
    layers = [
        {"type": "Linear", "in_features": width, "out_features": hidden, "bias": True,
         "weight_shape": [hidden, width], "bias_shape": [hidden]},
        {"type": "GELU", "approximate": "none"},
        {"type": "Linear", "in_features": hidden, "out_features": width, "bias": True,
         "weight_shape": [width, hidden], "bias_shape": [width]},
    ]
    return {
        "architecture": f"Linear({width}, {hidden}) -> GELU -> Linear({hidden}, {width})",
        "parameter_count": 2 * width * hidden + hidden + width,
        "input_shape": [batch, context, width],
        "layers": layers,
    }


@dataclass
class MeasurementResult:
    """The measurement document (schema measurement.schema.json) and whether a phase failed."""

    document: dict[str, Any]
    failed: bool = False
    phases: list[dict[str, Any]] = field(default_factory=list)


def _document(config: RunConfig, environment: dict[str, Any]) -> dict[str, Any]:
    """The measurement document before its phases: schema version, tool, environment, configuration, model."""
    return {
        "schema_version": "1",
        "tool": f"gpu-audit {__version__} measure",
        "synthetic_data": False,
        "environment": environment,
        "configuration": config.to_dict(),
        "synthetic_model": synthetic_model_description(config.width, config.batch, config.context),
        "phases": [],
    }


def _load_model(torch: Any, config: RunConfig, device: Any) -> Any:
    """Linear(W, 4W) -> GELU -> Linear(4W, W) in the configured dtype, on `device`, in evaluation mode."""
    width, hidden = config.width, HIDDEN_FACTOR * config.width
    model = torch.nn.Sequential(
        torch.nn.Linear(width, hidden),
        torch.nn.GELU(),
        torch.nn.Linear(hidden, width),
    )
    model.eval()
    model.to(dtype=getattr(torch, config.dtype))
    return model.to(device=device)


def _warm_up(model: Any, inputs: Any, iterations: int) -> Any:
    """The warm-up passes, timed together as one phase."""
    last = None
    for _ in range(iterations):
        last = None  # each output is freed before the next pass
        last = model(inputs)
    return last


def _measure(torch: Any, config: RunConfig, environment: dict[str, Any], counters: Any,
             device: Any) -> MeasurementResult:
    """Run the phases on `device` with `counters`; stop after the first failed phase."""
    document = _document(config, environment)
    result = MeasurementResult(document=document, phases=document["phases"])
    if config.seed is not None:
        torch.manual_seed(config.seed)  # seeds the CPU and every GPU generator
    with torch.inference_mode():
        _run_phases(torch, config, counters, device, result)
    return result


def _run_phases(torch: Any, config: RunConfig, counters: Any, device: Any, result: MeasurementResult) -> None:
    """model_load, inputs, cold_forward, warmup, then one warm_forward per repeat, each row kept in `result`."""

    def step(name: str, fn: Callable[[], Any], repeat: int | None = None, iterations: int = 1) -> tuple[bool, Any]:
        row, out = run_phase(torch, counters, name, fn, repeat=repeat, iterations=iterations)
        result.phases.append(row)
        ok = row["status"] == "ok"
        result.failed = result.failed or not ok
        return ok, out

    ok, model = step("model_load", lambda: _load_model(torch, config, device))
    if not ok:
        return
    dtype = getattr(torch, config.dtype)
    ok, inputs = step("inputs", lambda: torch.randn(config.batch, config.context, config.width, device=device,
                                                    dtype=dtype))
    if not ok:
        return
    ok, out = step("cold_forward", lambda: model(inputs))
    del out  # freed before the next pass
    if not ok:
        return
    ok, out = step("warmup", lambda: _warm_up(model, inputs, config.warmup), iterations=config.warmup)
    del out
    if not ok:
        return
    for repeat in range(1, config.repeats + 1):
        ok, out = step("warm_forward", lambda: model(inputs), repeat=repeat)
        del out
        if not ok:
            return


def run_measurement(config: RunConfig) -> MeasurementResult:
    """Measure the synthetic MLP on the configured GPU, phase by phase.

    Raises EnvironmentProblemError, and measures nothing, when PyTorch cannot be imported or the device
    is not an accessible GPU: there is never a fallback to the CPU.
    """
    torch, reason = import_torch()
    if torch is None:
        raise EnvironmentProblemError(f"cannot measure: {reason}; install a PyTorch build that matches the GPU "
                                      "and its driver. No file was written")
    environment = collect_environment(config.device, devices_used=1)
    if not environment["gpu_available"]:
        raise EnvironmentProblemError(f"cannot measure on {config.device}: {environment['unavailable_reason']}. "
                                      "Nothing is measured on the CPU instead, and no file was written")
    device = torch.device(config.device)
    return _measure(torch, config, environment, CudaCounters(torch, device), device)


def warm_forward_summary(phases: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Median, minimum and maximum of the successful warm_forward durations, or None when there are none."""
    import statistics  # noqa: PLC0415

    times = [p["elapsed_seconds"] for p in phases if p["phase"] == "warm_forward" and p["status"] == "ok"]
    if not times:
        return None
    return {"count": len(times), "median_seconds": statistics.median(times), "min_seconds": min(times),
            "max_seconds": max(times)}

