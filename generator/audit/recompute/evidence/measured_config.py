"""A measurement JSON must describe the variant it is linked to: its configuration and run against the protocol."""

from __future__ import annotations

from generator.audit.load.campaign import PROTOCOL_FILE
from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.load.inputs.protocol import ExperimentSpec, Protocol, Variant
from generator.audit.load.inputs.rows import GridRow
from generator.core.jsonvalue import JsonScalar

CODE = "measurement-config-mismatch"
E = Severity.ERROR
# Grid column -> the measurement's configuration key holding the same setting.
CONFIG_KEYS = {"batch": "batch", "precision": "dtype", "context": "context", "seed": "seed"}
# Spellings of one precision; the measurement writes torch dtype names, a grid or protocol may abbreviate.
_PRECISION = {"fp32": "float32", "float": "float32", "float32": "float32", "fp16": "float16", "half": "float16",
              "float16": "float16", "bf16": "bfloat16", "bfloat16": "bfloat16"}


def _norm(column: str, value: JsonScalar) -> str:
    text = str(value).strip()
    return _PRECISION.get(text.lower(), text) if column == "precision" else text


def registered_value(exp: ExperimentSpec, variant: Variant, column: str) -> JsonScalar:
    """What the protocol registers for a grid column in this variant: its value if declared, else the fixed one."""
    if exp.variable == column:
        return variant.value
    return exp.fixed.setting(column)


def file_findings(doc: MeasurementDoc, doc_file: str, exp: ExperimentSpec, variant: Variant) -> list[Finding]:
    """The measurement file's own configuration and run fields against the variant it is linked to."""
    out: list[Finding] = []
    config = doc.configuration
    name = f"{exp.id}/{variant.id}"
    fix = (f"link {name} to the measurement of its own run, or measure it again with the registered settings; "
           "a file measured at other settings does not describe this variant")
    env = doc.environment
    counted = any(p.peak_allocated_bytes is not None or p.peak_reserved_bytes is not None for p in doc.phases)
    if env.gpu_available is False and counted:
        # An absent GPU is no measurement of bytes: a file that saw none cannot vouch for GPU memory counters
        # (a CPU test run, with its counters empty, is not such a claim).
        out.append(make_finding("measurement-without-gpu", Severity.ERROR, doc_file,
                                f"{doc_file} says no GPU was available "
                                f"({env.unavailable_reason or 'no reason given'}), yet {name} rests on it",
                                field="/environment/gpu_available", claimed=False,
                                rule="a measurement is made on the GPU it names; without one there is nothing measured",
                                fix=f"measure {name} on its GPU again; never copy figures into a file that saw no GPU"))
    run = doc.run
    for key, described, expected in (("experiment_id", run.experiment_id if run else None, exp.id),
                                     ("variant_id", run.variant_id if run else None, variant.id)):
        if described is not None and described != expected:
            out.append(make_finding(CODE, E, doc_file,
                                    f"{doc_file} describes {key} {described!r}, but the protocol links it to "
                                    f"{name}", field=f"/run/{key}", claimed=described, recomputed=expected,
                                    rule="a measurement file describes the variant it is linked to", fix=fix))
    for column, key in CONFIG_KEYS.items():
        registered, measured = registered_value(exp, variant, column), config.setting(key)
        if column == "seed" and exp.seeds:
            # One file describes the variant's runs under every common seed: the seed it names is one of them.
            if measured is not None and measured not in exp.seeds:
                out.append(make_finding(CODE, E, doc_file, f"{doc_file} was measured with seed {measured!r}; {name} "
                                        f"registers the common seeds {list(exp.seeds)}", field="/configuration/seed",
                                        claimed=measured, recomputed=list(exp.seeds),
                                        rule=f"protocol experiments[{exp.id}]: seeds", fix=fix))
            continue
        if registered is None or measured is None or _norm(column, measured) == _norm(column, registered):
            continue
        origin = "the variant's registered value" if exp.variable == column else "the value held fixed"
        out.append(make_finding(CODE, E, doc_file, f"{doc_file} was measured with {key} {measured!r}; {name} registers "
                                f"{column} {registered!r} ({origin})", field=f"/configuration/{key}", claimed=measured,
                                recomputed=registered, rule=f"protocol experiments[{exp.id}]: {column}", fix=fix))
    seeded = f" under each of its {len(exp.seeds)} common seeds" if exp.seeds else ""
    out.extend(_order_findings(config.input_order, doc_file, exp, variant, fix))
    for key, count, what in (("repeats", exp.attempts("warm"), "runs_per_variant"),
                             ("warmup", exp.warmup.iterations, "warmup.iterations")):
        measured = config.setting(key)
        if measured is not None and measured != count:
            said = (f"{exp.runs_per_variant}{seeded}, {count} in all" if key == "repeats" and seeded
                    else str(count))
            out.append(make_finding(CODE, E, doc_file,
                                    f"{doc_file} declares {key} {measured}, where experiment {exp.id!r} "
                                    f"registers {what} {said}", field=f"/configuration/{key}", claimed=measured,
                                    recomputed=count, rule=f"protocol experiments[{exp.id}].{what}", fix=fix))
    return out


