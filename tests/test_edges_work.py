"""Issue 51's edges of the reproduction target (a digest differing in its last hex digit, a spread exactly at the
bound, each seed and corpus apart) and of planned subgroups (unfinished IDs, the worst run, each direction)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

import pyarrow as pa
import pytest
from edges_records import EXAMPLE, config, recomputed, run

from generator.audit.load.findings import Finding, Severity
from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.inputs.rows import GridRow
from generator.audit.load.inputs.work import Quality
from generator.audit.load.readers.labelfile import LabelFile
from generator.audit.recompute.decision.model import Run
from generator.audit.recompute.decision.runcells import ResumeBalance, SubgroupRun
from generator.audit.recompute.evidence import samework
from generator.audit.recompute.quality import reproduction, subgroups
from generator.audit.validate import registered

GRID = "grid.csv"
A = "a" * 63 + "0"
B = "a" * 63 + "1"  # A with its last hex digit changed


def _quality(**data: Any) -> Quality:
    return Quality.of({**EXAMPLE["quality"], **data})


def _findings(runs: list[Run], target: dict[str, Any], digests: dict[str, str] | None = None,
              **fields: Any) -> list[Finding]:
    digests = digests or {}
    return reproduction.reproduction_findings(_quality(reproduction=target), [config("e/b1", tuple(runs), **fields)],
                                              {f: (1, d) for f, d in digests.items()}, GRID)


# ------------------------------------------------------------------------------------ identical

def test_identical_outputs_differ_in_the_last_hex_digit() -> None:
    runs = [run(1), run(2), run(3)]
    [finding] = _findings(runs, {"target": "identical"}, {"warm-1.csv": A, "warm-2.csv": A, "warm-3.csv": B})
    assert (finding.code, finding.line, finding.recomputed) == ("reproduction-not-identical", 4, B)
    assert finding.message == (f"e/b1 warm run 3 wrote other predictions than warm run 1 (SHA-256 {B[:12]}... "
                               f"against {A[:12]}...), but the protocol registers identical outputs")
    assert _findings(runs, {"target": "identical"}, {"warm-1.csv": A, "warm-2.csv": A, "warm-3.csv": A}) == []


def test_identical_outputs_from_the_first_run_read() -> None:
    # warm run 1's file was not read: run 2 is the reference, named in the message with its seed
    runs = [run(1, seed=7), run(2, seed=7), run(3, seed=7)]
    [finding] = _findings(runs, {"target": "identical"}, {"warm-2.csv": A, "warm-3.csv": B})
    assert "than warm run 2 under the same seed 7 (SHA-256" in finding.message
    assert _findings(runs, {"target": "identical"}, {}) == []


@pytest.mark.parametrize("odd", [
    run(3, phase="cold"), run(3, outcome="oom"), run(3, outcome="resumed"), run(3, scored=False),
    run(3, present=False), replace(run(3), recomputed=recomputed(0.9, None)),
])
def test_only_warm_runs_that_went_through_are_compared(odd: Run) -> None:
    digests = {"warm-1.csv": A, "warm-2.csv": A, "warm-3.csv": B, "cold-3.csv": B}
    assert _findings([run(1), run(2), odd], {"target": "identical"}, digests) == []


def test_a_resume_variant_compares_its_completed_resumptions() -> None:
    digests = {"warm-1.csv": A, "warm-3.csv": B}
    runs = [run(1), run(3, outcome="resumed")]
    assert [f.line for f in _findings(runs, {"target": "identical"}, digests,
                                      resume=ResumeBalance("b1", "s", 1, None))] == [4]


def test_each_seed_and_each_corpus_apart() -> None:
    digests = {"warm-1.csv": A, "warm-2.csv": B, "warm-3.csv": A, "warm-4.csv": A}
    runs = [run(1, seed=1, corpus="rev-a"), run(2, seed=2, corpus="rev-a"), run(3, seed=1, corpus="REV-A"),
            run(4, seed=2, corpus="REV-A")]
    # each seed's runs on each corpus are one run apart: revisions in another case are other corpora
    assert _findings(runs, {"target": "identical"}, digests) == []
    runs[3] = run(4, seed=2, corpus="rev-a")
    assert [f.line for f in _findings(runs, {"target": "identical"}, digests)] == [5]


# ------------------------------------------------------------------------------------ bounded

def _valued(*values: float | None) -> list[Run]:
    return [run(i + 1, value=v) for i, v in enumerate(values)]


@pytest.mark.parametrize("values,bound,spread", [
    ((0.75, 0.875), 0.125, None),  # exactly at the bound: holds
    ((0.80, 0.81), 0.01, None),  # at the bound in the decimals the values are written with
    ((0.75, 0.8750001), 0.125, 0.125),
    ((0.875, 0.75, 0.8), 0.1, 0.125), ((0.8, 0.875, 0.75), 0.1, 0.125),  # highest minus lowest, whichever runs
    ((0.8, None, 0.9), 0.05, 0.1),  # an unscored run has no value
    ((0.9,), 0.0, None), ((None, 0.9), 0.0, None),  # one value: no spread
])
def test_the_spread_against_the_bound(values: tuple[float | None, ...], bound: float,
                                      spread: float | None) -> None:
    found = _findings(_valued(*values), {"target": "bounded", "bound": bound})
    assert [round(cast(float, f.recomputed), 6) for f in found] == ([] if spread is None else [spread])


def test_the_spread_message_names_the_lowest_and_highest_runs() -> None:
    [finding] = _findings([run(1, value=0.875, seed=3), run(2, value=0.75, seed=3), run(3, value=0.8, seed=3)],
                          {"target": "bounded", "bound": 0.1})
    assert finding.message == ("e/b1: macro_f1 varies by 0.125000 across its warm runs under the same seed 3 (run 2: "
                               "0.750000, run 1: 0.875000), more than the registered bound 0.1")
    assert (finding.line, finding.claimed, finding.recomputed) == (2, 0.1, 0.125)
    [finding] = _findings(_valued(0.8, 0.9123456789), {"target": "bounded", "bound": 0.1})
    assert finding.recomputed == 0.112346


def test_a_bound_applies_only_to_the_bounded_target() -> None:
    assert _findings(_valued(0.5, 0.9), {"target": "quality", "bound": 0.01}) == []
    assert _findings(_valued(0.5, 0.9), {"target": "quality"}, {"warm-1.csv": A, "warm-2.csv": B}) == []


def test_a_target_not_registered_is_said_so() -> None:
    assert [f.code for f in registered.registration_findings(_quality(), "p.json")] == []
    q = Quality.of({k: v for k, v in EXAMPLE["quality"].items() if k != "reproduction"})
    assert [(f.code, f.severity) for f in registered.registration_findings(q, "p.json")] == [
        ("reproduction-not-registered", Severity.WARNING)]


# ------------------------------------------------------------------------------------ subgroups

IDS = [f"d{i}" for i in range(6)]


def _truths(files: dict[str, LabelFile]) -> tuple[subgroups.GroupTruth, ...]:
    return subgroups.prepare(_quality(), pa.array(IDS), files)


def test_subgroups_prepared_only_from_readable_non_empty_files() -> None:
    unreadable = LabelFile(file="m.csv", ids=["d1"], readable=False)
    truths = _truths({"short": LabelFile(file="s.csv", ids=["d5", "d1", "d1", "x9"]), "medium": unreadable,
                      "long": LabelFile(file="l.csv", ids=[])})
    assert [(t.id, t.ids.to_pylist(), t.positions.tolist()) for t in truths] == [("short", ["d5", "d1"], [5, 1])]


def _judged(observed: list[str] | None, missing: int, pred: list[int] | None) -> list[SubgroupRun]:
    [truth] = _truths({"short": LabelFile(file="s.csv", ids=["d0", "d1", "d2"])})
    codes = pa.array([0, 1, 0, 1, 0, 1]).to_numpy()
    return subgroups.judge_codes([truth], _quality(), codes, None if pred is None else pa.array(pred).to_numpy(), 2,
                                 None if observed is None else pa.array(observed), missing)


@pytest.mark.parametrize("observed,missing,unfinished", [
    (None, 6, 3),  # no file: none of the subgroup finished
    (IDS, 0, 0),
    (["d0", "d3", "d4", "d5"], 2, 2),  # two of the subgroup missing
    (["d3", "d4", "d5"], 3, 3),  # every one of the subgroup missing
])
def test_a_subgroups_unfinished_ids(observed: list[str] | None, missing: int, unfinished: int) -> None:
    [result] = _judged(observed, missing, None)
    assert (result.unfinished, result.quality_value, result.accepted) == (unfinished, None, False)


def test_a_subgroup_with_no_expected_id_is_never_scored() -> None:
    [truth] = _truths({"short": LabelFile(file="s.csv", ids=["x1"])})
    codes = pa.array([0, 1, 0, 1, 0, 1]).to_numpy()
    [result] = subgroups.judge_codes([truth], _quality(), codes, codes, 2, pa.array(IDS), 0)
    assert (result.expected_ids, result.quality_value, result.accepted) == (0, None, False)
    [result] = subgroups.judge_labels([truth], _quality(), {}, {}, True)
    assert (result.expected_ids, result.quality_value, result.accepted) == (0, None, False)


def test_a_subgroup_scored_both_ways() -> None:
    [result] = _judged(IDS, 0, [0, 1, 0, 1, 0, 1])
    assert (result.quality_value, result.accepted) == (1.0, True)
    [truth] = _truths({"short": LabelFile(file="s.csv", ids=["d0", "d1", "d2"])})
    reference = dict(zip(IDS, "ababab", strict=True))
    [result] = subgroups.judge_labels([truth], _quality(), reference, {"d0": "a", "d1": "b", "d2": "a"}, True)
    assert (result.unfinished, result.quality_value, result.accepted) == (0, 1.0, True)
    [result] = subgroups.judge_labels([truth], _quality(), reference, {"d0": "a"}, False)
    assert (result.unfinished, result.quality_value, result.accepted) == (2, None, False)
    [result] = subgroups.judge_labels([truth], _quality(), reference, None, False)
    assert (result.unfinished, result.quality_value) == (3, None)


def _result(value: float | None, degradation: float | None, accepted: bool, unfinished: int = 0,
            gid: str = "short") -> SubgroupRun:
    return SubgroupRun(gid, 3, unfinished, value, degradation, accepted)


@pytest.mark.parametrize("direction,worst", [("higher_is_better", 0.7), ("lower_is_better", 0.9)])
def test_a_subgroup_summary_across_runs(direction: str, worst: float) -> None:
    runs = [(True, False, [_result(0.9, 0.01, True), _result(0.5, 0.1, False, gid="long")]),
            (True, False, [_result(0.7, 0.05, False)]),
            (True, False, [_result(0.8, None, True)]),
            (True, False, [_result(None, None, False, 1)]),  # completed, not scored: no value
            (False, True, [_result(None, None, False, 2)]), (False, True, [_result(None, None, False, 1)]),
            (False, True, [_result(None, None, False, 0)])]  # a failed run that left none unfinished
    summary = subgroups.summarise(_quality(direction=direction), runs)
    assert [(s.id, s.completed_runs, s.accepted_runs, s.worst_value, s.worst_degradation, s.failed_runs,
             s.unfinished) for s in summary] == [("short", 3, 2, worst, 0.05, 2, 3), ("long", 1, 0, 0.5, 0.1, 0, 0)]
    assert summary[0].expected_ids == 3 and summary[0].threshold == 0.8


def test_a_subgroup_no_run_was_judged_on_is_left_out() -> None:
    assert subgroups.summarise(_quality(), []) == ()


# ------------------------------------------------------------------------------------ one kind of work

def _protocol(*edits: dict[str, Any], seeds: tuple[list[int] | None, ...] = (None, None)) -> Protocol:
    """The example's two experiments, each with its `fixed` edited (a key set to ABSENT is removed)."""
    exps: list[Any] = []
    for exp, edit, common in zip(EXAMPLE["experiments"], edits, seeds, strict=True):
        fixed = {k: v for k, v in {**exp["fixed"], **edit}.items() if v is not ABSENT}
        exps.append({**exp, "fixed": fixed, "seeds": common})
    return Protocol.of({**EXAMPLE, "experiments": exps})


