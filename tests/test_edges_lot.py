"""Edges of a run over several GPUs of a lot (issue 51): a GPU listed twice, a share missing from one pass, a GPU
that classified 0 or 1 text, the pass's peak against its GPUs' highest, names alike in their first 8 characters."""

from __future__ import annotations

from typing import Any

import pytest

from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.recompute.evidence import lotdevices

DEVICES = ("gpu-slot-0", "gpu-slot-1")  # alike in their first 8 characters


def _share(device: str, completed: int = 6, status: str = "ok", alloc: int | None = 40,
           res: int | None = 50, texts: int = 6) -> dict[str, Any]:
    return {"device": device, "texts": texts, "completed": completed, "status": status, "error": None,
            "elapsed_seconds": 1.0, "baseline_allocated_bytes": 10, "baseline_reserved_bytes": 20,
            "final_allocated_bytes": 10, "final_reserved_bytes": 20, "peak_allocated_bytes": alloc,
            "peak_reserved_bytes": res}


def _pass(name: str, shares: list[dict[str, Any]] | None = None, status: str = "ok", repeat: int | None = None,
          alloc: int | None = 40, res: int | None = 50) -> dict[str, Any]:
    row: dict[str, Any] = {"phase": name, "repeat": repeat, "status": status, "elapsed_seconds": 1.0,
                           "baseline_allocated_bytes": 10, "baseline_reserved_bytes": 20, "final_allocated_bytes": 10,
                           "final_reserved_bytes": 20, "peak_allocated_bytes": alloc, "peak_reserved_bytes": res}
    if shares is None:
        shares = [_share(d) for d in DEVICES]
    return {**row, "devices": shares} if shares else row


def _doc(phases: list[dict[str, Any]] | None = None, used: int = 2,
         devices: list[tuple[str, str | None]] | None = None) -> MeasurementDoc:
    listed = devices if devices is not None else [(d, f"GPU-{i}") for i, d in enumerate(DEVICES)]
    data: dict[str, Any] = {
        "schema_version": "1",
        "environment": {"python_version": "3.12.3", "device": "cuda:0", "gpu_available": True, "devices_used": used,
                        "devices": [{"device": d, "gpu_name": "NVIDIA H200", "gpu_uuid": u} for d, u in listed]},
        "configuration": {"device": "cuda:0", "batch": 1, "dtype": "bfloat16", "warmup": 1, "repeats": 1},
        "phases": phases if phases is not None else [
            _pass("model_load", []), _pass("inputs", []), _pass("cold_forward"), _pass("warmup"),
            _pass("warm_forward", repeat=1)]}
    return MeasurementDoc.of(data)


def _found(doc: MeasurementDoc) -> list[tuple[str, str | None, object, object]]:
    return [(f.code, f.field, f.claimed, f.recomputed) for f in lotdevices.check_devices(doc, "m.json")]


def test_a_clean_run_over_two_gpus_and_one_over_one() -> None:
    assert _found(_doc()) == []
    one = MeasurementDoc.of({"schema_version": "1",
                             "environment": {"python_version": "3", "device": "cuda:0", "gpu_available": True},
                             "configuration": {"device": "cuda:0", "batch": 1, "dtype": "x", "warmup": 1,
                                               "repeats": 1},
                             "phases": [_pass("cold_forward", [], alloc=99)]})
    assert lotdevices.check_devices(one, "m.json") == [] and lotdevices.device_uses(one) is None


@pytest.mark.parametrize(("doc", "found"), [
    (_doc(used=3), [("lot-devices-count", "/environment/devices_used", 3, 2)]),
    (_doc(devices=[("gpu-slot-0", "GPU-0"), ("gpu-slot-0", "GPU-1")]),
     [("lot-device-twice", "/environment/devices", "gpu-slot-0", None)]),
    (_doc(devices=[("gpu-slot-0", "GPU-0"), ("gpu-slot-1", "GPU-0")]),
     [("lot-device-twice", "/environment/devices", "GPU-0", None)]),
    (_doc(devices=[("gpu-slot-0", None), ("gpu-slot-1", None)]), []),  # no UUID reported: nothing to compare
])
def test_each_gpu_listed_once(doc: MeasurementDoc, found: list[tuple[str, str, object, object]]) -> None:
    assert [f for f in _found(doc) if f[0] != "lot-share-missing"] == found


SHARE_MISSING = "lot-share-missing"


@pytest.mark.parametrize(("phase", "found"), [
    (_pass("warm_forward", [_share("gpu-slot-0")], repeat=1),
     [(SHARE_MISSING, "/phases/0/devices", ["gpu-slot-0"], list(DEVICES))]),
    (_pass("warm_forward", [_share("gpu-slot-1"), _share("gpu-slot-0")], repeat=1),
     [(SHARE_MISSING, "/phases/0/devices", ["gpu-slot-1", "gpu-slot-0"], list(DEVICES))]),
    (_pass("warm_forward", [], repeat=1), [(SHARE_MISSING, "/phases/0/devices", [], list(DEVICES))]),
    (_pass("warm_forward", [], status="failed", repeat=1), []),  # failed before any GPU reported
    (_pass("model_load", []), []),  # no pass
    (_pass("warm_forward", [_share("gpu-slot-0", completed=0), _share("gpu-slot-1")], repeat=1),
     [("lot-device-idle", "/phases/0/devices/0/completed", 0, 6)]),
    (_pass("warm_forward", [_share("gpu-slot-0", completed=1), _share("gpu-slot-1")], repeat=1), []),
    (_pass("warm_forward", [_share("gpu-slot-0"), _share("gpu-slot-1", status="failed")], repeat=1),
     [("lot-device-idle", "/phases/0/devices/1/completed", 6, 6)]),
    (_pass("warm_forward", [_share("gpu-slot-0", completed=0), _share("gpu-slot-1")], status="failed", repeat=1),
     []),
    (_pass("warm_forward", [_share("gpu-slot-0", alloc=30), _share("gpu-slot-1", alloc=45)], alloc=30, repeat=1),
     [("lot-peak-mismatch", "/phases/0/peak_allocated_bytes", 30, 45)]),
    (_pass("warm_forward", [_share("gpu-slot-0", res=60), _share("gpu-slot-1", res=45)], res=105, repeat=1),
     [("lot-peak-mismatch", "/phases/0/peak_reserved_bytes", 105, 60)]),  # summed, not the highest
    (_pass("warm_forward", [_share("gpu-slot-0", alloc=30), _share("gpu-slot-1", alloc=45)], alloc=45, repeat=1), []),
    (_pass("warm_forward", [_share("gpu-slot-0", alloc=30), _share("gpu-slot-1", alloc=45)], alloc=None, repeat=1),
     []),
    (_pass("warm_forward", [_share("gpu-slot-0", alloc=None), _share("gpu-slot-1", alloc=None)], repeat=1), []),
])
def test_each_pass_holds_a_working_share_per_gpu(phase: dict[str, Any],
                                                 found: list[tuple[str, str, object, object]]) -> None:
    assert _found(_doc([phase])) == found


