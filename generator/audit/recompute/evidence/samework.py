"""One answer, one kind of work: configurations of different experiments differ only in hardware and precision."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from generator.audit.load.campaign import PROTOCOL_FILE
from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.load.inputs.protocol import ExperimentSpec, Protocol
from generator.audit.load.inputs.rows import GridRow
from generator.core.jsonvalue import JsonScalar

CODE = "different-work"
E = Severity.ERROR
# The work as `experiments[].fixed` registers it. Precision is left out on purpose: the seeds let a second series
# change the precision or the hardware (and requalify it under the one quality rule, which acceptance applies to
# every variant); the hardware is not in `fixed` at all (rental, gpu_model, environment).
WORK_KEYS = ("corpus_revision", "input_order", "model_revision", "tokenizer_revision", "batch", "context",
             "truncation", "padding", "seed", "code_revision", "quantisation", "compile", "attention_backend",
             "deterministic")
WARMUP_KEYS = ("iterations", "inputs", "recompilation")
# Grid columns that give a work key's value where the protocol leaves it open (null): an unregistered value is
# still the work done, and two experiments that leave it open may not do different work unseen.
GRID_COLUMNS = ("corpus_revision", "model_revision", "tokenizer_revision", "batch", "context", "seed")
# The measurement's `model` keys that name the experiment's fixed revisions.
MODEL_KEYS = {"revision": "model_revision", "tokenizer_revision": "tokenizer_revision"}
_MISSING = object()  # an absent key, told apart from a null
RULE = ("configurations ranked in one answer do the same work: across experiments only the hardware and the "
        "precision may differ, within one only its declared variable")


@dataclass(frozen=True)
class Stated:
    """One experiment's value of one fact of the work, as the file that states it writes it."""

    experiment: str
    field: str  # the protocol path of the fact for this experiment
    value: object  # a JSON scalar, or _MISSING for a key the protocol does not write
    written: str  # the value as its file writes it
    source: str  # the file it is read from


def written_json(value: object) -> str:
    """A JSON value as protocol.json writes it (`null`, `256`, `"left"`); an absent key says so."""
    return "not written" if value is _MISSING else json.dumps(value, ensure_ascii=False)


def _same(a: Stated, b: Stated) -> bool:
    if a.value is None or b.value is None:
        return a.value is b.value
    # A grid cell is read as a number or text; the protocol's 4 and the grid's 4 are one batch.
    return str(a.value) == str(b.value)


def _grid_value(rows: list[GridRow], exp_id: str, column: str) -> JsonScalar:
    """The one value the experiment's rows give a column; None when they give none or several (those are
    not-comparable findings already)."""
    seen = {str(r.cell(column)): r.cell(column) for r in rows
            if r.experiment_id == exp_id and r.cell(column) is not None}
    return next(iter(seen.values())) if len(seen) == 1 else None


def _stated(exp: ExperimentSpec, index: int, key: str, rows: list[GridRow], grid_file: str) -> Stated | None:
    """What one experiment registers for a work key; None where the key is its declared variable."""
    if key in WARMUP_KEYS:
        setting = exp.warmup.setting(key)
        value = _MISSING if setting is None else setting  # warm-up keys are never null: None is an absent key
        return Stated(exp.id, f"/experiments/{index}/warmup/{key}", value, written_json(value), PROTOCOL_FILE)
    if key == exp.variable:
        return None
    if key == "seed" and exp.seeds:
        # Common seeds are the work's seeds, in any order: configurations ranked together ran the same ones.
        listed = json.dumps(sorted(exp.seeds))
        return Stated(exp.id, f"/experiments/{index}/seeds", listed, json.dumps(list(exp.seeds)), PROTOCOL_FILE)
    where = f"/experiments/{index}/fixed/{key}"
    value = exp.fixed.setting(key)
    if value is None and key in GRID_COLUMNS:
        cell = _grid_value(rows, exp.id, key)
        if cell is not None:
            return Stated(exp.id, where, cell, str(cell), grid_file)
    return Stated(exp.id, where, value, written_json(exp.fixed.written.get(key, _MISSING)), PROTOCOL_FILE)


def _label(key: str) -> str:
    return f"warmup.{key}" if key in WARMUP_KEYS else key


def _describe(s: Stated) -> str:
    if s.source == PROTOCOL_FILE:
        return f"{s.experiment} {s.written}"
    return f"{s.experiment} {s.written} ({s.source}; open in {PROTOCOL_FILE})"


def _differs(key: str, first: Stated, other: Stated) -> Finding:
    label = _label(key)
    finding = make_finding(
        CODE, E, PROTOCOL_FILE,
        f"configurations of different work: {label} differs between experiments {first.experiment} and "
        f"{other.experiment}, ranked in one answer: {_describe(first)}, {_describe(other)}",
        field=other.field, value=other.value,
        extra={"experiments": [first.experiment, other.experiment], "field": label,
               "values": {first.experiment: first.written, other.experiment: other.written}},
        rule=RULE,
        fix=f"register one {label} for every experiment and measure again the experiment that did other work; "
            f"another {label} is another question, for a protocol of its own")
    # Every configuration rests on the protocol: which experiment is the odd one is not for the audit to say.
    return replace(finding, shared_input="protocol")


def experiment_findings(protocol: Protocol, rows: list[GridRow], grid_file: str) -> list[Finding]:
    """Each work fact of each experiment against the first experiment that states it."""
    out: list[Finding] = []
    experiments = protocol.experiments
    for key in (*WORK_KEYS, *WARMUP_KEYS):
        stated = [s for i, exp in enumerate(experiments) if (s := _stated(exp, i, key, rows, grid_file))]
        out.extend(_differs(key, stated[0], s) for s in stated[1:] if not _same(stated[0], s))
    return out


def measured_model_findings(protocol: Protocol, measurements: dict[str, MeasurementDoc]) -> list[Finding]:
    """A measurement names the model it ran: its revisions are the ones the experiment holds fixed."""
    out: list[Finding] = []
    for exp in protocol.experiments:
        for variant in exp.variants:
            doc_file = variant.measurement
            doc = measurements.get(doc_file) if doc_file else None
            model = doc.model if doc is not None else None
            if model is None or doc_file is None:
                continue
            for key, column in MODEL_KEYS.items():
                measured, fixed = model.setting(key), exp.fixed.setting(column)
                if measured is None or fixed is None or str(measured) == str(fixed):
                    continue
                name = f"{exp.id}/{variant.id}"
                out.append(make_finding(
                    "measurement-config-mismatch", E, doc_file,
                    f"{doc_file} ran model {key} {written_json(measured)}; {name} registers {column} "
                    f"{written_json(fixed)} (the value held fixed)", field=f"/model/{key}", value=measured,
                    rule=f"protocol experiments[{exp.id}]: {column}",
                    fix=f"link {name} to the measurement of its own run, or measure it again with the registered "
                        "model; a file measured with another model does not describe this variant"))
    return out


def same_work_findings(protocol: Protocol, rows: list[GridRow], grid_file: str,
                       measurements: dict[str, MeasurementDoc]) -> list[Finding]:
    """Every finding of the rule: experiments that register different work, measurements of another model."""
    return experiment_findings(protocol, rows, grid_file) + measured_model_findings(protocol, measurements)
