"""The timing loop of one phase: device synchronisation, allocator baselines and peaks, UTC bounds, failures kept."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

MAX_ERROR_CHARS = 4000


class CudaCounters:
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


class NoCounters:
    """The CPU has no allocator counters: readings are None (not recorded), never 0."""

    def synchronize(self) -> None:
        pass

    def reset_peaks(self) -> None:
        pass

    def allocated(self) -> None:
        return None

    def reserved(self) -> None:
        return None

    peak_allocated = peak_reserved = allocated


def counters_for(torch: Any, device: str) -> CudaCounters | NoCounters:
    """The counters of `device`: the allocator's on a GPU, none on the CPU (test runs only)."""
    return NoCounters() if device == "cpu" else CudaCounters(torch, torch.device(device))


def _read(reader: Callable[[], int | None]) -> int | None:
    """A counter reading, or None when the runtime cannot answer (after a device error, say)."""
    try:
        return reader()
    except Exception:  # noqa: BLE001 - a failed device answers with anything; the reading is then unknown
        return None


def utc_now() -> str:
    """The current moment in UTC as YYYY-MM-DDTHH:MM:SS.ffffffZ: the form the measurement schema takes."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def phase_row(name: str, repeat: int | None, iterations: int) -> dict[str, Any]:
    """A phase row of the measurement schema, ok and with nothing measured yet."""
    return {
        "phase": name, "repeat": repeat, "iterations": iterations, "status": "ok", "error": None,
        "elapsed_seconds": None,
        "baseline_allocated_bytes": None, "baseline_reserved_bytes": None,
        "final_allocated_bytes": None, "final_reserved_bytes": None,
        "peak_allocated_bytes": None, "peak_reserved_bytes": None,
    }


def run_phase(torch: Any, counters: Any, name: str, fn: Callable[[], Any],
              repeat: int | None = None, iterations: int = 1) -> tuple[dict[str, Any], Any]:
    """Measure one phase: sync, baselines, reset peaks, time fn and sync, then final values and absolute peaks.

    Returns the row and fn's result, kept alive until after the final readings; the caller frees it.
    An out-of-memory or runtime error makes the row failed (no duration) and the result None; its error starts
    with "out of memory" for torch.cuda.OutOfMemoryError or a RuntimeError whose message says out of memory.
    started_at and ended_at (UTC) bracket the timed part, a failed one too: they are what proves that the
    run lay inside the registered window.
    """
    row = phase_row(name, repeat, iterations)
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
        oom = isinstance(exc, torch.cuda.OutOfMemoryError) or "out of memory" in str(exc).lower()
        kind = "out of memory" if oom else "runtime error"
        row["error"] = f"{kind}: {type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS]
        del exc
        try:
            counters.synchronize()
        except Exception:  # noqa: BLE001 - the phase has failed already; a second failure adds nothing
            pass
    row["final_allocated_bytes"] = _read(counters.allocated)
    row["final_reserved_bytes"] = _read(counters.reserved)
    row["peak_allocated_bytes"] = _read(counters.peak_allocated)
    row["peak_reserved_bytes"] = _read(counters.peak_reserved)
    return row, result
