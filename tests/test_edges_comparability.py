"""Edges of comparability (issue 51): each column held fixed or shared off by one value, the test run on the CPU, common
seeds and further corpora, consecutive packages, the last registered attempt and one past it, the rented GPU."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from generator.audit.load.inputs.protocol import ExperimentSpec
from generator.audit.load.inputs.rows import GridRow
from generator.audit.recompute.evidence import comparability

ROOT = Path(__file__).resolve().parents[1]
_EXAMPLE = json.loads((ROOT / "inputs" / "example" / "protocol.json").read_text(encoding="utf-8"))["experiments"][0]
CORPUS = _EXAMPLE["fixed"]["corpus_revision"]
FURTHER = "second-corpus@sha256:0123456789abcdef"


def _exp(further: tuple[str, ...] = (), **changes: Any) -> ExperimentSpec:
    """The example's first experiment with two variants (b1, b4), two warm runs and one cold run each, gpu_count 1
    held fixed; `changes` replace its keys (`fixed` is merged)."""
    data = copy.deepcopy(_EXAMPLE)
    data.update(variants=[{"id": "b1", "value": 1}, {"id": "b4", "value": 4}], runs_per_variant=2,
                cold_runs_per_variant=1)
    data["fixed"]["gpu_count"] = 1
    data["fixed"].update(changes.pop("fixed", {}))
    data.update(changes)
    return ExperimentSpec.of(data, further)


def _cells(exp: ExperimentSpec, variant: str, phase: str, run: int, **cells: Any) -> dict[str, Any]:
    value = {v.id: v.value for v in exp.variants}.get(variant)
    base: dict[str, Any] = {
            "experiment_id": exp.id, "variant_id": variant, "corpus_revision": exp.fixed.corpus_revision,
            "model_revision": exp.fixed.model_revision, "tokenizer_revision": exp.fixed.tokenizer_revision,
            "seed": exp.fixed.seed, "gpu_model": "NVIDIA GeForce RTX 4090", "gpu_count": 1, "device": "cuda:0",
            "driver_version": "570.86.15", "python_version": "3.12.3", "torch_version": "2.11.0+cu128",
            "runtime_version": "12.8", "precision": "bfloat16", "batch": 1, "context": 512, "phase": phase,
            "run_index": run, "warmup_iterations": 2 if phase == "warm" else 0, "duration_days": 7, "lots": 1}
    base.update({exp.variable: value} if exp.variable in base else {})
    return {**base, **cells}


def _plan(exp: ExperimentSpec) -> list[dict[str, Any]]:
    """Every registered attempt of the experiment, clean: per variant its cold runs, then its warm runs."""
    out = []
    for v in exp.variants:
        for phase in ("cold", "warm"):
            for i in range(1, exp.attempts(phase) + 1):
                each = len(exp.seeds or [None]) * (1 + len(exp.further_corpora))
                k = (i - 1) % each
                seed = exp.seeds[k % len(exp.seeds)] if exp.seeds else exp.fixed.seed
                corpus = ([CORPUS, *exp.further_corpora])[k // len(exp.seeds or [None])]
                out.append(_cells(exp, v.id, phase, i, seed=seed, corpus_revision=corpus))
    return out


def _found(exp: ExperimentSpec, edits: dict[int, dict[str, Any]] | None = None,
           extra: list[dict[str, Any]] | None = None, drop: int | None = None) -> list[tuple[str, int | None, str]]:
    """The findings (code, line, field) of the clean plan with the rows at `edits` (lines from 2) changed."""
    cells = _plan(exp)
    rows = [(GridRow.of({**c, **(edits or {}).get(n, {})}), n) for n, c in enumerate(cells, 2) if n != drop]
    rows += [(GridRow.of(c), len(cells) + 2 + k) for k, c in enumerate(extra or [])]
    return [(f.code, f.line, str(f.field)) for f in comparability.check_experiment(exp, rows, "grid.csv")]


# Lines of the default plan: b1 cold 1 (2), warm 1 (3), warm 2 (4); b4 cold 1 (5), warm 1 (6), warm 2 (7).
NC = "not-comparable"
FV = "fixed-value-mismatch"


@pytest.mark.parametrize(("edits", "found"), [
    ({}, []),
    ({3: {"batch": 4}}, [("variant-value-mismatch", 3, "batch")]),
    ({3: {"batch": 4, "device": "cpu"}}, [("variant-value-mismatch", 3, "batch"), (NC, 3, "device")]),
    ({3: {"batch": None}}, []),
    ({3: {"precision": "float16"}}, [(FV, 3, "precision"), (NC, 3, "precision")]),
    ({3: {"precision": "float16", "device": "cpu"}}, [(FV, 3, "precision"), (NC, 3, "precision"), (NC, 3, "device")]),
    ({3: {"seed": 1235}}, [(FV, 3, "seed"), (NC, 3, "seed")]),
    ({3: {"gpu_count": 2}}, [(FV, 3, "gpu_count"), (NC, 3, "gpu_count")]),
    ({3: {"gpu_count": 2, "device": "cpu"}}, [(NC, 3, "gpu_count"), (NC, 3, "device")]),  # a test run's processes
    ({3: {"corpus_revision": FURTHER}}, [(FV, 3, "corpus_revision"), (NC, 3, "corpus_revision")]),
    ({3: {"warmup_iterations": 3}}, [("warmup-mismatch", 3, "warmup_iterations")]),
    ({3: {"warmup_iterations": None}, 2: {"warmup_iterations": None}}, []),
    ({2: {"warmup_iterations": 2}}, [("warmup-mismatch", 2, "warmup_iterations")]),
    ({3: {"duration_days": 30}}, [("package-mismatch", 3, "duration_days")]),
    ({3: {"lots": 7}}, [("package-mismatch", 3, "lots")]),  # as many lots as the package has days: still wrong
    ({3: {"duration_days": None, "lots": None}}, []),
    ({3: {"driver_version": "580.1"}}, [(NC, 3, "driver_version")]),
    ({3: {"driver_version": "580.1"}, 6: {"driver_version": "580.1"}},
     [(NC, 3, "driver_version"), (NC, 6, "driver_version")]),
    ({3: {"driver_version": None}}, []),
])
def test_a_row_against_its_experiment(edits: dict[int, dict[str, Any]], found: list[tuple[str, int, str]]) -> None:
    assert _found(_exp(), edits) == found


def test_the_majority_is_what_a_differing_row_is_compared_with() -> None:
    exp = _exp()
    rows = [(GridRow.of({**c, **({"driver_version": "580.1"} if n == 4 else {})}), n)
            for n, c in enumerate(_plan(exp), 2)]
    [found] = comparability.check_experiment(exp, rows, "grid.csv")
    assert (found.line, found.claimed, found.recomputed) == (4, "580.1", "570.86.15")
    assert found.message == "driver_version '580.1' differs from the rest of experiment 'rtx4090-batch' ('570.86.15')"


def test_a_cold_run_warmed_up_is_told_to_write_0() -> None:
    exp = _exp()
    rows = [(GridRow.of(_cells(exp, "b1", "cold", 1, warmup_iterations=2)), 2)]
    found = [f for f in comparability.check_experiment(exp, rows, "grid.csv") if f.code == "warmup-mismatch"]
    assert [(f.claimed, f.recomputed) for f in found] == [(2, 0)]


@pytest.mark.parametrize(("extra", "drop", "found"), [
    ([], 7, [("missing-attempt", None, "run_index")]),  # b4 warm 2, the last registered
    ([("b9", "warm", 1, {"batch": 4})], None, []),  # a variant the experiment does not register: no value to hold
    ([("b1", "warm", 3, {})], None, [("unregistered-attempt", 8, "run_index")]),  # one past the registered runs
    ([("b1", "cold", 2, {"warmup_iterations": 0})], None, [("unregistered-attempt", 8, "run_index")]),
    ([("b1", None, 1, {"warmup_iterations": None})], None, [("unregistered-attempt", 8, "run_index")]),
    ([("b1", "warm", None, {})], None, []),
])
def test_every_registered_attempt_and_none_beyond(extra: list[tuple[str, str | None, int | None, dict[str, Any]]],
                                                  drop: int | None, found: list[tuple[str, int | None, str]]) -> None:
    exp = _exp()
    rows = [{**_cells(exp, v, str(p), 0), "phase": p, "run_index": i, **c} for v, p, i, c in extra]
    assert _found(exp, extra=rows, drop=drop) == found


def test_a_missing_attempt_names_its_run() -> None:
    exp = _exp()
    rows = [(GridRow.of(c), n) for n, c in enumerate(_plan(exp), 2) if n != 4]
    [found] = comparability.check_experiment(exp, rows, "grid.csv")
    assert (found.code, found.recomputed, found.configurations) == ("missing-attempt", 2, ("rtx4090-batch/b1",))
    assert found.message == "no row for rtx4090-batch/b1 warm run 2 (2 warm runs registered)"


def test_a_resume_variant_registers_no_attempts_in_advance() -> None:
    exp = _exp(variants=[{"id": "b1", "value": 1}, {"id": "b1r", "value": 1, "resume": {"of": "b1", "setting": "x"}}])
    rows = [(GridRow.of(c), n) for n, c in enumerate(_plan(exp), 2) if c["variant_id"] == "b1"]
    assert comparability.check_experiment(exp, rows, "grid.csv") == []


SEEDED: dict[str, Any] = {"seeds": [7, 8], "fixed": {"seed": None}, "runs_per_variant": 1, "cold_runs_per_variant": 1}


@pytest.mark.parametrize(("edits", "found"), [
    ({}, []),  # the rows differ in their seed on purpose
    ({3: {"precision": "float16"}}, [(FV, 3, "precision"), (NC, 3, "precision")]),
])
def test_rows_under_common_seeds(edits: dict[int, dict[str, Any]], found: list[tuple[str, int, str]]) -> None:
    exp = _exp(**copy.deepcopy(SEEDED))
    assert exp.seeds == (7, 8) and _found(exp, edits) == found


@pytest.mark.parametrize(("edits", "found"), [
    ({}, []),  # the rows differ in their corpus on purpose
    ({3: {"precision": "float16"}}, [(FV, 3, "precision"), (NC, 3, "precision")]),
    ({3: {"corpus_revision": "third@sha256:1"}}, [(FV, 3, "corpus_revision")]),
])
def test_rows_over_further_corpora(edits: dict[int, dict[str, Any]], found: list[tuple[str, int, str]]) -> None:
    exp = _exp((FURTHER,), runs_per_variant=1, cold_runs_per_variant=1)
    assert _found(exp, edits) == found


@pytest.mark.parametrize(("days", "found"), [(7, []), (3, []), (10, [("package-mismatch", 3, "duration_days")])])
def test_a_row_of_consecutive_packages_names_the_one_it_ran_in(days: int, found: list[tuple[str, int, str]]) -> None:
    exp = _exp(rental={"gpu": "rtx-4090", "periods": [7, 3], "lots": 1})
    assert _found(exp, {3: {"duration_days": days}}) == found


@pytest.mark.parametrize(("edits", "found"), [
    ({}, []),
    ({3: {"gpu_count": 2}}, [("variant-value-mismatch", 3, "gpu_count")]),
    ({3: {"gpu_count": 2, "device": "cpu"}}, [(NC, 3, "device")]),  # no GPU to count on the processor
])
def test_a_gpu_count_series(edits: dict[int, dict[str, Any]], found: list[tuple[str, int, str]]) -> None:
    exp = _exp(variable="gpu_count", variants=[{"id": "b1", "value": 1}, {"id": "b4", "value": 2}],
               fixed={"batch": 1, "gpu_count": None})
    rows = [(GridRow.of({**c, **edits.get(n, {})}), n) for n, c in enumerate(_plan(exp), 2)]
    assert [(f.code, f.line, f.field) for f in comparability.check_experiment(exp, rows, "g")] == found


@pytest.mark.parametrize(("gpu_model", "rented"), [
    ("NVIDIA GeForce RTX 4090", True),
    ("NVIDIA GeForce RTX 4090 D", False),
    (None, True),  # not recorded: its own finding
    ("   ", True),  # blank: not recorded either
])
def test_the_row_ran_on_the_rented_gpu(gpu_model: str | None, rented: bool) -> None:
    row = GridRow.of({"gpu_model": gpu_model})
    found = comparability.rented_gpu_findings(row, 5, "grid.csv", "rtx-4090", "GeForce RTX 4090")
    assert [f.code for f in found] == ([] if rented else ["gpu-not-rented"])