def test_the_missing_share_and_the_idle_gpu_are_named() -> None:
    [some] = lotdevices.check_devices(_doc([_pass("cold_forward", [_share("gpu-slot-1")])]), "m.json")
    assert some.message == "cold_forward lists shares for gpu-slot-1 where the run used gpu-slot-0, gpu-slot-1"
    [none] = lotdevices.check_devices(_doc([_pass("cold_forward", [])]), "m.json")
    assert none.message.startswith("cold_forward lists shares for no GPU where")
    [idle] = lotdevices.check_devices(_doc([_pass("warm_forward", [_share("gpu-slot-0", completed=0),
                                                                   _share("gpu-slot-1")], repeat=3)]), "m.json")
    assert idle.message.startswith("gpu-slot-0 classified 0 of 6 texts in warm_forward 3: ")
    [peak] = lotdevices.check_devices(_doc([_pass("warm_forward", [_share("gpu-slot-0", alloc=30),
                                                                   _share("gpu-slot-1", alloc=45)], alloc=30)]), "m")
    assert "is not the highest of its GPUs' readings (45)" in peak.message


def test_each_share_holds_the_memory_invariants() -> None:
    doc = _doc([_pass("warm_forward", [_share("gpu-slot-0"), _share("gpu-slot-1", alloc=60)], repeat=1, alloc=60)])
    assert [(f.code, f.field) for f in lotdevices.check_devices(doc, "m.json")] == [
        ("allocated-exceeds-reserved", "/phases/0/devices/1/peak_allocated_bytes")]


def _uses(phases: list[dict[str, Any]]) -> list[tuple[object, ...]]:
    return [(u.device, u.texts, u.passes, u.worked, u.peak_allocated_bytes, u.peak_reserved_bytes)
            for u in lotdevices.device_uses(_doc(phases)) or ()]


@pytest.mark.parametrize(("phases", "uses"), [
    ([_pass("cold_forward"), _pass("warm_forward", repeat=1)],
     [("gpu-slot-0", 6, 2, True, 40, 50), ("gpu-slot-1", 6, 2, True, 40, 50)]),
    ([_pass("cold_forward", [_share("gpu-slot-0", alloc=30, res=35), _share("gpu-slot-1", alloc=20, res=25)]),
      _pass("warmup", [_share("gpu-slot-0", alloc=90, res=95), _share("gpu-slot-1", alloc=90, res=95)]),
      _pass("warm_forward", [_share("gpu-slot-0", alloc=None, res=None), _share("gpu-slot-1", alloc=25, res=45)],
            repeat=1)],
     [("gpu-slot-0", 6, 2, True, 30, 35), ("gpu-slot-1", 6, 2, True, 25, 45)]),  # the warm-up is not timed
    ([_pass("cold_forward", [_share("gpu-slot-0")]), _pass("warm_forward", repeat=1)],
     [("gpu-slot-0", 6, 2, True, 40, 50), ("gpu-slot-1", 6, 1, False, 40, 50)]),  # absent from one pass
    ([_pass("cold_forward", [_share("gpu-slot-1"), _share("gpu-slot-0")]), _pass("warm_forward", repeat=1)],
     [("gpu-slot-0", 6, 1, False, 40, 50), ("gpu-slot-1", 6, 1, False, 40, 50)]),  # shares out of rank order
    ([_pass("cold_forward", [_share("gpu-slot-0", completed=1), _share("gpu-slot-1", completed=0)])],
     [("gpu-slot-0", 6, 1, True, 40, 50), ("gpu-slot-1", 6, 1, False, 40, 50)]),
    ([_pass("cold_forward", [_share("gpu-slot-0", texts=7, completed=0), _share("gpu-slot-1", texts=5)]),
      _pass("warm_forward", [_share("gpu-slot-0", texts=6), _share("gpu-slot-1", texts=6)], repeat=1)],
     [("gpu-slot-0", 7, 2, False, 40, 50), ("gpu-slot-1", 6, 2, True, 40, 50)]),  # idle in one pass of two
    ([_pass("cold_forward", status="failed"), _pass("warm_forward", repeat=1, status="failed")],
     [("gpu-slot-0", 0, 0, False, None, None), ("gpu-slot-1", 0, 0, False, None, None)]),  # nothing timed
])
def test_each_gpu_over_its_timed_passes(phases: list[dict[str, Any]], uses: list[tuple[object, ...]]) -> None:
    assert _uses(phases) == uses
