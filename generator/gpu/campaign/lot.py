"""Data-parallel runs across the GPUs of one lot: the corpus sharded by torch.distributed, gathered in input order.

The campaign process is rank 0 and keeps its own model; ranks 1..N-1 are helper processes started with
torch.multiprocessing (spawn), each with its own model on its own device. Rank 0 sends each step (load a model,
run a pass over the corpus) to every rank; each rank times its shard between two synchronisations of its device and
reads its allocator counters; the gather that collects the predictions waits for every rank, so the duration
rank 0 measures around a step covers the whole sharded run. NCCL on GPUs, gloo on the CPU (the test suite).
Imports only the standard library and torch.
"""

from __future__ import annotations

import tempfile
from dataclasses import asdict, dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from generator.core.errors import EnvironmentProblemError
from generator.gpu.campaign.campaign_inputs import Settings, classify, read_corpus
from generator.gpu.measure.phases import counters_for, run_phase
from generator.gpu.models.loading import BatchModel, load_model

JOIN_TIMEOUT_S = 60
STEP_TIMEOUT = timedelta(minutes=30)
MEMORY = ("baseline_allocated_bytes", "baseline_reserved_bytes", "peak_allocated_bytes", "peak_reserved_bytes")


def shard_bounds(count: int, world: int) -> list[tuple[int, int]]:
    """Contiguous [start, end) blocks of `count` inputs for `world` ranks, in rank order, sizes differing by at
    most one: concatenated in rank order they give the inputs back in their registered order."""
    base, extra = divmod(count, world)
    bounds, start = [], 0
    for rank in range(world):
        end = start + base + (1 if rank < extra else 0)
        bounds.append((start, end))
        start = end
    return bounds


def lot_devices(first: str, world: int) -> list[str]:
    """The devices of the lot's ranks: cuda:N, cuda:N+1, ... from the first; the CPU for every rank of a test run."""
    if first == "cpu":
        return ["cpu"] * world
    index = int(first.split(":")[1])
    return [f"cuda:{index + rank}" for rank in range(world)]


@dataclass(frozen=True)
class DeviceShare:
    """One rank's part of a step: its device, the texts it was given and completed, its own time and memory."""

    rank: int
    device: str
    texts: int
    completed: int
    status: str
    error: str | None
    elapsed_seconds: float | None
    baseline_allocated_bytes: int | None
    baseline_reserved_bytes: int | None
    peak_allocated_bytes: int | None
    peak_reserved_bytes: int | None

    def record(self) -> dict[str, Any]:
        """The phase row's `devices` entry (measurement schema)."""
        out = asdict(self)
        del out["rank"]
        return out


@dataclass(frozen=True)
class StepResult:
    """What a pass over the corpus gave: the predictions in input order and each device's share."""

    done: list[tuple[str, str]]
    shares: list[DeviceShare]


def _share(torch: Any, model: BatchModel, device: str, rank: int, ids: list[str], texts: list[str],
           batch: int) -> tuple[DeviceShare, list[tuple[str, str]]]:
    """Run one rank's shard as a phase of its own device (phases.run_phase: two synchronisations, its baselines
    and absolute peaks, a failure kept with its error)."""
    done: list[tuple[str, str]] = []
    row, _ = run_phase(torch, counters_for(torch, device), "share", lambda: classify(model, ids, texts, batch, done))
    share = DeviceShare(rank, device, len(ids), len(done), row["status"],
                        None if row["error"] is None else row["error"][:2000], row["elapsed_seconds"],
                        *(row[k] for k in MEMORY))
    return share, done


def _step(torch: Any, rank: int, device: str, models: dict[tuple[str, int], BatchModel], spec: str,
          command: dict[str, Any]) -> tuple[DeviceShare | str | None, list[tuple[str, str]]]:
    """Carry out one command on this rank: load a model (an error text, or None), or run its shard of a pass."""
    key = (command["precision"], command["context"])
    if rank >= command["world"]:
        return None, []  # a step over fewer GPUs than the lot holds: this rank waits
    if command["kind"] == "load":
        if rank == 0:
            return None, []
        try:
            torch.manual_seed(command["seed"])
            models[key] = load_model(spec, device, command["precision"], command["context"])
        except Exception as exc:  # noqa: BLE001 - reported to rank 0, which stops the campaign
            return f"{device}: the model could not be loaded ({type(exc).__name__}: {exc})", []
        return None, []
    ids, texts = read_corpus(Path(command["corpus"]), command["limit"])
    start, end = shard_bounds(len(ids), command["world"])[rank]
    torch.manual_seed(command["seed"])
    return _share(torch, models[key], device, rank, ids[start:end], texts[start:end], command["batch"])


def _helper(rank: int, world: int, store: str, devices: list[str], spec: str) -> None:
    """A helper rank's loop: take each command from rank 0, carry it out, send back its result; stop on "stop"."""
    import torch  # noqa: PLC0415 - the helper is a fresh process
    import torch.distributed as dist  # noqa: PLC0415

    device = devices[rank]
    if device != "cpu":
        torch.cuda.set_device(torch.device(device))
    dist.init_process_group("gloo" if device == "cpu" else "nccl", init_method=f"file://{store}", rank=rank,
                            world_size=world, timeout=STEP_TIMEOUT)
    models: dict[tuple[str, int], BatchModel] = {}
    try:
        while True:
            box: list[Any] = [None]
            dist.broadcast_object_list(box, src=0)
            command = box[0]
            if command["kind"] == "stop":
                break
            result = _step(torch, rank, device, models, spec, command)
            dist.gather_object(result, None, dst=0)
    finally:
        dist.destroy_process_group()


