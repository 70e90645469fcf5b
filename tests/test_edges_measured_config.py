"""Edges of a measurement against its variant and its grid rows (issue 51): one setting off, a precision spelled
another way, an id in another case, the last declared repeat and one past it, a file that saw no GPU."""

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
from generator.audit.recompute.evidence import measured_config

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "inputs" / "example"
_PROTOCOL = json.loads((EXAMPLE / "protocol.json").read_text(encoding="utf-8"))
_DOC = json.loads((EXAMPLE / "measurements" / "rtx4090-batch-b1.json").read_text(encoding="utf-8"))
CODE = "measurement-config-mismatch"


def _exp(**changes: Any) -> ExperimentSpec:
    data = copy.deepcopy(_PROTOCOL["experiments"][0])
    data["fixed"].update(changes.pop("fixed", {}))
    data.update(changes)
    return ExperimentSpec.of(data)


def _doc(config: dict[str, Any] | None = None, **changes: Any) -> MeasurementDoc:
    data = copy.deepcopy(_DOC)
    data["configuration"].update(config or {})
    data["configuration"] = {k: v for k, v in data["configuration"].items() if v is not None}
    data.update(changes)
    return MeasurementDoc.of(data)


def _file(doc: MeasurementDoc, exp: ExperimentSpec | None = None, variant: int = 0) -> list[tuple[str, str | None]]:
    exp = exp or _exp()
    return [(f.code, f.field) for f in measured_config.file_findings(doc, "m.json", exp, exp.variants[variant])]


SEEDED: dict[str, Any] = {"seeds": [7, 8], "fixed": {"seed": None}}


@pytest.mark.parametrize(("config", "exp", "found"), [
    ({}, {}, []),
    ({"dtype": "bf16"}, {}, []),  # one precision, two spellings
    ({"dtype": " BF16 "}, {}, []),
    ({"dtype": "float16"}, {}, [(CODE, "/configuration/dtype")]),
    ({"batch": 4}, {}, [(CODE, "/configuration/batch")]),
    ({"context": None}, {}, []),  # not written: nothing to compare
    ({}, {"fixed": {"context": None}}, []),  # not registered: nothing to compare
    ({"seed": 1235}, {}, [(CODE, "/configuration/seed")]),
    ({"seed": 8, "repeats": 10}, SEEDED, []),  # one of the common seeds; the runs under each of the two
    ({"seed": 9, "repeats": 10}, SEEDED, [(CODE, "/configuration/seed")]),
    ({"seed": None, "repeats": 10}, SEEDED, []),
    ({"repeats": 4}, {}, [(CODE, "/configuration/repeats")]),
    ({"warmup": 3}, {}, [(CODE, "/configuration/warmup")]),
])
def test_a_measurement_against_its_variant(config: dict[str, Any], exp: dict[str, Any],
                                           found: list[tuple[str, str]]) -> None:
    assert _file(_doc(config), _exp(**copy.deepcopy(exp))) == found


def test_the_mismatch_says_which_registration_it_breaks() -> None:
    exp = _exp()
    texts = {f.field: f.message for f in measured_config.file_findings(
        _doc({"batch": 4, "dtype": "float16", "repeats": 4, "warmup": 3}), "m.json", exp, exp.variants[0])}
    assert texts["/configuration/batch"].endswith("registers batch 1 (the variant's registered value)")
    assert texts["/configuration/dtype"].endswith("registers precision 'bfloat16' (the value held fixed)")
    assert texts["/configuration/repeats"].endswith("registers runs_per_variant 5")
    assert texts["/configuration/warmup"].endswith("registers warmup.iterations 2")
    seeded = _exp(**copy.deepcopy(SEEDED))
    texts = {f.field: f.message for f in measured_config.file_findings(
        _doc({"repeats": 5, "warmup": 3, "seed": 7}), "m.json", seeded, seeded.variants[0])}
    assert texts["/configuration/repeats"].endswith("registers runs_per_variant 5 under each of its 2 common seeds, "
                                                    "10 in all")
    assert texts["/configuration/warmup"].endswith("registers warmup.iterations 2")


@pytest.mark.parametrize(("run", "variant", "found"), [
    ({"experiment_id": "rtx4090-batch", "variant_id": "b1"}, 0, []),
    ({"experiment_id": "rtx4090-batch", "variant_id": "b1"}, 1, [(CODE, "/run/variant_id"),
                                                                 (CODE, "/configuration/batch")]),
    ({"experiment_id": "RTX4090-batch", "variant_id": "b1"}, 0, [(CODE, "/run/experiment_id")]),
    (None, 0, []),
])
def test_the_run_a_measurement_describes(run: dict[str, str] | None, variant: int,
                                         found: list[tuple[str, str]]) -> None:
    assert _file(_doc(run=run), variant=variant) == found


def _phases(*peaks: tuple[int | None, int | None]) -> list[dict[str, Any]]:
    out = []
    for alloc, res in peaks:
        out.append({**_DOC["phases"][0], "peak_allocated_bytes": alloc, "peak_reserved_bytes": res})
    return out


NO_GPU = {"device": "cpu", "gpu_available": False, "gpu_name": None, "unavailable_reason": "no CUDA device"}


