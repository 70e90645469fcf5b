"""The device measured is the one rented: a GPU of the rental's model, in the registered count; a test run or a run
on the CPU never is (issue 47: a CPU test run must never become a GPU decision).

The rental names its GPU by the tariffs' id (`rtx-4090`) and model name (`GeForce RTX 4090`); the runtime reports a
vendor name (`NVIDIA GeForce RTX 4090`). Leading vendor and brand words set aside, the runtime's name must be the
rented model's, whole: `NVIDIA GeForce RTX 4090 D` or `NVIDIA H100` is another GPU, never a near match. A synthetic
campaign is held to the same rule: its generated environments stand for what a measurement would show.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.load.inputs.protocol import ExperimentSpec, Protocol, Variant
from generator.audit.load.inputs.rows import GridRow
from generator.audit.recompute.money.cost import Tariff

E = Severity.ERROR
# Words a runtime or a catalogue may put before the model's own name.
_PREFIXES = frozenset({"nvidia", "amd", "intel", "geforce", "radeon", "instinct", "tesla", "quadro"})
_FIX_TEST = ("run the campaign on the rented GPU with gpu-audit campaign run, without --allow-cpu-for-tests, and "
             "link the measurements it writes")


# Words that describe a model's memory or form factor without naming another model (`NVIDIA A100-SXM4-80GB`,
# `NVIDIA H100 80GB HBM3`): the runtime may add them; a rented name that states one must find it in the runtime's.
_DESCRIPTIVE = re.compile(r"[0-9]+gb|hbm[0-9]*e?|gddr[0-9]+x?|sxm[0-9]*|pcie")


def _model_key(name: str) -> tuple[str, frozenset[str]]:
    """The model a name designates: its words in lower case, leading vendor and brand words left out, joined
    (memory and form-factor words apart)."""
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]
    while words and words[0] in _PREFIXES:
        words = words[1:]
    described = frozenset(w for w in words if _DESCRIPTIVE.fullmatch(w))
    return "".join(w for w in words if w not in described), described


def is_rented_model(gpu_name: str, rental_gpu: str, model_name: str | None) -> bool:
    """Whether a GPU name the runtime (or a grid row) reports is the rented model, by its id or its model name."""
    seen, seen_described = _model_key(gpu_name)
    for name in (rental_gpu, model_name):
        rented, described = _model_key(name or "")
        if seen and rented and seen == rented and described <= seen_described:
            return True
    return False


def rented_model_name(tariffs: Iterable[Tariff], gpu: str) -> str | None:
    """The tariffs' model name of a rented GPU id, whatever the package's duration (None when not priced)."""
    return next((t.model_name for t in tariffs if t.gpu == gpu and t.model_name), None)


def on_cpu(device: str | None) -> bool:
    """Whether a device as a file writes it is the processor."""
    return str(device or "").strip().lower().startswith("cpu")


def is_test_run(doc: MeasurementDoc | None, rows: Iterable[GridRow]) -> bool:
    """Whether a configuration's evidence is a test run: its measurement marked so or made on the CPU, or a row on
    the CPU."""
    if doc is not None and (doc.test_run is True or on_cpu(doc.environment.device)
                            or on_cpu(doc.configuration.device)):
        return True
    return any(on_cpu(row.device) for row in rows)


def row_findings(row: GridRow, line: int, grid_file: str) -> list[Finding]:
    """A grid row that ran on the CPU measured no rented GPU."""
    if not on_cpu(row.device):
        return []
    return [make_finding("device-not-gpu", E, grid_file,
                         f"device {row.device} is the processor, not a GPU: this run measured no rented GPU",
                         line=line, field="device",
                         claimed=row.device, recomputed="cuda:N",
                         rule="the device measured is a GPU of the model the rental names; a run on the CPU is "
                              "never ranked", fix=_FIX_TEST)]


def _name_finding(rel: str, field: str, name: str | None, rental_gpu: str, model_name: str | None,
                  config: str) -> list[Finding]:
    if name is not None and is_rented_model(name, rental_gpu, model_name):
        return []
    rented = f"{rental_gpu!r}" + (f" ({model_name})" if model_name else "")
    said = f"the runtime reported {name!r}" if name is not None else "no GPU name is recorded"
    return [make_finding("gpu-not-rented", E, rel,
                         f"{rel} {field}: {said}, which is not the rented GPU {rented}: it cannot be the evidence "
                         f"of {config}", field=field, claimed=name, recomputed=model_name or rental_gpu,
                         rule="protocol experiments[].rental.gpu is the GPU measured: the runtime's name is the "
                              "rented model's, whole (another model, such as a 'D' or 'H100' for an 'H200', is not)",
                         fix="measure the configuration on the GPU the protocol rents, or register the rental of "
                             "the GPU actually used")]


def _registered_count(exp: ExperimentSpec, variant: Variant) -> int:
    value = variant.value if exp.variable == "gpu_count" else exp.fixed.setting("gpu_count")
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def _file_findings(rel: str, doc: MeasurementDoc, exp: ExperimentSpec, variant: Variant,
                   model_name: str | None) -> list[Finding]:
    """One measurement against the rental of the configuration it is linked to."""
    config, env = f"{exp.id}/{variant.id}", doc.environment
    if doc.test_run is True:
        return [make_finding("test-run", E, rel,
                             f"{rel} is a test run (test_run true, device {env.device}): it measured no rented GPU, "
                             f"so {config} cannot be ranked", field="/test_run", claimed=True, recomputed=False,
                             rule="a test run (campaign run --allow-cpu-for-tests) is never evidence of a decision",
                             fix=_FIX_TEST)]
    device = env.device if on_cpu(env.device) or not on_cpu(doc.configuration.device) else doc.configuration.device
    if on_cpu(device) or not env.gpu_available:
        where = f"ran on device {device}" if on_cpu(device) else f"saw no GPU at device {device} (gpu_available false)"
        return [make_finding("device-not-gpu", E, rel, f"{rel} {where}, not on a GPU: it cannot be the evidence of "
                             f"{config}", field="/environment/device" if on_cpu(device) else
                             "/environment/gpu_available", claimed=device, recomputed="cuda:N",
                             rule="the device measured is a GPU of the model the rental names; a run on the CPU is "
                                  "never ranked", fix=_FIX_TEST)]
    gpu = exp.rental.gpu
    out = _name_finding(rel, "/environment/gpu_name", env.gpu_name, gpu, model_name, config)
    for i, listed in enumerate(env.devices):
        if listed.gpu_name != env.gpu_name:
            out.extend(_name_finding(rel, f"/environment/devices/{i}/gpu_name", listed.gpu_name, gpu, model_name,
                                     config))
    registered = _registered_count(exp, variant)
    if env.devices_used is not None and env.devices_used != registered:
        out.append(make_finding("gpu-count-not-registered", E, rel,
                                f"{rel} devices_used: the program used {env.devices_used} GPU(s), {config} registers "
                                f"gpu_count {registered}", field="/environment/devices_used",
                                claimed=env.devices_used, recomputed=registered,
                                rule="the GPUs measured are the registered count (experiments[].fixed.gpu_count, or "
                                     "the variant's value; 1 when not registered)",
                                fix=f"measure {config} on {registered} GPU(s), or register the count actually used"))
    return out


def device_findings(protocol: Protocol, measurements: dict[str, MeasurementDoc],
                    tariffs: Iterable[Tariff]) -> list[Finding]:
    """Every linked measurement: not a test run, on a GPU of the rented model, in the registered count."""
    priced = list(tariffs)
    out: list[Finding] = []
    seen: set[str] = set()
    for exp in protocol.experiments:
        model_name = rented_model_name(priced, exp.rental.gpu)
        for variant in exp.variants:
            rel = variant.measurement
            doc = measurements.get(rel) if rel else None
            if rel is None or doc is None or rel in seen:
                continue  # a file linked by several variants is judged once, by the first
            seen.add(rel)
            out.extend(_file_findings(rel, doc, exp, variant, model_name))
    return out