class Lot:
    """Rank 0's side of a data-parallel run over `world` devices: start the helpers, send steps, gather, stop."""

    def __init__(self, torch: Any, spec: str, first_device: str, world: int) -> None:
        import torch.distributed as dist  # noqa: PLC0415
        import torch.multiprocessing as mp  # noqa: PLC0415

        if not dist.is_available():
            raise EnvironmentProblemError("this PyTorch build has no torch.distributed: a run over the lot's "
                                          f"{world} GPUs cannot start")
        self._torch, self._dist, self.world, self.devices = torch, dist, world, lot_devices(first_device, world)
        self._scratch = tempfile.TemporaryDirectory(prefix="gpu-audit-lot-")
        store = str(Path(self._scratch.name) / "store")
        context = mp.get_context("spawn")
        self._helpers = [context.Process(target=_helper, args=(rank, world, store, self.devices, spec), daemon=True)
                         for rank in range(1, world)]
        for process in self._helpers:
            process.start()
        if self.devices[0] != "cpu":
            torch.cuda.set_device(torch.device(self.devices[0]))
        dist.init_process_group("gloo" if self.devices[0] == "cpu" else "nccl", init_method=f"file://{store}",
                                rank=0, world_size=world, timeout=STEP_TIMEOUT)

    def _send(self, command: dict[str, Any]) -> None:
        self._dist.broadcast_object_list([command], src=0)

    def _gather(self, mine: Any) -> list[Any]:
        results: list[Any] = [None] * self.world
        self._dist.gather_object(mine, results, dst=0)
        return results

    def load(self, st: Settings) -> None:
        """The helpers of the first st.gpu_count ranks load the model for these settings (rank 0 keeps the
        campaign's own)."""
        command = {"kind": "load", "seed": st.seed, "precision": st.precision, "context": st.context,
                   "world": st.gpu_count}
        self._send(command)
        errors = [r[0] for r in self._gather((None, [])) if isinstance(r[0], str)]
        if errors:
            raise EnvironmentProblemError("; ".join(errors))

    def run(self, model: BatchModel, corpus: Path, st: Settings, limit: int | None = None) -> StepResult:
        """One pass over the corpus (its first `limit` texts for a warm-up), sharded over st.gpu_count ranks:
        rank 0 runs its block with `model`, the helpers theirs; the predictions come back in input order, with
        each device's share."""
        command = {"kind": "run", "corpus": str(corpus), "batch": st.batch, "seed": st.seed,
                   "precision": st.precision, "context": st.context, "limit": limit, "world": st.gpu_count}
        self._send(command)
        mine = _step(self._torch, 0, self.devices[0], {(st.precision, st.context): model}, "", command)
        results = self._gather(mine)[:st.gpu_count]
        shares = [r[0] for r in results]
        done = [pair for r in results for pair in r[1]]
        return StepResult(done, shares)

    def close(self) -> None:
        """Stop the helpers and leave the process group."""
        try:
            self._send({"kind": "stop"})
            self._dist.destroy_process_group()
        finally:
            for process in self._helpers:
                process.join(JOIN_TIMEOUT_S)
                if process.is_alive():
                    process.kill()
            self._scratch.cleanup()

    def __enter__(self) -> Lot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()



def _merged(passes: list[StepResult]) -> list[DeviceShare]:
    """Each device's share over the passes of one phase (the warm-up's iterations): times added, the highest
    readings kept, failed if any pass failed there."""
    out = []
    for shares in zip(*(p.shares for p in passes), strict=True):
        times = [s.elapsed_seconds for s in shares]
        failed = next((s for s in shares if s.status != "ok"), None)
        high = {k: max((v for v in (getattr(s, k) for s in shares) if v is not None), default=None) for k in MEMORY}
        out.append(DeviceShare(shares[0].rank, shares[0].device, sum(s.texts for s in shares),
                               sum(s.completed for s in shares), "failed" if failed else "ok",
                               failed.error if failed else None,
                               None if failed or None in times else sum(t for t in times if t is not None), **high))
    return out


def sharded_phase(torch: Any, counters: Any, lot: Lot, name: str, model: BatchModel, corpus: Path, st: Settings,
                  repeat: int | None = None, passes: int = 1,
                  limit: int | None = None) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """One phase run data-parallel, timed on rank 0 around the whole sharded work: its row carries each device's
    share (`devices`), and its memory fields the highest reading of any one GPU, never a sum. A share that failed
    fails the phase; the predictions completed are returned either way."""
    results: list[StepResult] = []

    def fn() -> None:
        for _ in range(passes):
            results.append(lot.run(model, corpus, st, limit))
            failed = next((s for s in results[-1].shares if s.status != "ok"), None)
            if failed is not None:
                raise RuntimeError(f"{failed.error} (on {failed.device})")

    row, _ = run_phase(torch, counters, name, fn, repeat=repeat, iterations=passes)
    if not results:
        return row, []
    shares = _merged(results)
    row["devices"] = [s.record() for s in shares]
    for key in MEMORY:
        readings = [getattr(s, key) for s in shares if getattr(s, key) is not None]
        if readings:
            row[key] = max(readings)
    return row, results[-1].done
