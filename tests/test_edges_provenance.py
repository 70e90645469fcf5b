"""Edges of what the evidence is (issue 51): synthetic or measured in every file or some, a driver blank or the
runtime's copied, a test run or the CPU in any spelling, the rented GPU by name in another case, the GPU count."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.load.inputs.protocol import ExperimentSpec, Protocol
from generator.audit.load.inputs.rows import GridRow
from generator.audit.recompute.evidence import provenance, rentaldevice
from generator.audit.recompute.money.cost import Tariff

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "inputs" / "example"
_PROTOCOL = json.loads((EXAMPLE / "protocol.json").read_text(encoding="utf-8"))
_DOC = json.loads((EXAMPLE / "measurements" / "rtx4090-batch-b1.json").read_text(encoding="utf-8"))


def _doc(env: dict[str, Any] | None = None, config: dict[str, Any] | None = None, **changes: Any) -> MeasurementDoc:
    data = copy.deepcopy(_DOC)
    data["environment"].update(env or {})
    data["configuration"].update(config or {})
    data.update(changes)
    return MeasurementDoc.of(data)


def _protocol(synthetic: bool = True, variants: list[dict[str, Any]] | None = None, **exp: Any) -> Protocol:
    data = copy.deepcopy(_PROTOCOL["experiments"][0])
    data["variants"] = variants or [{"id": "b1", "value": 1, "measurement": "a.json"},
                                    {"id": "b4", "value": 4, "measurement": "b.json"}]
    data["fixed"].update(exp.pop("fixed", {}))
    data.update(exp)
    protocol = Protocol.of(_PROTOCOL)
    return dataclasses.replace(protocol, synthetic_data=synthetic, experiments=(ExperimentSpec.of(data),))


def _synthetic(declared: bool, a: bool | None, b: bool | None) -> list[tuple[str, str, object, object]]:
    docs = {"a.json": _doc(synthetic_data=a), "b.json": _doc(synthetic_data=b)}
    found = [f for f in provenance.measurement_findings(_protocol(declared), docs)
             if f.code == "synthetic-data-mismatch"]
    return [(f.file, f.message, f.claimed, f.recomputed) for f in found]


def test_synthetic_data_agrees_in_every_file() -> None:
    assert _synthetic(True, True, True) == [] and _synthetic(False, False, None) == []
    assert _synthetic(True, False, False) == [(
        "protocol.json", "protocol.json declares synthetic_data true, while every measurement (2) holds measured "
        "figures (synthetic_data false)", True, False)]
    assert _synthetic(False, True, None) == [(
        "protocol.json", "protocol.json declares synthetic_data false, while every measurement (1) holds generated "
        "figures (synthetic_data true)", False, True)]
    assert _synthetic(True, True, False) == [(
        "b.json", "b.json holds measured figures (synthetic_data false), while protocol.json declares synthetic_data "
        "true: it cannot be the evidence of rtx4090-batch/b4", False, True)]


def test_the_lab_mlp_is_named_with_the_configurations_it_stands_for() -> None:
    mlp = _doc(synthetic_model={"architecture": "MLP 3x256", "parameter_count": 1000})
    protocol = _protocol(variants=[{"id": "b1", "value": 1, "measurement": "a.json"},
                                   {"id": "b4", "value": 4, "measurement": "b.json"},
                                   {"id": "b8", "value": 8, "measurement": "a.json"},
                                   {"id": "b9", "value": 9, "measurement": "gone.json"}])
    found = [f for f in provenance.measurement_findings(protocol, {"a.json": mlp, "b.json": _doc()})]
    assert [(f.code, f.file) for f in found] == [("synthetic-model-measurement", "a.json")]
    assert found[0].message.endswith("it cannot be the memory evidence of rtx4090-batch/b1, rtx4090-batch/b8")


@pytest.mark.parametrize(("driver", "runtime", "device", "code"), [
    ("570.86.15", "12.8", "cuda:0", None),
    ("", "12.8", "cuda:0", "driver-not-recorded"),
    ("   ", "12.8", "cuda:0", "driver-not-recorded"),
    (None, "12.8", "cuda:0", "driver-not-recorded"),
    ("", "12.8", " CPU ", None),  # a test run on the processor has no GPU driver
    (None, None, None, "driver-not-recorded"),
    ("12.8", "12.8", "cpu", "driver-is-runtime-version"),
    (" 12.8", "12.8", "cuda:0", "driver-is-runtime-version"),
    ("12.8", "12.8 ", "cuda:0", "driver-is-runtime-version"),
    ("12.8", None, "cuda:0", None),
])
def test_a_grid_row_records_its_driver(driver: str | None, runtime: str | None, device: str | None,
                                       code: str | None) -> None:
    row = GridRow.of({"driver_version": driver, "runtime_version": runtime, "device": device})
    found = provenance.driver_row_findings(row, 4, "grid.csv")
    assert [f.code for f in found] == ([code] if code else [])
    assert all(f.claimed == (driver or "") and f.line == 4 for f in found)


@pytest.mark.parametrize(("driver", "code"), [
    (None, None),  # the Lab's script cannot see it
    ("570.86.15", None),
    ("", "driver-not-recorded"),
    ("12.8", "driver-is-runtime-version"),
])
def test_a_measurement_records_its_driver_or_leaves_it_null(driver: str | None, code: str | None) -> None:
    found = provenance.measurement_findings(_protocol(), {"a.json": _doc({"driver_version": driver})})
    assert [(f.code, f.field) for f in found] == ([(code, "/environment/driver_version")] if code else [])


@pytest.mark.parametrize(("name", "gpu", "model", "rented"), [
    ("NVIDIA H200", "h200", "H200", True),
    ("NVIDIA H200", "h100", "H200", True),  # by its model name when the id differs
    ("NVIDIA H200", "h200", None, True),
    ("NVIDIA H100", "h200", None, False),
    ("NVIDIA", "nvidia", None, False),  # vendor words alone name no model
    ("Tesla V100", "v100", None, True),
    ("V100 NVIDIA", "v100", None, False),  # a vendor word after the model is part of the name
    ("NVIDIA H100 80GB HBM3", "h100-80gb", None, True),
    ("NVIDIA H100 HBM3", "h100-80gb", None, False),
])
def test_the_rented_model_whole(name: str, gpu: str, model: str | None, rented: bool) -> None:
    assert rentaldevice.is_rented_model(name, gpu, model) is rented


def test_the_rented_model_name_is_the_tariffs_for_that_id() -> None:
    tariffs = [Tariff("rtx-4090", None, 7, 1, 1, None, None), Tariff("RTX-4090", "Other", 7, 1, 1, None, None),
               Tariff("h200", "H200", 7, 1, 1, None, None), Tariff("rtx-4090", "GeForce RTX 4090", 30, 1, 1, None,
                                                                   None)]
    assert rentaldevice.rented_model_name(tariffs, "rtx-4090") == "GeForce RTX 4090"
    assert rentaldevice.rented_model_name(tariffs, "b200") is None


@pytest.mark.parametrize(("device", "cpu"), [("cpu", True), (" CPU ", True), ("cpu:0", True), ("cuda:0", False),
                                             (None, False), ("", False)])
def test_the_processor_in_any_spelling(device: str | None, cpu: bool) -> None:
    assert rentaldevice.on_cpu(device) is cpu
    assert [f.code for f in rentaldevice.row_findings(GridRow.of({"device": device}), 3, "g")] == (
        ["device-not-gpu"] if cpu else [])


@pytest.mark.parametrize(("doc", "rows", "test"), [
    (None, [], False),
    (None, ["cuda:0", "cpu"], True),  # one row on the processor is enough
    ("clean", ["cuda:0"], False),
    ("test_run", [], True),
    ("env_cpu", [], True),
    ("config_cpu", [], True),
])
def test_what_makes_a_test_run(doc: str | None, rows: list[str], test: bool) -> None:
    docs = {"clean": _doc(), "test_run": _doc(test_run=True), "env_cpu": _doc({"device": "cpu"}),
            "config_cpu": _doc(config={"device": "cpu"})}
    grid = [GridRow.of({"device": d}) for d in rows]
    assert rentaldevice.is_test_run(docs[doc] if doc else None, grid) is test


def _devices(doc: MeasurementDoc, tariffs: list[Tariff] | None = None, **exp: Any) -> list[tuple[str, str, object]]:
    found = rentaldevice.device_findings(_protocol(**exp), {"a.json": doc}, tariffs or [])
    return [(f.code, str(f.field), f.claimed) for f in found]


@pytest.mark.parametrize(("doc", "found"), [
    (_doc(), []),
    (_doc(test_run=True), [("test-run", "/test_run", True)]),
    (_doc(test_run=False), []),
    (_doc({"device": "cpu"}), [("device-not-gpu", "/environment/device", "cpu")]),
    (_doc(config={"device": "cpu"}), [("device-not-gpu", "/environment/device", "cpu")]),
    (_doc({"gpu_available": False}), [("device-not-gpu", "/environment/gpu_available", "cuda:0")]),
    (_doc({"gpu_available": False}, config={"device": "cuda:1"}),
     [("device-not-gpu", "/environment/gpu_available", "cuda:0")]),  # the device the runtime saw
    (_doc({"gpu_name": "NVIDIA GeForce RTX 4090 D"}),
     [("gpu-not-rented", "/environment/gpu_name", "NVIDIA GeForce RTX 4090 D")]),
    (_doc({"gpu_name": None}), [("gpu-not-rented", "/environment/gpu_name", None)]),
    (_doc({"devices_used": 2}), [("gpu-count-not-registered", "/environment/devices_used", 2)]),
    (_doc({"devices_used": None}), []),
])
def test_a_measurement_of_the_rented_gpu(doc: MeasurementDoc, found: list[tuple[str, str, object]]) -> None:
    assert _devices(doc) == found


def test_the_test_run_finding_and_an_absent_gpu_say_what_they_saw() -> None:
    [test] = rentaldevice.device_findings(_protocol(), {"a.json": _doc(test_run=True)}, [])
    assert (test.claimed, test.recomputed) == (True, False)
    [absent] = rentaldevice.device_findings(_protocol(), {"a.json": _doc({"gpu_available": False})}, [])
    assert "saw no GPU at device cuda:0 (gpu_available false)" in absent.message
    [name] = rentaldevice.device_findings(_protocol(), {"a.json": _doc({"gpu_name": None})}, [])
    assert "no GPU name is recorded, which is not the rented GPU 'rtx-4090'" in name.message
    assert name.recomputed == "rtx-4090"  # the id, where the tariffs name no model
    priced = [Tariff("rtx-4090", "GeForce RTX 4090", 7, 1, 1, None, None)]
    [named] = rentaldevice.device_findings(_protocol(), {"a.json": _doc({"gpu_name": "NVIDIA H100"})}, priced)
    assert named.recomputed == "GeForce RTX 4090" and "'rtx-4090' (GeForce RTX 4090)" in named.message


def _listed(*names: str | None) -> dict[str, Any]:
    return {"devices": [{"device": f"cuda:{i}", "gpu_name": n} for i, n in enumerate(names)],
            "devices_used": len(names)}


@pytest.mark.parametrize(("env", "exp", "found"), [
    ({**_listed("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090 D")}, {"fixed": {"gpu_count": 2}},
     [("gpu-not-rented", "/environment/devices/1/gpu_name", "NVIDIA GeForce RTX 4090 D")]),
    ({"gpu_name": "NVIDIA H100", **_listed("nvidia h100")}, {},
     [("gpu-not-rented", "/environment/gpu_name", "NVIDIA H100"),
      ("gpu-not-rented", "/environment/devices/0/gpu_name", "nvidia h100")]),
    ({**_listed("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090")}, {"fixed": {"gpu_count": 2}}, []),
    ({"devices_used": 2}, {"variable": "gpu_count", "variants": [{"id": "g2", "value": 2, "measurement": "a.json"}],
                           "fixed": {"batch": 1}}, []),
    ({"devices_used": 1}, {"variable": "gpu_count", "variants": [{"id": "g2", "value": 2, "measurement": "a.json"}],
                           "fixed": {"batch": 1}}, [("gpu-count-not-registered", "/environment/devices_used", 1)]),
])
def test_every_gpu_of_the_lot_is_the_rented_model_in_the_registered_count(
        env: dict[str, Any], exp: dict[str, Any], found: list[tuple[str, str, object]]) -> None:
    assert _devices(_doc(env), **exp) == found


def test_a_file_linked_twice_is_judged_once_and_an_unread_one_not_at_all() -> None:
    protocol = _protocol(variants=[{"id": "b1", "value": 1, "measurement": "a.json"},
                                   {"id": "b4", "value": 4, "measurement": "a.json"},
                                   {"id": "b8", "value": 8, "measurement": "gone.json"}, {"id": "b9", "value": 9}])
    found = rentaldevice.device_findings(protocol, {"a.json": _doc(test_run=True)}, [])
    assert [(f.code, f.file) for f in found] == [("test-run", "a.json")] and "rtx4090-batch/b1" in found[0].message
