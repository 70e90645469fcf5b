"""A measurement JSON (schemas/measurement.schema.json) as frozen dataclasses, built once from a schema-valid one."""

from __future__ import annotations

from dataclasses import dataclass, field

from generator.audit.load.inputs.access import (
    as_int,
    as_object,
    as_objects,
    as_scalar_map,
    as_str,
    opt_bool,
    opt_int,
    opt_number,
    opt_str,
)
from generator.core.jsonvalue import JsonObject, JsonScalar

__all__ = ["Environment", "LotDevice", "MeasuredConfig", "MeasuredModel", "MeasurementDoc", "Phase", "RunRef", "Share",
           "SyntheticModel"]


@dataclass(frozen=True)
class LotDevice:
    """One GPU of a run over several (environment.devices), in rank order."""

    device: str
    gpu_name: str | None
    gpu_uuid: str | None
    gpu_total_memory_bytes: int | None

    @classmethod
    def of(cls, data: JsonObject) -> LotDevice:
        return cls(as_str(data["device"]), opt_str(data.get("gpu_name")), opt_str(data.get("gpu_uuid")),
                   opt_int(data.get("gpu_total_memory_bytes")))


@dataclass(frozen=True)
class Share:
    """One GPU's share of a pass run data-parallel (a phase row's `devices` entry)."""

    device: str
    texts: int
    completed: int
    status: str
    error: str | None
    elapsed_seconds: float | None
    written: dict[str, JsonScalar] = field(compare=False, repr=False)

    def counter(self, key: str) -> float | None:
        """One of its four memory readings, as written; None when null."""
        value = self.written.get(key)
        return value if isinstance(value, int | float) and not isinstance(value, bool) else None

    @classmethod
    def of(cls, data: JsonObject) -> Share:
        return cls(as_str(data["device"]), as_int(data["texts"]), as_int(data["completed"]), as_str(data["status"]),
                   opt_str(data.get("error")), opt_number(data.get("elapsed_seconds")), as_scalar_map(data))


def _without_devices(data: JsonObject) -> JsonObject:
    return {k: v for k, v in data.items() if k != "devices"}


@dataclass(frozen=True)
class Environment:
    """What the runtime reported; `written` keeps it as the file writes it (decision.json copies that)."""

    python_version: str
    torch_version: str | None
    runtime: str | None
    runtime_version: str | None
    driver_version: str | None
    device: str
    gpu_available: bool
    gpu_name: str | None
    gpu_total_memory_bytes: int | None
    visible_device_count: int | None
    devices_used: int | None
    unavailable_reason: str | None
    written: dict[str, JsonScalar] = field(compare=False, repr=False)
    devices: tuple[LotDevice, ...] = ()  # the GPUs of a run over several, in rank order

    @classmethod
    def of(cls, data: JsonObject) -> Environment:
        g = data.get
        return cls(as_str(data["python_version"]), opt_str(g("torch_version")), opt_str(g("runtime")),
                   opt_str(g("runtime_version")), opt_str(g("driver_version")), as_str(data["device"]),
                   bool(opt_bool(data["gpu_available"])), opt_str(g("gpu_name")), opt_int(g("gpu_total_memory_bytes")),
                   opt_int(g("visible_device_count")), opt_int(g("devices_used")), opt_str(g("unavailable_reason")),
                   as_scalar_map(_without_devices(data)),
                   tuple(LotDevice.of(d) for d in as_objects(g("devices") or [])))


@dataclass(frozen=True)
class MeasuredConfig:
    """The configuration actually applied; `written` keeps it as the file writes it."""

    device: str
    batch: int
    context: int | None
    width: int | None
    dtype: str
    warmup: int
    repeats: int
    seed: int | None
    input_order: str | None  # how the runner ordered the inputs, when it says
    written: dict[str, JsonScalar] = field(compare=False, repr=False)

    def setting(self, key: str) -> JsonScalar:
        """A setting named at run time (None when the file does not write it)."""
        return self.written.get(key)

    @classmethod
    def of(cls, data: JsonObject) -> MeasuredConfig:
        g = data.get
        return cls(as_str(data["device"]), as_int(data["batch"]), opt_int(g("context")), opt_int(g("width")),
                   as_str(data["dtype"]), as_int(data["warmup"]), as_int(data["repeats"]), opt_int(g("seed")),
                   opt_str(g("input_order")), as_scalar_map(data))