def _words(text: str) -> str:
    return " ".join(text.split()).casefold()


def _order_findings(measured: str | None, doc_file: str, exp: ExperimentSpec, variant: Variant,
                    fix: str) -> list[Finding]:
    """The input order the measurement ran against the variant's: declared, or held fixed (the grid has no such
    column, so the measurement is its only record)."""
    registered = registered_value(exp, variant, "input_order")
    if measured is None or registered is None or _words(measured) == _words(str(registered)):
        return []
    declared = exp.variable == "input_order"
    origin = "the variant's registered value" if declared else "the value held fixed"
    return [make_finding(CODE, E, doc_file, f"{doc_file} ran its inputs in the order {measured!r}; "
                         f"{exp.id}/{variant.id} registers input_order {registered!r} ({origin})",
                         field="/configuration/input_order", claimed=measured, recomputed=registered,
                         rule=f"protocol experiments[{exp.id}]: input_order" + (
                             "" if declared else "; another order, such as grouping the inputs by length, is a "
                                                 "variant of its own, declared"), fix=fix)]


def input_order_findings(protocol: Protocol, measurements: dict[str, MeasurementDoc]) -> list[Finding]:
    """In an experiment whose declared variable is input_order, each variant's measurement records the order
    it ran: nothing else tells its runs from the other variants'."""
    out: list[Finding] = []
    for i, exp in enumerate(protocol.experiments):
        if exp.variable != "input_order":
            continue
        for j, variant in enumerate(exp.variants):
            linked = variant.measurement
            if linked and linked not in measurements:
                continue  # linked but unreadable: its own finding says so
            doc = measurements.get(linked) if linked else None
            if doc is not None and doc.configuration.input_order is not None:
                continue
            said = f"{linked} records no configuration.input_order" if linked else "it links no measurement JSON"
            out.append(make_finding(
                "input-order-unrecorded", E, PROTOCOL_FILE,
                f"{exp.id}/{variant.id} declares input_order {variant.value!r}, but {said}: the grid has no input "
                "order column, so nothing shows that its runs processed the inputs in that order",
                field=f"/experiments/{i}/variants/{j}", claimed=variant.value,
                rule="each variant of an input-order series records the order it ran in its measurement JSON",
                fix=f"measure {exp.id}/{variant.id} with a runner that writes configuration.input_order, and link "
                    "the measurement to the variant"))
    return out


def row_findings(row: GridRow, line: int, grid_file: str, doc: MeasurementDoc, doc_file: str,
                 seeded: bool = False) -> list[Finding]:
    """A grid row against the measurement file of its variant: the same settings, a phase for each warm run
    (the seed is not compared when the file describes the runs of several common seeds: `seeded`)."""
    out: list[Finding] = []
    config = doc.configuration
    rule = f"the grid row and {doc_file} describe the same run"
    fix = "report the configuration actually applied; a row and its measurement that disagree cannot both be right"
    for column, key in CONFIG_KEYS.items():
        if seeded and column == "seed":
            continue
        claimed, measured = row.cell(column), config.setting(key)
        if claimed is not None and measured is not None and _norm(column, claimed) != _norm(column, measured):
            out.append(make_finding(CODE, E, grid_file,
                                    f"{column} {claimed!r} differs from {doc_file}, measured with {key} "
                                    f"{measured!r}", line=line, field=column, claimed=claimed, recomputed=measured,
                                    rule=rule, fix=fix))
    run = doc.run
    for column, described, claimed_id in (("experiment_id", run.experiment_id if run else None, row.experiment_id),
                                          ("variant_id", run.variant_id if run else None, row.variant_id)):
        if described is not None and claimed_id is not None and described != claimed_id:
            out.append(make_finding(CODE, E, grid_file,
                                    f"{column} {claimed_id!r}: the measurement linked to this variant, "
                                    f"{doc_file}, describes {described!r}", line=line, field=column,
                                    claimed=claimed_id, recomputed=described, rule=rule, fix=fix))
    if row.phase != "warm":
        return out
    warmup = config.setting("warmup")
    if row.warmup_iterations is not None and warmup is not None and row.warmup_iterations != warmup:
        out.append(make_finding(CODE, E, grid_file,
                                f"warmup_iterations {row.warmup_iterations} differs from {doc_file}, "
                                f"warmed up {warmup} times", line=line, field="warmup_iterations",
                                claimed=row.warmup_iterations, recomputed=warmup, rule=rule, fix=fix))
    repeats, index = config.setting("repeats"), row.run_index
    if isinstance(repeats, int) and isinstance(index, int) and index > repeats:
        out.append(make_finding(CODE, E, grid_file,
                                f"warm run {index}: {doc_file} declares only {repeats} repeats, so no "
                                "measurement describes this run", line=line, field="run_index", claimed=index,
                                recomputed=repeats, rule=rule,
                                fix="measure every registered warm run; a row without its measurement is not evidence"))
    return out