ABSENT = object()


def _work(protocol: Protocol, rows: list[GridRow] | None = None) -> list[tuple[str | None, str]]:
    return [(f.field, f.message.split(": ", 1)[1]) for f in samework.same_work_findings(protocol, rows or [], GRID, {})]


@pytest.mark.parametrize("first,second,differs", [
    (None, None, False), (None, 512, True), (512, None, True), (512, 512, False), (512, 256, True),
])
def test_a_fact_null_matches_only_null(first: object, second: object, differs: bool) -> None:
    found = _work(_protocol({"context": first}, {"context": second}))
    assert [f for f, _ in found] == (["/experiments/1/fixed/context"] if differs else [])


def test_an_absent_key_and_a_null_both_leave_the_fact_open() -> None:
    assert _work(_protocol({"context": None}, {"context": ABSENT})) == []
    [(_, said)] = _work(_protocol({"context": 512}, {"context": ABSENT}))
    assert said.endswith("rtx4090-batch 512, b200-batch not written")


def test_the_grid_fills_a_fact_left_open_only_with_its_own_one_value() -> None:
    open_ = _protocol({"context": None}, {"context": None})
    def rows(*cells: tuple[str, int | None]) -> list[GridRow]:
        return [GridRow.of({"experiment_id": e, "variant_id": "b1", "context": b}) for e, b in cells]
    assert _work(open_, rows(("rtx4090-batch", 512), ("b200-batch", 512), ("b200-batch", None))) == []
    [(_, said)] = _work(open_, rows(("rtx4090-batch", 512), ("b200-batch", 256), ("other", 512)))
    assert said.endswith(f"rtx4090-batch 512 ({GRID}; open in protocol.json), b200-batch 256 ({GRID}; open in "
                         "protocol.json)")
    # several values in one experiment's rows give none (a finding of comparability already)
    both = rows(("rtx4090-batch", 512), ("rtx4090-batch", 256), ("b200-batch", 512), ("b200-batch", 256))
    assert _work(open_, both) == []
    # an experiment named in another case is another experiment
    assert _work(open_, rows(("rtx4090-batch", 512), ("RTX4090-BATCH", 256), ("b200-batch", 512))) == []


