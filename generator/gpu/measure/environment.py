"""The environment report: Python, PyTorch, runtime, driver and the GPU a device names, without personal data."""

from __future__ import annotations

import json
import platform
import re
import shutil
import subprocess
import warnings
from typing import Any

from generator.core.errors import UsageError

NVIDIA_SMI_TIMEOUT_S = 10.0
_DEVICE_RE = re.compile(r"^cuda:(\d{1,4})$")


def parse_device(device: str) -> int:
    """Return the index of an explicit `cuda:N` device (ROCm uses the same name); raise UsageError otherwise."""
    match = _DEVICE_RE.match(device)
    if not match:
        raise UsageError(f"--device {device!r} is not an explicit GPU device; give cuda:N, for example cuda:0 "
                         "(PyTorch's ROCm backend uses the same name); the CPU is never measured")
    return int(match.group(1))


def _vendor_tool(args: list[str], timeout_s: float) -> str | None:
    """The standard output of a vendor tool found on PATH, or None when it is absent or fails."""
    exe = shutil.which(args[0])
    if exe is None:
        return None
    try:
        proc = subprocess.run([exe, *args[1:]], capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _first_line(text: str | None) -> str | None:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[0][:64] if lines else None


def _json_driver(text: str | None) -> str | None:
    """The driver version in an AMD tool's JSON: a `driver` object's `version` (amd-smi static --driver) or a
    `Driver version` value (rocm-smi --showdriverversion), wherever it is nested."""
    try:
        stack: list[object] = [json.loads(text or "")]
    except ValueError:
        return None
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            driver = item.get("driver")
            if isinstance(driver, dict) and isinstance(driver.get("version"), str) and driver["version"].strip():
                return str(driver["version"]).strip()[:64]
            for key, value in item.items():
                if key.lower().replace("_", " ") == "driver version" and isinstance(value, str) and value.strip():
                    return value.strip()[:64]
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def read_driver_version(timeout_s: float = NVIDIA_SMI_TIMEOUT_S, runtime: str | None = None) -> str | None:
    """Driver version from the vendor's tool: `nvidia-smi`, or for a HIP runtime (ROCm) `amd-smi` and then
    `rocm-smi`; None when the tool is absent or fails. PyTorch's runtime version is never the driver's."""
    if runtime == "hip":
        return (_json_driver(_vendor_tool(["amd-smi", "static", "--driver", "--json"], timeout_s))
                or _json_driver(_vendor_tool(["rocm-smi", "--showdriverversion", "--json"], timeout_s)))
    return _first_line(_vendor_tool(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                    timeout_s))


def import_torch() -> tuple[Any, str | None]:
    """Import torch lazily; return (module or None, reason it failed or None)."""
    try:
        import torch  # noqa: PLC0415 - optional, heavy dependency imported only when measuring
    except Exception as exc:  # noqa: BLE001 - ImportError, or a broken installation raising something else
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
        "driver_version": None,
        "device": device,
        "gpu_available": False,
        "gpu_name": None,
        "gpu_total_memory_bytes": None,
        "visible_device_count": None,
        "devices_used": devices_used,
        "unavailable_reason": None,
    }
    torch, reason = import_torch()
    if torch is None:
        env["driver_version"] = read_driver_version()
        env["unavailable_reason"] = reason
        return env
    _runtime(torch, env)
    env["driver_version"] = read_driver_version(runtime=env["runtime"])
    env["unavailable_reason"] = _gpu(torch, env, device, index)
    return env


def _runtime(torch: Any, env: dict[str, Any]) -> None:
    """The PyTorch version and the CUDA or HIP version it was built with (not the driver's)."""
    env["torch_version"] = str(torch.__version__)[:64]
    hip = getattr(torch.version, "hip", None)
    cuda = getattr(torch.version, "cuda", None)
    if hip:
        env["runtime"], env["runtime_version"] = "hip", str(hip)[:64]
    elif cuda:
        env["runtime"], env["runtime_version"] = "cuda", str(cuda)[:64]


def _gpu(torch: Any, env: dict[str, Any], device: str, index: int) -> str | None:
    """Fill in the GPU at `index`; the reason it cannot be used, or None when it can."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            available = bool(torch.cuda.is_available())
            count = int(torch.cuda.device_count())
        except Exception as exc:  # noqa: BLE001 - a broken driver can raise anything here; it is reported
            return f"the GPU runtime failed to start ({type(exc).__name__}: {exc})"[:2000]
    env["visible_device_count"] = count
    if env["runtime"] is None:
        return "this PyTorch build has no CUDA or HIP runtime (CPU-only build)"
    if not available:
        detail = "; ".join(str(w.message) for w in caught)
        return ("torch.cuda.is_available() is false: no GPU is accessible to this process"
                + (f" ({detail})" if detail else ""))[:2000]
    if index >= count:
        return f"device {device} does not exist: {count} GPU(s) visible (cuda:0 to cuda:{count - 1})"
    try:
        props = torch.cuda.get_device_properties(index)
    except Exception as exc:  # noqa: BLE001 - the runtime's own failure is the report, not a crash
        return f"the runtime could not describe {device} ({type(exc).__name__}: {exc})"[:2000]
    env["gpu_available"] = True
    env["gpu_name"] = str(props.name)[:200]
    env["gpu_total_memory_bytes"] = int(props.total_memory)
    return None


def lot_environment(torch: Any, env: dict[str, Any], devices: list[str]) -> dict[str, Any]:
    """The environment of a run over several GPUs of a lot: each GPU's name, UUID and memory, in rank order, and
    devices_used their number. A CPU test run (no GPU) keeps the environment as it is."""
    if devices[0] == "cpu" or len(devices) < 2:
        return env
    listed = []
    for device in devices:
        props = torch.cuda.get_device_properties(parse_device(device))
        uuid = getattr(props, "uuid", None)
        listed.append({"device": device, "gpu_name": str(props.name)[:200],
                       "gpu_uuid": None if uuid is None else str(uuid)[:64],
                       "gpu_total_memory_bytes": int(props.total_memory)})
    return {**env, "devices_used": len(devices), "devices": listed}