@pytest.mark.parametrize(("available", "peaks", "found"), [
    (True, [(5, 9)], []),
    (False, [(None, None)], []),  # a CPU test run with its counters empty claims no GPU memory
    (False, [(5, None)], ["measurement-without-gpu"]),
    (False, [(None, 9)], ["measurement-without-gpu"]),
    (False, [(None, None), (5, 9)], ["measurement-without-gpu"]),  # one phase counted is enough
])
def test_a_file_that_saw_no_gpu_vouches_for_no_counter(available: bool, peaks: list[tuple[int | None, int | None]],
                                                       found: list[str]) -> None:
    env = {**_DOC["environment"], **({} if available else NO_GPU)}
    doc = _doc(environment=env, phases=_phases(*peaks))
    codes = [f.code for f in measured_config.file_findings(doc, "m.json", _exp(), _exp().variants[0])]
    assert codes == found


@pytest.mark.parametrize(("reason", "said"), [("no CUDA device", "(no CUDA device)"), (None, "(no reason given)")])
def test_no_gpu_says_why(reason: str | None, said: str) -> None:
    doc = _doc(environment={**_DOC["environment"], **NO_GPU, "unavailable_reason": reason}, phases=_phases((5, 9)))
    [found] = measured_config.file_findings(doc, "m.json", _exp(), _exp().variants[0])
    assert said in found.message and found.claimed is False


ORDER = "expected-ids.csv order"
BY_LENGTH = "sorted by length"


@pytest.mark.parametrize(("measured", "found"), [
    (None, []),
    (ORDER, []),
    ("Expected-IDs.csv   order", []),  # the same words, in another case and spacing
    (BY_LENGTH, [(CODE, "/configuration/input_order")]),
])
def test_the_input_order_held_fixed(measured: str | None, found: list[tuple[str, str]]) -> None:
    assert _file(_doc({"input_order": measured})) == found


def _order_exp() -> ExperimentSpec:
    return _exp(variable="input_order", fixed={"input_order": None, "batch": 1},
                variants=[{"id": "o1", "value": ORDER, "measurement": "m1.json"},
                          {"id": "o2", "value": BY_LENGTH, "measurement": "m2.json"},
                          {"id": "o3", "value": "shuffled"}])


def test_an_order_series_compares_each_variant_with_its_own_order() -> None:
    exp = _order_exp()
    doc = _doc({"input_order": BY_LENGTH, "batch": 1}, run=None)
    fixed = measured_config.file_findings(_doc({"input_order": BY_LENGTH}), "m.json", _exp(), _exp().variants[0])
    [declared] = measured_config.file_findings(doc, "m.json", exp, exp.variants[0])
    assert "(the variant's registered value)" in declared.message and "grouping" not in str(declared.rule)
    assert "(the value held fixed)" in fixed[0].message and "grouping the inputs by length" in str(fixed[0].rule)
    assert measured_config.file_findings(doc, "m.json", exp, exp.variants[1]) == []


def test_each_variant_of_an_order_series_records_its_order() -> None:
    protocol = Protocol.of({**_PROTOCOL, "experiments": [_PROTOCOL["experiments"][0]]})
    exp = _order_exp()
    protocol = dataclasses.replace(protocol, experiments=(exp, _exp()))
    docs = {"m1.json": _doc({"input_order": ORDER}), "m2.json": _doc()}
    found = measured_config.input_order_findings(protocol, docs)
    assert [(f.code, f.field) for f in found] == [("input-order-unrecorded", "/experiments/0/variants/1"),
                                                  ("input-order-unrecorded", "/experiments/0/variants/2")]
    assert "it links no measurement JSON" in found[1].message
    unread = measured_config.input_order_findings(protocol, {"m1.json": docs["m1.json"]})
    assert [f.field for f in unread] == ["/experiments/0/variants/2"]  # m2.json unreadable: its own finding


def _row(**cells: Any) -> GridRow:
    base: dict[str, Any] = {"experiment_id": "rtx4090-batch", "variant_id": "b1", "seed": 1234,
                            "precision": "bfloat16", "batch": 1, "context": 512, "phase": "warm", "run_index": 5,
                            "warmup_iterations": 2}
    return GridRow.of({**base, **cells})


@pytest.mark.parametrize(("cells", "found"), [
    ({}, []),  # the last declared repeat
    ({"run_index": 6}, ["run_index"]),  # one past it
    ({"run_index": None}, []),
    ({"precision": "BF16"}, []),
    ({"precision": "float16"}, ["precision"]),
    ({"batch": None, "warmup_iterations": None}, []),
    ({"batch": 4}, ["batch"]),
    ({"seed": 1235}, ["seed"]),
    ({"warmup_iterations": 3}, ["warmup_iterations"]),
    ({"variant_id": "B1"}, ["variant_id"]),  # ids are compared as written
    ({"experiment_id": None, "variant_id": None}, []),
    ({"phase": "cold", "run_index": 9, "warmup_iterations": 0}, []),  # a cold run: no repeat, no warm-up
])
def test_a_grid_row_against_its_measurement(cells: dict[str, Any], found: list[str]) -> None:
    fields = [f.field for f in measured_config.row_findings(_row(**cells), 4, "grid.csv", _doc(), "m.json")]
    assert fields == found


def test_a_row_of_several_seeds_leaves_the_seed_to_the_seed_rules() -> None:
    rows = [(_row(seed=7), True, []), (_row(seed=7, batch=4), True, ["batch"]), (_row(seed=7), False, ["seed"])]
    for row, seeded, found in rows:
        assert [f.field for f in measured_config.row_findings(row, 4, "g", _doc(), "m.json", seeded)] == found
    assert [f.field for f in measured_config.row_findings(_row(seed=7), 4, "g", _doc(), "m.json")] == ["seed"]
    assert [f.field for f in measured_config.row_findings(_row(), 4, "g", _doc(run=None), "m.json")] == []