def test_common_seeds_in_any_order_are_the_same_work() -> None:
    assert _work(_protocol({}, {}, seeds=([1, 2], [2, 1]))) == []
    [(field, said)] = _work(_protocol({}, {}, seeds=([1, 2], [1, 3])))
    assert field == "/experiments/1/seeds" and said.endswith("rtx4090-batch [1, 2], b200-batch [1, 3]")
    # listed seeds against one fixed seed: another kind of work
    assert [f for f, _ in _work(_protocol({}, {}, seeds=([1234], None)))] == ["/experiments/1/fixed/seed"]


def test_a_warmup_fact_is_named_as_warmup() -> None:
    second = {**EXAMPLE["experiments"][1], "warmup": {**EXAMPLE["experiments"][1]["warmup"], "iterations": 3}}
    [(field, said)] = _work(Protocol.of({**EXAMPLE, "experiments": [EXAMPLE["experiments"][0], second]}))
    assert field == "/experiments/1/warmup/iterations"
    assert said.startswith("warmup.iterations differs between experiments rtx4090-batch and b200-batch")


def _measured(revision: object, tokenizer: object = ABSENT) -> dict[str, MeasurementDoc]:
    model: dict[str, Any] = {"name": "m", "revision": revision}
    if tokenizer is not ABSENT:
        model["tokenizer_revision"] = tokenizer
    counters = dict.fromkeys(("baseline_allocated_bytes", "baseline_reserved_bytes", "final_allocated_bytes",
                              "final_reserved_bytes", "peak_allocated_bytes", "peak_reserved_bytes"))
    doc = MeasurementDoc.of({
        "schema_version": "1", "environment": {"python_version": "3.11", "device": "cuda:0", "gpu_available": True},
        "configuration": {"device": "cuda:0", "batch": 1, "dtype": "float32", "warmup": 0, "repeats": 1},
        "model": model, "phases": [{"phase": "warm_forward", "repeat": 1, "status": "ok", "elapsed_seconds": 1.0,
                                    **counters}]})
    return {"measurements/rtx4090-batch-b1.json": doc}