@dataclass(frozen=True)
class Phase:
    """One measured phase; `written` keeps its keys and values as the file writes them (decision.json copies it)."""

    phase: str
    repeat: int | None
    iterations: int | None
    status: str
    error: str | None
    elapsed_seconds: float | None
    baseline_allocated_bytes: int | None
    baseline_reserved_bytes: int | None
    final_allocated_bytes: int | None
    final_reserved_bytes: int | None
    peak_allocated_bytes: int | None
    peak_reserved_bytes: int | None
    started_at: str | None
    ended_at: str | None
    written: dict[str, JsonScalar] = field(compare=False, repr=False)
    shares: tuple[Share, ...] = ()  # each GPU's share of a pass run data-parallel

    def counter(self, key: str) -> float | None:
        """A memory counter named at run time (one of the six `*_bytes` keys), as written; None when null."""
        value = self.written.get(key)
        return value if isinstance(value, int | float) and not isinstance(value, bool) else None

    def writes(self, key: str) -> bool:
        """Whether the file writes this key (a null included)."""
        return key in self.written

    @property
    def timed(self) -> bool:
        """Whether the file dates the phase (started_at or ended_at written)."""
        return "started_at" in self.written or "ended_at" in self.written

    @classmethod
    def of(cls, data: JsonObject) -> Phase:
        g = data.get
        return cls(as_str(data["phase"]), opt_int(g("repeat")), opt_int(g("iterations")), as_str(data["status"]),
                   opt_str(g("error")), opt_number(g("elapsed_seconds")), opt_int(g("baseline_allocated_bytes")),
                   opt_int(g("baseline_reserved_bytes")), opt_int(g("final_allocated_bytes")),
                   opt_int(g("final_reserved_bytes")), opt_int(g("peak_allocated_bytes")),
                   opt_int(g("peak_reserved_bytes")), opt_str(g("started_at")), opt_str(g("ended_at")),
                   as_scalar_map(_without_devices(data)), tuple(Share.of(d) for d in as_objects(g("devices") or [])))


@dataclass(frozen=True)
class RunRef:
    """The campaign run a measurement file says it describes."""

    experiment_id: str
    variant_id: str


@dataclass(frozen=True)
class SyntheticModel:
    """The Lab's synthetic MLP, when the file measured it."""

    architecture: str
    parameter_count: int


@dataclass(frozen=True)
class MeasuredModel:
    """A real model measured instead of the synthetic MLP (its keys beyond these are open)."""

    name: str
    revision: str | None
    parameter_count: int | None
    written: dict[str, object] = field(compare=False, repr=False)

    def setting(self, key: str) -> object:
        """A key of the model object named at run time, as written (None when absent)."""
        return self.written.get(key)


@dataclass(frozen=True)
class MeasurementDoc:
    """One measurement JSON: the environment seen, the configuration, the model measured and the phases."""

    schema_version: str
    tool: str | None
    synthetic_data: bool | None
    run: RunRef | None
    environment: Environment
    configuration: MeasuredConfig
    synthetic_model: SyntheticModel | None
    model: MeasuredModel | None
    phases: tuple[Phase, ...]
    test_run: bool | None = None  # true: written by a test run (campaign run --allow-cpu-for-tests)

    @classmethod
    def of(cls, data: JsonObject) -> MeasurementDoc:
        """The measurement of a schema-valid document (TypeError on a value of the wrong type)."""
        run, synthetic, model = data.get("run"), data.get("synthetic_model"), data.get("model")
        r = as_object(run) if run is not None else None
        s = as_object(synthetic) if synthetic is not None else None
        m = as_object(model) if model is not None else None
        return cls(
            as_str(data["schema_version"]), opt_str(data.get("tool")), opt_bool(data.get("synthetic_data")),
            RunRef(as_str(r["experiment_id"]), as_str(r["variant_id"])) if r is not None else None,
            Environment.of(as_object(data["environment"])), MeasuredConfig.of(as_object(data["configuration"])),
            SyntheticModel(as_str(s["architecture"]), as_int(s["parameter_count"])) if s is not None else None,
            MeasuredModel(as_str(m["name"]), opt_str(m.get("revision")), opt_int(m.get("parameter_count")), dict(m))
            if m is not None else None,
            tuple(Phase.of(p) for p in as_objects(data["phases"])), opt_bool(data.get("test_run")))
