"""What the evidence is: generated or measured, the campaign's classifier or the Lab's MLP, and a driver observed."""

from __future__ import annotations

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.inputs.rows import GridRow

E = Severity.ERROR
PROTOCOL_FILE = "protocol.json"
_DRIVER_RULE = ("the driver is recorded apart, with the provider's tool: the runtime (CUDA or ROCm) version built into "
                "PyTorch is not the driver version")


def _linked(protocol: Protocol, measurements: dict[str, MeasurementDoc]) -> list[tuple[str, str, MeasurementDoc]]:
    """(configuration, file, document) of every measurement a variant links and that could be read."""
    out = []
    for exp in protocol.experiments:
        for variant in exp.variants:
            rel = variant.measurement
            if rel and measurements.get(rel) is not None:
                out.append((f"{exp.id}/{variant.id}", rel, measurements[rel]))
    return out


def _synthetic_flags(protocol: Protocol, linked: list[tuple[str, str, MeasurementDoc]]) -> list[Finding]:
    """The protocol's synthetic_data agrees with every measurement it rests on.

    When every measurement disagrees, the protocol is what misstates the campaign (an error on it, which
    withholds the answer); otherwise each measurement that disagrees is wrong evidence for its configuration.
    """
    declared = protocol.synthetic_data
    flags = [(name, rel, doc.synthetic_data) for name, rel, doc in linked
             if isinstance(doc.synthetic_data, bool)]
    wrong = [(name, rel, flag) for name, rel, flag in flags if flag != declared]
    if not wrong:
        return []
    word = {True: "generated figures (synthetic_data true)", False: "measured figures (synthetic_data false)"}
    fix = ("write synthetic_data as the figures are: generated figures never pass for measured ones, and a campaign "
           "declared synthetic does not rest on measurements")
    if len(wrong) == len(flags):
        return [make_finding("synthetic-data-mismatch", E, PROTOCOL_FILE,
                             f"protocol.json declares synthetic_data {str(declared).lower()}, while every measurement "
                             f"({len(flags)}) holds {word[not declared]}", field="/synthetic_data",
                             claimed=declared, recomputed=not declared,
                             rule="the protocol's synthetic_data agrees with every measurement", fix=fix)]
    return [make_finding("synthetic-data-mismatch", E, rel,
                         f"{rel} holds {word[flag]}, while protocol.json declares synthetic_data "
                         f"{str(declared).lower()}: it cannot be the evidence of {name}", field="/synthetic_data",
                         claimed=flag, recomputed=declared,
                         rule="the protocol's synthetic_data agrees with every measurement", fix=fix)
            for name, rel, flag in wrong]


def _synthetic_model(name: str, rel: str, doc: MeasurementDoc) -> list[Finding]:
    """The Lab's synthetic MLP measures its own memory, never the campaign's classifier's."""
    if doc.synthetic_model is None:
        return []
    architecture = doc.synthetic_model.architecture
    return [make_finding("synthetic-model-measurement", E, rel,
                         f"{rel} measured the Lab's synthetic MLP ({architecture}), not the classifier the campaign "
                         f"runs: it cannot be the memory evidence of {name}", field="/synthetic_model",
                         claimed="synthetic_model", recomputed="model",
                         rule="the memory evidence of a configuration is a measurement of its own model; the Lab's "
                              "MLP is neither an LLM nor a representative benchmark",
                         fix=f"measure {name} with the campaign's model (gpu-audit campaign run) and link that file")]


def _driver(value: str | None, runtime: str | None) -> str | None:
    """What is wrong with a recorded driver version: nothing (None), empty, or the runtime version copied."""
    if value is None or not str(value).strip():
        return "empty"
    if runtime is not None and str(value).strip() == str(runtime).strip():
        return "runtime"
    return None


def _driver_finding(file: str, problem: str, value: str, runtime: str | None, *, field: str,
                    line: int | None = None) -> Finding:
    if problem == "empty":
        return make_finding("driver-not-recorded", E, file, "driver_version is empty: the driver the runs used is "
                            "not recorded", claimed=value, rule=_DRIVER_RULE,
                            fix="record the driver with the provider's tool (nvidia-smi, rocm-smi)", line=line,
                            field=field)
    return make_finding("driver-is-runtime-version", E, file,
                        f"driver_version {value} is the runtime version {runtime}: the CUDA or ROCm version "
                        "PyTorch was built with is not the driver", claimed=value, recomputed=runtime,
                        rule=_DRIVER_RULE, fix="record the driver with the provider's tool (nvidia-smi, rocm-smi)",
                        line=line, field=field)


def driver_row_findings(row: GridRow, line: int, grid_file: str) -> list[Finding]:
    """A grid row's driver_version: recorded, and not the runtime version copied."""
    problem = _driver(row.driver_version, row.runtime_version)
    if problem is None or (problem == "empty" and str(row.device or "").strip().lower() == "cpu"):
        return []  # a run on the processor (campaign run --allow-cpu-for-tests) has no GPU driver to record
    return [_driver_finding(grid_file, problem, row.driver_version or "", row.runtime_version,
                            line=line, field="driver_version")]


def _measured_driver(rel: str, doc: MeasurementDoc) -> list[Finding]:
    """A measurement may leave the driver unrecorded (null: the Lab's script cannot see it), never empty or copied."""
    env = doc.environment
    value = env.driver_version
    problem = _driver(value, env.runtime_version) if value is not None else None
    return [] if problem is None or value is None else [_driver_finding(rel, problem, value, env.runtime_version,
                                                       field="/environment/driver_version")]


def measurement_findings(protocol: Protocol, measurements: dict[str, MeasurementDoc]) -> list[Finding]:
    """Every linked measurement: generated or measured as the protocol says, of the campaign's model, its driver."""
    linked = _linked(protocol, measurements)
    out = _synthetic_flags(protocol, linked)
    for rel in sorted({rel for _, rel, _ in linked}):
        name = ", ".join(n for n, r, _ in linked if r == rel)
        out.extend(_synthetic_model(name, rel, measurements[rel]))
        out.extend(_measured_driver(rel, measurements[rel]))
    return out
