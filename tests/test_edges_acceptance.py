"""Issue 51's edges of acceptance and attempts: a run without its file, the reader's class codes, each claimed
cell's message, a failed run, completed=N, five runs, two runs of spread, registered exclusions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from generator.audit.load.findings import Severity, make_finding
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.inputs.rows import GridRow
from generator.audit.load.readers.grid import row_outcome
from generator.audit.load.readers.labelfile import LabelFile
from generator.audit.recompute.decision.runcells import SubgroupRun
from generator.audit.recompute.evidence import attempts
from generator.audit.recompute.quality.acceptance import (
    Acceptance,
    _subgroup_failure,
    assess_run,
    assess_run_reference,
    claim_findings,
    completed_findings,
    failed_run_findings,
    prepare_truth,
)
from generator.audit.recompute.times import timing
from generator.audit.validate import registered

EXAMPLE = json.loads((Path(__file__).resolve().parents[1] / "inputs" / "example" / "protocol.json")
                     .read_text(encoding="utf-8"))
PROTOCOL = Protocol.of(EXAMPLE)
GRID = "grid.csv"
IDS = [f"d{i}" for i in range(7)]  # seven expected IDs: more than the five a finding shows


def _row(**cells: object) -> GridRow:
    return GridRow.of({"experiment_id": "rtx4090-batch", "variant_id": "b1", "phase": "warm", "run_index": 1,
                       **cells})  # type: ignore[dict-item]


def _acc(**fields: object) -> Acceptance:
    base: dict[str, object] = {"expected_ids": 7, "observed_ids": 7, "rows": 7, "ids_match": True,
                               "format_valid": True, "quality_value": 0.9, "quality_ok": True,
                               "corpus_accepted": True, "prediction_file": "p.csv", "file_present": True}
    return Acceptance(**{**base, **fields})  # type: ignore[arg-type]


def _group(gid: str, accepted: bool, value: float | None = 0.5) -> SubgroupRun:
    return SubgroupRun(gid, 3, 0, value, 0.25 if value is not None else None, accepted)


# ------------------------------------------------------------------------------------ a run without its file

def test_a_run_without_its_file_observed_nothing() -> None:
    # Both recomputations: no ID observed, no row read, and the first five expected IDs missing, from the first.
    labels = LabelFile(file="r.csv", ids=IDS, labels=["games"] * 7)
    truth = prepare_truth(IDS, True, labels, sorted(PROTOCOL.classes))
    for acc in (assess_run(truth, None, PROTOCOL),
                assess_run_reference(IDS, dict.fromkeys(IDS, "games"), None, PROTOCOL)):
        assert (acc.expected_ids, acc.observed_ids, acc.rows, acc.missing) == (7, 0, 0, 7)
        assert acc.first_missing == IDS[:5] and acc.file_present is False and acc.corpus_accepted is False


def test_the_reference_recomputation_reads_a_file_without_labels() -> None:
    # A file with only the id column (labels None, a format finding of reading): its IDs are still compared,
    # nothing is scored.
    missing = make_finding("missing-column", Severity.ERROR, "p.csv", "no label column")
    acc = assess_run_reference(IDS, dict.fromkeys(IDS, "games"),
                               LabelFile(file="p.csv", ids=IDS, labels=None, problems=[missing]), PROTOCOL)
    assert (acc.observed_ids, acc.ids_match, acc.quality_value, acc.corpus_accepted) == (7, True, None, False)


# ------------------------------------------------------------------------------------ the reader's class codes

def test_class_codes_are_taken_only_for_the_same_classes() -> None:
    # A file whose codes index another class order (reversed): its labels are looked up, its codes not used.
    classes = sorted(PROTOCOL.classes)
    labels = [classes[i % 2] for i in range(7)]
    backwards = tuple(reversed(classes))
    wrong = np.array([backwards.index(v) for v in labels], dtype=np.int8)
    reference = LabelFile(file="r.csv", ids=IDS, labels=labels, label_codes=wrong, label_classes=backwards)
    truth = prepare_truth(IDS, True, reference, classes)
    assert truth.codes.tolist() == [classes.index(v) for v in labels]
    run = LabelFile(file="p.csv", ids=IDS, labels=labels, label_codes=wrong, label_classes=backwards)
    assert assess_run(truth, run, PROTOCOL).quality_value == 1.0


def test_class_codes_for_these_classes_are_used() -> None:
    # The reader's codes for the sorted classes (its labels released): the reference and the run are read from them.
    classes = sorted(PROTOCOL.classes)
    codes = np.array([i % 2 for i in range(7)], dtype=np.int8)
    reference = LabelFile(file="r.csv", ids=IDS, labels=None, label_codes=codes, label_classes=tuple(classes))
    truth = prepare_truth(IDS, True, reference, classes)
    assert truth.codes.tolist() == codes.tolist()
    run = LabelFile(file="p.csv", ids=IDS, labels=None, label_codes=codes, label_classes=tuple(classes))
    assert assess_run(truth, run, PROTOCOL).quality_value == 1.0


# ------------------------------------------------------------------------------------ claimed cells

def _messages(row: GridRow, acc: Acceptance) -> dict[str, str]:
    return {f.field or "": f.message for f in claim_findings(row, 3, acc, PROTOCOL, GRID)}


def test_a_failed_run_claimed_accepted_is_said_once() -> None:
    # corpus_accepted true on a failed run is failed-run-accepted's; its other claims are still compared.
    failed = _row(notes="outcome=oom; completed=3; error=CUDA out of memory", corpus_accepted=True, ids_match=True)
    acc = _acc(ids_match=False, corpus_accepted=False, quality_value=None, quality_ok=False, missing=4)
    assert set(_messages(failed, acc)) == {"ids_match"}
    [finding] = failed_run_findings(failed, 3, GRID)
    assert (finding.code, finding.claimed, finding.recomputed) == ("failed-run-accepted", True, False)
    # the same claim on a completed run is a mismatch of its own
    completed = _row(corpus_accepted=True)
    assert set(_messages(completed, acc)) == {"corpus_accepted"}
    assert failed_run_findings(completed, 3, GRID) == []


@pytest.mark.parametrize("claimed", [False, None])
def test_a_failed_run_not_claimed_accepted_is_no_finding(claimed: bool | None) -> None:
    row = _row(notes="outcome=failed; completed=0; error=killed", corpus_accepted=claimed)
    assert failed_run_findings(row, 3, GRID) == []


def test_ids_match_says_how_the_sets_differ_and_only_there() -> None:
    acc = _acc(ids_match=False, format_valid=False, corpus_accepted=False, quality_value=None, quality_ok=False,
               duplicates=1, missing=2, extra=3)
    said = _messages(_row(ids_match=True, format_valid=True), acc)
    assert said["ids_match"] == ("ids_match claims true, the evidence gives false (1 duplicates, 2 missing, 3 extra "
                                 "IDs; equal row counts prove nothing: the sets were compared)")
    assert said["format_valid"] == "format_valid claims true, the evidence gives false"
    # a claim of false against a match found is no set to explain
    said = _messages(_row(ids_match=False), _acc())
    assert said["ids_match"] == "ids_match claims false, the evidence gives true"


def test_corpus_accepted_names_the_failing_subgroups_only_when_the_whole_corpus_passes() -> None:
    groups = [_group("short", True), _group("long", False), _group("medium", False, None)]
    acc = _acc(corpus_accepted=False, subgroups=groups)
    said = _messages(_row(corpus_accepted=True, format_valid=False), acc)
    assert said["corpus_accepted"] == (
        "corpus_accepted claims true, the evidence gives false (the long subgroup fails its rule: macro-F1 0.500000, "
        "degradation 0.250000 against its reference; the medium subgroup is not scored)")
    # no detail where the corpus as a whole fails, or where every subgroup passes, nor on another column
    assert _messages(_row(corpus_accepted=True), replace_acc(acc, quality_ok=False))["corpus_accepted"] \
        == "corpus_accepted claims true, the evidence gives false"
    assert _messages(_row(corpus_accepted=True), replace_acc(acc, subgroups=[_group("short", True)]))[
        "corpus_accepted"] == "corpus_accepted claims true, the evidence gives false"
    assert said["format_valid"] == "format_valid claims false, the evidence gives true"


def replace_acc(acc: Acceptance, **fields: object) -> Acceptance:
    return Acceptance(**{**acc.__dict__, **fields})


def test_a_subgroup_failure_says_its_value_or_that_it_is_not_scored() -> None:
    assert _subgroup_failure(_group("short", False, None), "macro_f1") == "the short subgroup is not scored"
    assert _subgroup_failure(SubgroupRun("long", 3, 0, 0.7, None, False), "macro_f1") == (
        "the long subgroup fails its rule: macro-F1 0.700000, degradation 0.000000 against its reference")


@pytest.mark.parametrize("ids_match,format_valid,said", [
    (False, True, "quality_value is claimed but cannot be computed: the ID set or the format is not valid"),
    (True, False, "quality_value is claimed but cannot be computed: the ID set or the format is not valid"),
    (True, True, "quality_value is claimed, but macro-F1 is undefined on these labels (one class only in the "
                 "reference and the predictions, as scikit-learn leaves it)"),
])
def test_a_quality_value_claimed_where_none_is_computed(ids_match: bool, format_valid: bool, said: str) -> None:
    acc = _acc(ids_match=ids_match, format_valid=format_valid, quality_value=None, quality_ok=False,
               corpus_accepted=False)
    [finding] = [f for f in claim_findings(_row(quality_value=0.9), 3, acc, PROTOCOL, GRID)
                 if f.field == "quality_value"]
    assert (finding.message, finding.claimed, finding.recomputed) == (said, 0.9, None)


def test_a_quality_value_claimed_against_another_gives_six_decimals() -> None:
    acc = _acc(quality_value=0.912345678)
    [finding] = claim_findings(_row(quality_value=0.9), 3, acc, PROTOCOL, GRID)
    assert (finding.field, finding.claimed, finding.recomputed) == ("quality_value", 0.9, 0.912346)
    assert finding.message == "quality_value claims 0.9, the predictions give 0.912346"
    assert claim_findings(_row(quality_value=0.912346), 3, acc, PROTOCOL, GRID) == []
    assert claim_findings(_row(), 3, acc, PROTOCOL, GRID) == []


def test_a_missing_file_leaves_an_empty_expected_ids_alone() -> None:
    acc = _acc(observed_ids=0, rows=0, missing=7, ids_match=False, format_valid=False, quality_value=None,
               quality_ok=False, corpus_accepted=False, prediction_file=None, file_present=False)
    assert claim_findings(_row(), 3, acc, PROTOCOL, GRID) == []
    [finding] = claim_findings(_row(expected_ids=8), 3, acc, PROTOCOL, GRID)
    assert (finding.field, finding.claimed, finding.recomputed) == ("expected_ids", 8, 7)
    assert claim_findings(_row(expected_ids=7), 3, acc, PROTOCOL, GRID) == []


# ------------------------------------------------------------------------------------ completed=N

@pytest.mark.parametrize("notes,observed,codes", [
    ("outcome=oom; completed=3; error=x", 3, []),
    ("outcome=oom; completed=3; error=x", 4, ["completed-count-mismatch"]),
    ("outcome=oom; error=x", 4, []),  # no count claimed: nothing to compare
    ("completed=3", 4, []),  # a completed run's notes: completed= is a failure's count
])
def test_completed_counts_only_a_failed_run(notes: str, observed: int, codes: list[str]) -> None:
    acc = _acc(observed_ids=observed, ids_match=False, corpus_accepted=False, quality_value=None, quality_ok=False)
    assert [f.code for f in completed_findings(_row(notes=notes), 3, acc, GRID)] == codes
    assert row_outcome(notes).completed in (3, None)


# ------------------------------------------------------------------------------------ attempts

def _series(runs: int) -> list[str]:
    exp = {**EXAMPLE["experiments"][0], "runs_per_variant": runs}
    return [f.message for f in attempts.series_findings(Protocol.of({**EXAMPLE, "experiments": [exp]}), "p.json")]


@pytest.mark.parametrize("runs,tail", [(1, "one run shows none"), (2, "few runs show little"),
                                       (4, "few runs show little")])
def test_fewer_than_five_runs_and_whether_one_shows_any_spread(runs: int, tail: str) -> None:
    [message] = _series(runs)
    assert message.endswith(f"fewer than the seeds' 5: its median and min-max show little of the spread, and {tail}")


def test_five_runs_are_enough() -> None:
    assert _series(5) == []


@pytest.mark.parametrize("a,b,decides", [
    ([10.0, 10.1], [20.0, 20.1], True),  # two runs each: a spread to compare
    ([10.0], [20.0, 20.1], False), ([10.0, 10.1], [20.0], False),  # one run: none
])
def test_two_runs_show_a_spread(a: list[float], b: list[float], decides: bool) -> None:
    sep = attempts.separation(timing.phase_stats(a, 0), timing.phase_stats(b, 0))
    assert sep.decides is decides
    if not decides:
        assert sep.reason == "a series of fewer than two runs has no spread: its runs cannot separate it from another"


@pytest.mark.parametrize("statuses,said", [
    (["oom"], None), ([], None), (["oom", "failed", "aborted", "failed"], "1 aborted, 2 failed"),
])
def test_failure_reason_leaves_out_of_memory_to_its_own(statuses: list[str], said: str | None) -> None:
    expected = None if said is None else (f"failed attempts: {said}, kept as failure observations (only an "
                                          "exclusion registered in the protocol sets an attempt aside)")
    assert attempts.failure_reason(statuses) == expected


@pytest.mark.parametrize("cause,codes", [("provider-maintenance", []), ("power-cut", ["exclusion-not-registered"]),
                                         (None, ["exclusion-not-registered"])])
def test_an_exclusion_needs_its_registered_cause(cause: str | None, codes: list[str]) -> None:
    protocol = Protocol.of({**EXAMPLE, "exclusions": [{"cause": "provider-maintenance", "description": "outside"}]})
    notes = "outcome=excluded; reason=the host was drained" + (f"; cause={cause}" if cause else "")
    found = registered.row_outcome_findings(row_outcome(notes), protocol, 3, GRID)
    assert [f.code for f in found] == codes
    assert all("(registered exclusions: provider-maintenance)" in f.message for f in found)
    [unregistered] = registered.row_outcome_findings(row_outcome(notes), PROTOCOL, 3, GRID)
    assert "(registered exclusions: none)" in unregistered.message


def test_an_unexplained_incident_names_the_keys_that_explain_one() -> None:
    [finding] = registered.incident_findings(row_outcome("outcome=failed"), "outcome=failed", 3, GRID)
    assert finding.message.endswith("it has no error=, reason= or explanation= item")