@pytest.mark.parametrize("revision,tokenizer,fields", [
    ("synthetic-classifier-r1", ABSENT, []), (None, ABSENT, []),
    ("synthetic-classifier-r2", ABSENT, ["/model/revision"]),
    ("synthetic-classifier-r1", "synthetic-tokenizer-r1", []),
    ("synthetic-classifier-r1", "synthetic-tokenizer-R1", ["/model/tokenizer_revision"]),
])
def test_a_measured_model_against_the_fixed_revisions(revision: object, tokenizer: object,
                                                      fields: list[str]) -> None:
    found = samework.measured_model_findings(Protocol.of(EXAMPLE), _measured(revision, tokenizer))
    assert [(f.field, f.file) for f in found] == [(f, "measurements/rtx4090-batch-b1.json") for f in fields]
    if fields == ["/model/revision"]:
        assert found[0].message == ('measurements/rtx4090-batch-b1.json ran model revision "synthetic-classifier-r2"; '
                                    'rtx4090-batch/b1 registers model_revision "synthetic-classifier-r1" (the value '
                                    "held fixed)")
    assert samework.measured_model_findings(Protocol.of(EXAMPLE), {}) == []


def test_a_null_never_matches_the_text_none() -> None:
    # input_order null (left open) in one experiment, the text "None" in the other: different work
    assert [f for f, _ in _work(_protocol({"input_order": None}, {"input_order": "None"}))] == [
        "/experiments/1/fixed/input_order"]


