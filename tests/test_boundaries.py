"""Issue 31's boundaries: instants with offsets, whole-day windows, macro-F1, separation, claims and money."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from seed_rules import edit_protocol
from sklearn.metrics import f1_score

from generator.audit.check import check_campaign
from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.load.inputs.protocol import ExperimentSpec, Protocol
from generator.audit.load.inputs.rows import GridRow
from generator.audit.load.readers.predictions import read_ids, read_labels
from generator.audit.recompute.decision.gate import UNMEASURED_REASON
from generator.audit.recompute.decision.model import Window
from generator.audit.recompute.money import cost, package
from generator.audit.recompute.quality.acceptance import Acceptance, assess_run, claim_findings, prepare_truth
from generator.audit.recompute.quality.tolerances import QUALITY_TOLERANCE
from generator.audit.recompute.times import runtimes, timing
from generator.audit.report import _usd_decimal, format_finding, format_findings
from generator.core.jsonvalue import JsonScalar
from generator.core.money import usd_amount
from generator.render.view.i18n import Formats

# ------------------------------------------------------------------------------------ instants and edges
# The window 2026-10-05T09:00 to 2026-10-09T09:00 Europe/Paris (UTC+2) is 07:00Z to 07:00Z; the registration
# is written with an offset, the runs in UTC. Rules: a run must start strictly after registered_at (one at the
# registration instant is not after it); a run inside the window may touch both edges; a run may end exactly
# at the deadline.
PARIS_REGISTERED = "2026-10-05T08:50:00+02:00"  # 06:50Z, ten minutes before the window
# The example's protocol: what a test leaves out of its partial protocol or experiment is the example's.
EXAMPLE_PROTOCOL = json.loads((Path(__file__).resolve().parents[1] / "inputs" / "example" / "protocol.json")
                              .read_text(encoding="utf-8"))


def _typed(partial: dict[str, Any]) -> Protocol:
    return Protocol.of({**EXAMPLE_PROTOCOL, **partial})


def _experiment(partial: dict[str, Any]) -> ExperimentSpec:
    return ExperimentSpec.of({**EXAMPLE_PROTOCOL["experiments"][0], **partial})


def _measurement(phases: list[dict[str, Any]]) -> MeasurementDoc:
    """A measurement holding these phases (each `ok`, its counters not measured, unless it says otherwise)."""
    counters = dict.fromkeys(("baseline_allocated_bytes", "baseline_reserved_bytes", "final_allocated_bytes",
                              "final_reserved_bytes", "peak_allocated_bytes", "peak_reserved_bytes"))
    return MeasurementDoc.of({
        "schema_version": "1", "environment": {"python_version": "3.11", "device": "cuda:0", "gpu_available": True},
        "configuration": {"device": "cuda:0", "batch": 1, "dtype": "float32", "warmup": 0, "repeats": 1},
        "phases": [{"status": "ok", "elapsed_seconds": 1.0, **counters, **p} for p in phases]})


def _protocol(registered_at: str = PARIS_REGISTERED, deadline: str = "2026-10-09T18:00") -> dict[str, Any]:
    return {"registered_at": registered_at, "deadline": deadline, "experiments": [],
            "window": {"start": "2026-10-05T09:00", "end": "2026-10-09T09:00", "timezone": "Europe/Paris"}}


def _codes(protocol: dict[str, Any], started: str, ended: str) -> set[str]:
    phase = {"phase": "cold_forward", "started_at": started, "ended_at": ended}
    found = runtimes.run_time_findings(_typed(protocol), {"m.json": _measurement([phase])}, "grid.csv", [], [])
    return {f.code for f in found if f.is_error}


def test_a_run_after_an_offset_registration_is_not_before_it() -> None:
    # 07:30Z is after 08:50+02:00 (06:50Z), though its text sorts before it
    assert _codes(_protocol(), "2026-10-05T07:30:00.000000Z", "2026-10-05T07:31:00.000000Z") == set()


def test_a_run_before_a_negative_offset_registration_is_found() -> None:
    # registered 2026-10-04T23:50-07:00 = 06:50Z on Oct 5; a run at 06:40Z is before it, though its text sorts after
    codes = _codes(_protocol("2026-10-04T23:50:00-07:00"), "2026-10-05T06:40:00.000000Z",
                   "2026-10-05T06:41:00.000000Z")
    assert "run-before-registration" in codes


def test_a_run_on_the_registration_instant_is_not_after_it() -> None:
    at = _codes(_protocol(), "2026-10-05T06:50:00.000000Z", "2026-10-05T06:51:00.000000Z")
    assert "run-before-registration" in at
    after = _codes(_protocol(), "2026-10-05T06:50:00.000001Z", "2026-10-05T06:51:00.000000Z")
    assert "run-before-registration" not in after


def test_runs_may_touch_both_edges_of_the_window() -> None:
    assert _codes(_protocol(), "2026-10-05T07:00:00.000000Z", "2026-10-09T07:00:00.000000Z") == set()
    assert "run-outside-window" in _codes(_protocol(), "2026-10-05T06:59:59.999999Z", "2026-10-05T07:01:00.000000Z")
    assert "run-outside-window" in _codes(_protocol(), "2026-10-09T06:59:00.000000Z", "2026-10-09T07:00:00.000001Z")


def test_a_run_may_end_exactly_at_the_deadline() -> None:
    protocol = _protocol(deadline="2026-10-09T09:00")  # the deadline on the window's end: 07:00Z
    assert _codes(protocol, "2026-10-09T06:59:00.000000Z", "2026-10-09T07:00:00.000000Z") == set()
    assert "run-after-deadline" in _codes(protocol, "2026-10-09T06:59:00.000000Z", "2026-10-09T07:00:00.000001Z")


def test_a_window_in_a_negative_offset_zone() -> None:
    # 09:00 in New York in October (UTC-4) is 13:00Z: a run at 12:59:59Z is before the window, 13:00Z is on its edge
    protocol = {**_protocol("2026-10-05T08:00:00-04:00"),
                "window": {"start": "2026-10-05T09:00", "end": "2026-10-09T09:00", "timezone": "America/New_York"}}
    assert _codes(protocol, "2026-10-05T13:00:00.000000Z", "2026-10-05T13:01:00.000000Z") == set()
    assert "run-outside-window" in _codes(protocol, "2026-10-05T12:59:59.000000Z", "2026-10-05T13:01:00.000000Z")


# ------------------------------------------------------------------------------------- whole-day windows


def _window(start: str, end: str, tz: str = "Europe/Paris") -> Window:
    cover = cost.coverage(cost.window_hours(start, end, tz))
    return Window(start=start, end=end, timezone=tz, deadline=end, ends_before_deadline=True, hours=cover.hours,
                  packages=cover.packages, smallest_covering_days=cover.smallest_covering_days,
                  extra_30_day_periods=cover.extra_30_day_periods)


# Paris has no clock change between these dates: N days are N x 24 h.
WHOLE_DAYS = [(3, "2026-06-01T09:00", "2026-06-04T09:00"), (7, "2026-06-01T09:00", "2026-06-08T09:00"),
              (30, "2026-06-01T09:00", "2026-07-01T09:00")]


@pytest.mark.parametrize(("days", "start", "end"), WHOLE_DAYS, ids=[f"{d}-days" for d, _, _ in WHOLE_DAYS])
def test_a_package_exactly_as_long_as_the_window_covers_it(days: int, start: str, end: str) -> None:
    window = _window(start, end)
    assert window.hours == str(days * 24)
    assert window.smallest_covering_days == days
    assert package.covers_window(window, days)
    exp = {"id": "e", "rental": {"gpu": "g", "duration_days": days, "lots": 1}}
    _, found = package.price_package(_experiment(exp), [], window, {}, "grid.csv", "tariffs.csv")
    assert "package-does-not-cover-window" not in {f.code for f in found}


@pytest.mark.parametrize(("days", "start", "end"), WHOLE_DAYS, ids=[f"{d}-days" for d, _, _ in WHOLE_DAYS])
def test_one_second_more_is_not_covered(days: int, start: str, end: str) -> None:
    window = _window(start, end + ":01")
    assert window.hours == str(days * 24)  # shown rounded to 0.01 h: the coverage must not be judged on it
    assert not package.covers_window(window, days)
    assert window.smallest_covering_days == {3: 7, 7: 30, 30: None}[days]
    if days == 30:
        assert window.extra_30_day_periods == 1
    exp = {"id": "e", "rental": {"gpu": "g", "duration_days": days, "lots": 1}}
    row = {"duration_days": days}
    _, found = package.price_package(_experiment(exp), [(0, GridRow.of(row), 2)], window, {}, "grid.csv",
                                     "tariffs.csv")
    assert {"package-does-not-cover-window", "duration-does-not-cover-window"} <= {f.code for f in found}


def test_thirty_days_across_the_autumn_change_are_not_covered() -> None:
    # 2026-10-05 to 2026-11-04 in Paris holds the night the clocks go back: 721 h, one more than 30 days
    window = _window("2026-10-05T09:00", "2026-11-04T09:00")
    assert window.hours == "721" and not package.covers_window(window, 30)


# ------------------------------------------------------------------------- macro-F1 as `check` computes it


def _macro_f1_by_check(tmp_path: Path, truth: list[str], pred: list[str], classes: tuple[str, ...]) -> float | None:
    ids = [f"t{i:03d}" for i in range(len(truth))]
    (tmp_path / "expected.csv").write_text("id\n" + "".join(f"{i}\n" for i in ids), encoding="utf-8")
    for name, labels in (("reference.csv", truth), ("warm-1.csv", pred)):
        rows = "".join(f"{i},{label}\n" for i, label in zip(ids, labels, strict=True))
        (tmp_path / name).write_text("id,label\n" + rows, encoding="utf-8")
    expected = read_ids(tmp_path / "expected.csv", "expected.csv")
    reference = read_labels(tmp_path / "reference.csv", "reference.csv", set(classes), Severity.ERROR)
    predictions = read_labels(tmp_path / "warm-1.csv", "warm-1.csv", set(classes), Severity.WARNING)
    truth_codes = prepare_truth(expected.ids, True, reference, classes)
    protocol = {"quality": {"metric": "macro_f1", "threshold": 0.5, "tolerance": 0.1, "direction": "higher_is_better",
                            "reference": {"name": "r", "value": 0.6}}}
    return assess_run(truth_codes, predictions, _typed(protocol)).quality_value


def test_macro_f1_with_a_declared_class_absent_is_sklearns(tmp_path: Path) -> None:
    # "science" is declared but neither true nor predicted anywhere: it has no F1 (0/0) and is left out of the
    # mean, as scikit-learn leaves it out (its default labels; or labels=declared with zero_division=nan).
    # Counting it as 0 would lower the score for a class the corpus does not hold (0.4889 instead of 0.7333).
    classes = ("games", "net", "science")
    truth = ["games", "games", "games", "net", "net"]
    pred = ["games", "games", "net", "net", "games"]
    value = _macro_f1_by_check(tmp_path, truth, pred, classes)
    assert value == pytest.approx(f1_score(truth, pred, average="macro", labels=list(classes), zero_division=np.nan))
    assert value == pytest.approx(f1_score(truth, pred, average="macro"))
    assert value != pytest.approx(f1_score(truth, pred, average="macro", labels=list(classes), zero_division=0))


def test_macro_f1_with_a_declared_class_never_predicted_is_sklearns(tmp_path: Path) -> None:
    # "science" is true once and never predicted: its F1 is 0 and counts, in either reading
    classes = ("games", "net", "science")
    truth = ["games", "games", "science", "net", "net"]
    pred = ["games", "games", "net", "net", "games"]
    value = _macro_f1_by_check(tmp_path, truth, pred, classes)
    assert value == pytest.approx(f1_score(truth, pred, average="macro", labels=list(classes)))


# ------------------------------------------------------------------------------------ timing separation


def _series(*seconds: float) -> Any:
    return timing.phase_stats(list(seconds), 0)


def test_overlapping_ranges_never_decide_whatever_the_gap() -> None:
    # medians 1.0 and 3.0 (gap 2.0), spreads 1.5 and 1.0: the gap exceeds the spread, but the ranges overlap
    a, b = _series(1.0, 1.0, 1.0, 1.0, 2.5), _series(2.0, 3.0, 3.0, 3.0, 3.0)
    result = timing.separation(a, b)
    assert result.decides is False and result.reason == "the min-max ranges overlap"
    assert timing.separation(b, a).decides is False


def test_ranges_that_touch_overlap() -> None:
    a, b = _series(1.0, 1.0, 1.0, 1.0, 2.0), _series(2.0, 3.0, 3.0, 3.0, 3.0)
    assert timing.separation(a, b).decides is False


def test_ranges_apart_with_a_gap_beyond_the_spread_decide() -> None:
    a, b = _series(1.0, 1.0, 1.1, 1.1, 1.2), _series(3.0, 3.0, 3.1, 3.1, 3.2)
    assert timing.separation(a, b).decides is True


# ------------------------------------------------------------------- claimed against recomputed, both ways

PROTOCOL_Q = {"quality": {"metric": "macro_f1", "threshold": 0.8, "tolerance": 0.03, "direction": "higher_is_better",
                          "reference": {"name": "r", "value": 0.84}}}
ROW: dict[str, JsonScalar] = {
    "experiment_id": "e", "variant_id": "v", "phase": "warm", "run_index": 1, "expected_ids": 1000,
    "observed_ids": 1000, "ids_match": True, "format_valid": True, "corpus_accepted": True, "quality_value": 0.85}


def _accepted() -> Acceptance:
    return Acceptance(expected_ids=1000, observed_ids=1000, rows=1000, ids_match=True, format_valid=True,
                      quality_value=0.85, quality_ok=True, corpus_accepted=True, prediction_file="p.csv",
                      file_present=True)


def _claims(acc: Acceptance, **cells: JsonScalar) -> dict[str, Finding]:
    row = GridRow.of({**ROW, **cells})
    return {f.field or "": f for f in claim_findings(row, 2, acc, _typed(PROTOCOL_Q), "grid.csv")}


def test_the_example_row_agrees() -> None:
    assert _claims(_accepted()) == {}


@pytest.mark.parametrize("delta", [QUALITY_TOLERANCE * 1.2, -QUALITY_TOLERANCE * 1.2], ids=["above", "below"])
def test_quality_claimed_beyond_the_tolerance_either_way(delta: float) -> None:
    found = _claims(_accepted(), quality_value=0.85 + delta)
    assert found["quality_value"].code == "quality-value-mismatch"


@pytest.mark.parametrize("delta", [QUALITY_TOLERANCE * 0.8, -QUALITY_TOLERANCE * 0.8], ids=["above", "below"])
def test_quality_claimed_within_the_tolerance_either_way(delta: float) -> None:
    assert "quality_value" not in _claims(_accepted(), quality_value=0.85 + delta)


# Exactly at the stated precision: 0.8755 rounded half-up to three decimals is 0.876, and 0.8755 half-down 0.875;
# both agree (in binary floating point 0.876 - 0.8755 is 5.000000000000004e-4, just over the tolerance). One unit of
# the fourth decimal past either edge disagrees.
@pytest.mark.parametrize(("claimed", "agrees"), [(0.876, True), (0.875, True), (0.8761, False), (0.8749, False),
                                                 (0.87600001, False)])
def test_quality_claimed_exactly_at_the_tolerance(claimed: float, agrees: bool) -> None:
    acc = _accepted()
    acc.quality_value = 1751 / 2000  # 0.8755: a metric's value as a ratio of counts
    assert ("quality_value" not in _claims(acc, quality_value=claimed)) is agrees


@pytest.mark.parametrize("column", ["expected_ids", "observed_ids"])
@pytest.mark.parametrize("claimed", [999, 1001], ids=["below", "above"])
def test_counts_claimed_either_way(column: str, claimed: int) -> None:
    assert _claims(_accepted(), **{column: claimed})[column].recomputed == 1000


@pytest.mark.parametrize("column", ["ids_match", "format_valid", "corpus_accepted"])
def test_booleans_claimed_either_way(column: str) -> None:
    # claimed true, the evidence false
    rejected = _accepted()
    setattr(rejected, column, False)
    found = _claims(rejected)[column]
    assert (found.claimed, found.recomputed) == (True, False)
    assert "claims true, the evidence gives false" in found.message and "True" not in found.message
    # claimed false, the evidence true
    found = _claims(_accepted(), **{column: False})[column]
    assert (found.claimed, found.recomputed) == (False, True)


@pytest.mark.parametrize("claimed", [10999, 11001, 22000, 5500], ids=["below", "above", "twice", "half"])
def test_package_total_claimed_either_way(claimed: int) -> None:
    tariff = cost.Tariff(gpu="g", model_name="G", duration_days=7, price_per_lot_usd_minor=11000, gpus_per_lot=1,
                         snapshot_date="2026-09-24", price_status="published")
    exp = {"id": "e", "rental": {"gpu": "g", "duration_days": 7, "lots": 1}}
    window = _window("2026-06-01T09:00", "2026-06-05T09:00")
    row = GridRow.of({"package_total_usd_minor": claimed})
    _, found = package.price_package(_experiment(exp), [(0, row, 2)], window, {("g", 7): tariff}, "grid.csv",
                                     "tariffs.csv")
    hits = [f for f in found if f.code == "package-total-mismatch"]
    assert [(f.claimed, f.recomputed) for f in hits] == [(claimed, 11000)]


# --------------------------------------------------------------------------------------- values and causes


def test_values_print_as_the_files_write_them() -> None:
    from generator.audit.load.findings import cell_text  # here, so that the module imports where it is missing

    assert [cell_text(v) for v in (True, False, None, "", 0, 0.875369, "h200")] == \
        ["true", "false", "(empty)", "(empty)", "0", "0.875369", "h200"]
    text = format_finding(make_finding("ids-match-mismatch", Severity.ERROR, "grid.csv", "m", line=2, claimed=True,
                                       recomputed=False))
    assert "claimed: true; recomputed: false" in text
    text = format_finding(make_finding("no-tariff", Severity.WARNING, "t.csv", "m", claimed="h200"))
    assert "claimed: h200" in text and "None" not in text and "'" not in text


def test_a_missing_prediction_file_is_the_cause_of_its_row_findings() -> None:
    rel = "predictions/e/v/warm-1.csv"
    missing = Acceptance(expected_ids=1000, observed_ids=0, rows=0, missing=1000)
    found = claim_findings(GridRow.of(ROW), 2, missing, _typed(PROTOCOL_Q), "grid.csv")
    assert {f.field for f in found} == {"observed_ids", "ids_match", "format_valid", "corpus_accepted",
                                        "quality_value"}
    for f in found:
        assert f.fix is not None and f.fix.startswith(f"restore the run's prediction file {rel}, or record the run "
                                                      "as failed"), f.fix
        assert "recomputed" not in f.fix and "write" not in f.fix, f.fix
        assert f.recomputed is None and f.extra["follows_from"] == {"code": "missing-prediction-file", "file": rel}
    cause = make_finding("missing-prediction-file", Severity.ERROR, rel, "the prediction file is missing")
    lines = format_findings([cause, *found], subject="c", max_findings=50).splitlines()
    assert lines[0].startswith(f"{rel}: the prediction file is missing")
    assert lines[1] == "  5 further findings follow from it (fix it first):"
    assert len(lines) == 8 and all(line.startswith("    grid.csv:2: ") for line in lines[2:-1])
    assert lines[-1] == "c: 1 error (+5 that follow from it), 0 warnings, 0 info"


# ------------------------------------------------------------------------------------------------- money


def test_a_fraction_of_a_cent_is_rounded_half_up_in_terminal_and_note() -> None:
    # A cost per result carries fractions of a cent: 20625 cents over 10 results is 2062.50 cents.
    assert cost.per_result(20625, 10).usd_minor == "2062.50"
    assert _usd_decimal("2062.50") == "20.63 USD"
    assert usd_amount(Decimal("2062.50")) == "20.63"
    assert Formats("en").usd("2062.50") == "USD\u00a020.63"
    assert Formats("de").usd("2062.50") == "20,63\u00a0USD"
    # below the half, both round down
    assert _usd_decimal("2062.49") == "20.62 USD" and Formats("en").usd("2062.49") == "USD\u00a020.62"


# ------------------------------------------------------------------------------ measured evidence (issue 47)
# The answer is withheld for want of measurements only when no configuration's runs were measured and dated: one
# measured configuration beside unmeasured ones answers; one dated phase dates a file (its others: run-times-partial).


def test_one_measured_configuration_is_enough_to_answer_and_none_is_not(campaign: Path) -> None:
    def keep(only: tuple[int, int] | None) -> None:
        edit_protocol(campaign, lambda p: [v.pop("measurement", None) for i, e in enumerate(p["experiments"])
                                           for j, v in enumerate(e["variants"]) if (i, j) != only])

    keep((0, 1))  # rtx4090-batch/b4 alone keeps its measurement
    decision = check_campaign(campaign).decision["decision"]
    assert (decision["answer"], decision["status"]) == ("rtx4090-batch/b4", "answered"), decision["reason"]
    keep(None)
    decision = check_campaign(campaign).decision["decision"]
    assert (decision["answer"], decision["status"], decision["reason"]) == (None, "withheld", UNMEASURED_REASON)
