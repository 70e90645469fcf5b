"""Weight estimate, environment report and phase-by-phase GPU measurement of the Lab's synthetic MLP."""

from __future__ import annotations

import json
import math
import os
import platform
import re
import shutil
import subprocess
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from generator import __version__
from generator.core.errors import EnvironmentProblemError, OutputExistsError, UsageError

GIB = 2**30
GB = 10**9
DTYPES = ("float32", "float16", "bfloat16")
HIDDEN_FACTOR = 4
MAX_REPEATS = 100_000 - 4  # the schema allows 100000 phase rows; four are not warm_forward
MAX_ERROR_CHARS = 4000
NVIDIA_SMI_TIMEOUT_S = 10.0
NOT_INCLUDED = (
    "activations",
    "KV cache",
    "quantisation metadata (scales, zero points)",
    "gradients",
    "optimiser state",
    "libraries and runtime context (CUDA/HIP context, framework, kernels)",
)
_DEVICE_RE = re.compile(r"^cuda:(\d{1,4})$")


# --------------------------------------------------------------------------- estimate


@dataclass(frozen=True)
class WeightEstimate:
    """Memory taken by the weights alone, plus a reserve that is an assumption, not a measurement."""

    parameters: int
    bits: int
    bytes_per_parameter: int
    weight_bytes: int
    reserve_gib: Decimal
    reserve_bytes: int
    not_included: tuple[str, ...] = NOT_INCLUDED

    @property
    def weight_gib(self) -> Decimal:
        return Decimal(self.weight_bytes) / GIB

    @property
    def weight_gb(self) -> Decimal:
        return Decimal(self.weight_bytes) / GB

    @property
    def total_bytes(self) -> int:
        return self.weight_bytes + self.reserve_bytes

    @property
    def total_gib(self) -> Decimal:
        return Decimal(self.total_bytes) / GIB

    @property
    def total_gb(self) -> Decimal:
        return Decimal(self.total_bytes) / GB

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: exact byte counts, unrounded GiB/GB figures and the stated limits."""
        return {
            "parameters": self.parameters,
            "bits": self.bits,
            "bytes_per_parameter": self.bytes_per_parameter,
            "weight_bytes": self.weight_bytes,
            "weight_gib": float(self.weight_gib),
            "weight_gb": float(self.weight_gb),
            "reserve_gib": float(self.reserve_gib),
            "reserve_bytes": self.reserve_bytes,
            "reserve_is_assumption": True,
            "total_bytes": self.total_bytes,
            "total_gib": float(self.total_gib),
            "total_gb": float(self.total_gb),
            "gib_bytes": GIB,
            "gb_bytes": GB,
            "not_included": list(self.not_included),
            "predicts_fit": False,
        }


def round2(value: Decimal) -> Decimal:
    """Round half up to two decimals, for display."""
    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def parse_parameter_count(text: str) -> int:
    """Read a positive whole parameter count written as 7000000000 or 7e9; raise UsageError otherwise."""
    try:
        value = Decimal(text.strip().replace("_", ""))
    except InvalidOperation:
        raise UsageError(f"--parameters {text!r} is not a number; give a positive whole count such as 7000000000 or 7e9") from None
    if not value.is_finite() or value != value.to_integral_value():
        raise UsageError(f"--parameters {text!r} is not a whole number of parameters")
    if value <= 0:
        raise UsageError(f"--parameters must be positive, got {text!r}")
    return int(value)


def parse_reserve_gib(text: str) -> Decimal:
    """Read a non-negative finite reserve in GiB; raise UsageError otherwise."""
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise UsageError(f"--reserve-gib {text!r} is not a number of GiB") from None
    if not value.is_finite() or value < 0:
        raise UsageError(f"--reserve-gib must be a finite number >= 0, got {text!r}")
    return value


def estimate_weights(parameters: int, bits: int, reserve_gib: Decimal | int | str = 0) -> WeightEstimate:
    """Weights of `parameters` stored at `bits` each, rounded up to whole bytes per parameter, plus a reserve."""
    if isinstance(parameters, bool) or not isinstance(parameters, int) or parameters <= 0:
        raise UsageError(f"the parameter count must be a positive whole number, got {parameters!r}")
    if isinstance(bits, bool) or not isinstance(bits, int) or bits <= 0:
        raise UsageError(f"--bits must be a positive whole number of bits per parameter, got {bits!r}")
    reserve = parse_reserve_gib(str(reserve_gib))
    bytes_per_parameter = (bits + 7) // 8
    return WeightEstimate(
        parameters=parameters,
        bits=bits,
        bytes_per_parameter=bytes_per_parameter,
        weight_bytes=parameters * bytes_per_parameter,
        reserve_gib=reserve,
        reserve_bytes=math.ceil(reserve * GIB),
    )


# --------------------------------------------------------------------------- environment


def parse_device(device: str) -> int:
    """Return the index of an explicit `cuda:N` device (ROCm uses the same name); raise UsageError otherwise."""
    match = _DEVICE_RE.match(device)
    if not match:
        raise UsageError(f"--device {device!r} is not an explicit GPU device; give cuda:N, for example cuda:0 "
                         "(PyTorch's ROCm backend uses the same name); the CPU is never measured")
    return int(match.group(1))


def read_driver_version(timeout_s: float = NVIDIA_SMI_TIMEOUT_S) -> str | None:
    """Driver version from `nvidia-smi` (the vendor tool), or None when it is absent or fails."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        proc = subprocess.run(
            [exe, "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=timeout_s, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    for line in proc.stdout.splitlines():
        line = line.strip()
        if line:
            return line[:64]
    return None


def _import_torch() -> tuple[Any, str | None]:
    """Import torch lazily; return (module or None, reason it failed or None)."""
    try:
        import torch  # noqa: PLC0415 - optional, heavy dependency imported only when measuring
    except Exception as exc:  # ImportError, or a broken installation raising something else
        return None, f"PyTorch could not be imported ({type(exc).__name__}: {exc})"
    return torch, None


def collect_environment(device: str, devices_used: int | None = None) -> dict[str, Any]:
    """What the runtime reports for `device`: versions, availability, name and memory; no personal data.

    A machine without PyTorch or without a usable GPU gives a valid result with gpu_available False
    and unavailable_reason set.
    """
    index = parse_device(device)
    env: dict[str, Any] = {
        "python_version": platform.python_version(),
        "torch_version": None,
        "runtime": None,
        "runtime_version": None,
        "driver_version": read_driver_version(),
        "device": device,
        "gpu_available": False,
        "gpu_name": None,
        "gpu_total_memory_bytes": None,
        "visible_device_count": None,
        "devices_used": devices_used,
        "unavailable_reason": None,
    }
    torch, reason = _import_torch()
    if torch is None:
        env["unavailable_reason"] = reason
        return env
    env["torch_version"] = str(torch.__version__)[:64]
    hip = getattr(torch.version, "hip", None)
    cuda = getattr(torch.version, "cuda", None)
    if hip:
        env["runtime"], env["runtime_version"] = "hip", str(hip)[:64]
    elif cuda:
        env["runtime"], env["runtime_version"] = "cuda", str(cuda)[:64]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            available = bool(torch.cuda.is_available())
            count = int(torch.cuda.device_count())
        except Exception as exc:  # a broken driver can raise here
            env["unavailable_reason"] = f"the GPU runtime failed to start ({type(exc).__name__}: {exc})"[:2000]
            return env
    env["visible_device_count"] = count
    if env["runtime"] is None:
        env["unavailable_reason"] = "this PyTorch build has no CUDA or HIP runtime (CPU-only build)"
        return env
    if not available:
        detail = "; ".join(str(w.message) for w in caught)
        env["unavailable_reason"] = ("torch.cuda.is_available() is false: no GPU is accessible to this process"
                                     + (f" ({detail})" if detail else ""))[:2000]
        return env
    if index >= count:
        env["unavailable_reason"] = f"device {device} does not exist: {count} GPU(s) visible (cuda:0 to cuda:{count - 1})"
        return env
    try:
        props = torch.cuda.get_device_properties(index)
    except Exception as exc:
        env["unavailable_reason"] = f"the runtime could not describe {device} ({type(exc).__name__}: {exc})"[:2000]
        return env
    env["gpu_available"] = True
    env["gpu_name"] = str(props.name)[:200]
    env["gpu_total_memory_bytes"] = int(props.total_memory)
    return env


# --------------------------------------------------------------------------- output files


def check_new_output(path: Path) -> None:
    """Refuse an output path that exists or whose folder is missing, before any work is done."""
    if os.path.lexists(path):
        raise OutputExistsError(f"{path} already exists; nothing is overwritten: choose a new file name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"the folder of {path} does not exist; create it first")


def write_new_json(path: Path, document: dict[str, Any]) -> None:
    """Write `document` to a path that must not exist yet, atomically: a temporary file, then a hard link.

    If the path appeared meanwhile, nothing is overwritten and OutputExistsError is raised.
    """
    check_new_output(path)
    text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    parent = path.parent if str(path.parent) else Path(".")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp_name, path)
        except FileExistsError:
            raise OutputExistsError(f"{path} appeared while measuring; nothing is overwritten") from None
        except OSError:
            # A file system without hard links: exclusive creation still refuses an existing file.
            try:
                with open(path, "x", encoding="utf-8") as handle:
                    handle.write(text)
            except FileExistsError:
                raise OutputExistsError(f"{path} appeared while measuring; nothing is overwritten") from None
    finally:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass


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


class _CudaCounters:
    """The PyTorch allocator counters of one GPU device, with device synchronisation."""

    def __init__(self, torch: Any, device: Any) -> None:
        self._cuda = torch.cuda
        self._device = device

    def synchronize(self) -> None:
        self._cuda.synchronize(self._device)

    def reset_peaks(self) -> None:
        self._cuda.reset_peak_memory_stats(self._device)

    def allocated(self) -> int:
        return int(self._cuda.memory_allocated(self._device))

    def reserved(self) -> int:
        return int(self._cuda.memory_reserved(self._device))

    def peak_allocated(self) -> int:
        return int(self._cuda.max_memory_allocated(self._device))

    def peak_reserved(self) -> int:
        return int(self._cuda.max_memory_reserved(self._device))


def _read(reader: Callable[[], int]) -> int | None:
    """A counter reading, or None when the runtime cannot answer (after a device error, say)."""
    try:
        return reader()
    except Exception:
        return None


def utc_now() -> str:
    """The current moment in UTC as YYYY-MM-DDTHH:MM:SS.ffffffZ: the form the measurement schema takes."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _phase_row(name: str, repeat: int | None, iterations: int) -> dict[str, Any]:
    return {
        "phase": name, "repeat": repeat, "iterations": iterations, "status": "ok", "error": None,
        "elapsed_seconds": None,
        "baseline_allocated_bytes": None, "baseline_reserved_bytes": None,
        "final_allocated_bytes": None, "final_reserved_bytes": None,
        "peak_allocated_bytes": None, "peak_reserved_bytes": None,
    }


def _run_phase(torch: Any, counters: Any, name: str, fn: Callable[[], Any],
               repeat: int | None = None, iterations: int = 1) -> tuple[dict[str, Any], Any]:
    """Measure one phase: sync, baselines, reset peaks, time fn and sync, then final values and absolute peaks.

    Returns the row and fn's result, kept alive until after the final readings; the caller frees it.
    An out-of-memory or runtime error makes the row failed (no duration) and the result None.
    started_at and ended_at (UTC) bracket the timed part, a failed one too: they are what proves that the
    run lay inside the registered window.
    """
    row = _phase_row(name, repeat, iterations)
    counters.synchronize()
    row["baseline_allocated_bytes"] = counters.allocated()
    row["baseline_reserved_bytes"] = counters.reserved()
    counters.reset_peaks()
    result: Any = None
    row["started_at"] = utc_now()
    start = time.perf_counter()
    try:
        result = fn()
        counters.synchronize()
        row["elapsed_seconds"] = time.perf_counter() - start
        row["ended_at"] = utc_now()
    except (torch.cuda.OutOfMemoryError, RuntimeError) as exc:
        row["ended_at"] = utc_now()
        result = None
        row["status"] = "failed"
        row["elapsed_seconds"] = None
        kind = "out of memory" if isinstance(exc, torch.cuda.OutOfMemoryError) else "runtime error"
        row["error"] = f"{kind}: {type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS]
        del exc
        try:
            counters.synchronize()
        except Exception:
            pass
    row["final_allocated_bytes"] = _read(counters.allocated)
    row["final_reserved_bytes"] = _read(counters.reserved)
    row["peak_allocated_bytes"] = _read(counters.peak_allocated)
    row["peak_reserved_bytes"] = _read(counters.peak_reserved)
    return row, result


def _measure(torch: Any, config: RunConfig, environment: dict[str, Any], counters: Any,
             device: Any) -> MeasurementResult:
    """Run the phases on `device` with `counters`; stop after the first failed phase."""
    dtype = getattr(torch, config.dtype)
    width, hidden = config.width, HIDDEN_FACTOR * config.width
    document: dict[str, Any] = {
        "schema_version": "1",
        "tool": f"gpu-audit {__version__} measure",
        "synthetic_data": False,
        "environment": environment,
        "configuration": config.to_dict(),
        "synthetic_model": synthetic_model_description(width, config.batch, config.context),
        "phases": [],
    }
    phases: list[dict[str, Any]] = document["phases"]
    result = MeasurementResult(document=document, phases=phases)

    def record(row: dict[str, Any]) -> bool:
        phases.append(row)
        if row["status"] != "ok":
            result.failed = True
            return False
        return True

    if config.seed is not None:
        torch.manual_seed(config.seed)  # seeds the CPU and every GPU generator

    with torch.inference_mode():
        def load() -> Any:
            model = torch.nn.Sequential(
                torch.nn.Linear(width, hidden),
                torch.nn.GELU(),
                torch.nn.Linear(hidden, width),
            )
            model.eval()
            model.to(dtype=dtype)
            return model.to(device=device)

        row, model = _run_phase(torch, counters, "model_load", load)
        if not record(row):
            return result

        def make_inputs() -> Any:
            return torch.randn(config.batch, config.context, width, device=device, dtype=dtype)

        row, inputs = _run_phase(torch, counters, "inputs", make_inputs)
        if not record(row):
            return result

        row, out = _run_phase(torch, counters, "cold_forward", lambda: model(inputs))
        del out  # freed before the next pass
        if not record(row):
            return result

        def warm_up() -> Any:
            last = None
            for _ in range(config.warmup):
                last = None  # each output is freed before the next pass
                last = model(inputs)
            return last

        row, out = _run_phase(torch, counters, "warmup", warm_up, iterations=config.warmup)
        del out
        if not record(row):
            return result

        for repeat in range(1, config.repeats + 1):
            row, out = _run_phase(torch, counters, "warm_forward", lambda: model(inputs), repeat=repeat)
            del out
            if not record(row):
                return result
    return result


def run_measurement(config: RunConfig) -> MeasurementResult:
    """Measure the synthetic MLP on the configured GPU, phase by phase.

    Raises EnvironmentProblemError, and measures nothing, when PyTorch cannot be imported or the device
    is not an accessible GPU: there is never a fallback to the CPU.
    """
    torch, reason = _import_torch()
    if torch is None:
        raise EnvironmentProblemError(f"cannot measure: {reason}; install a PyTorch build that matches the GPU "
                                      "and its driver. No file was written")
    environment = collect_environment(config.device, devices_used=1)
    if not environment["gpu_available"]:
        raise EnvironmentProblemError(f"cannot measure on {config.device}: {environment['unavailable_reason']}. "
                                      "Nothing is measured on the CPU instead, and no file was written")
    device = torch.device(config.device)
    return _measure(torch, config, environment, _CudaCounters(torch, device), device)


def warm_forward_summary(phases: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Median, minimum and maximum of the successful warm_forward durations, or None when there are none."""
    import statistics  # noqa: PLC0415

    times = [p["elapsed_seconds"] for p in phases if p["phase"] == "warm_forward" and p["status"] == "ok"]
    if not times:
        return None
    return {"count": len(times), "median_seconds": statistics.median(times), "min_seconds": min(times),
            "max_seconds": max(times)}