def test_a_fact_the_protocol_fixes_is_not_read_from_the_grid() -> None:
    rows = [GridRow.of({"experiment_id": "b200-batch", "variant_id": "b1", "context": 256})]
    assert _work(_protocol({}, {}), rows) == []


def test_a_value_is_quoted_as_the_protocol_writes_it() -> None:
    [(_, said)] = _work(_protocol({"padding": "à droite"}, {"padding": "links"}))
    assert said.endswith('rtx4090-batch "à droite", b200-batch "links"')


def test_a_grid_named_like_the_protocol_in_another_case_is_still_the_grid() -> None:
    open_ = _protocol({"context": None}, {"context": None})
    rows = [GridRow.of({"experiment_id": e, "variant_id": "b1", "context": c})
            for e, c in (("rtx4090-batch", 512), ("b200-batch", 256))]
    [finding] = samework.experiment_findings(open_, rows, "PROTOCOL.JSON")
    assert finding.message.endswith("rtx4090-batch 512 (PROTOCOL.JSON; open in protocol.json), b200-batch 256 "
                                    "(PROTOCOL.JSON; open in protocol.json)")


def test_a_subgroup_summary_takes_only_its_own_id() -> None:
    # a result named SHORT (another case) is no result of the registered subgroup short
    assert subgroups.summarise(_quality(), [(True, False, [_result(0.9, 0.0, True, gid="SHORT")])]) == ()
