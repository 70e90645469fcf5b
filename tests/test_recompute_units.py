"""Unit rules of the recomputation: metrics, quality rule, timing, memory, cost and the window."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, f1_score

from generator.audit.load.inputs.rows import GridRow
from generator.audit.recompute.decision.model import CostPerResult, Separation
from generator.audit.recompute.evidence import memory
from generator.audit.recompute.money import cost
from generator.audit.recompute.times import timing
from generator.core.errors import LocalTimeError, QuoteError, UsageError
from generator.core.metrics import compute_metric, quality_rule_holds

LABELS = ["a", "b", "c", "d"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(LABELS), st.sampled_from(LABELS)), min_size=1, max_size=60))
def test_metrics_agree_with_sklearn(pairs: list[tuple[str, str]]) -> None:
    truth = [t for t, _ in pairs]
    pred = [p for _, p in pairs]
    assert compute_metric("macro_f1", truth, pred) == pytest.approx(
        f1_score(truth, pred, average="macro", zero_division=0), abs=1e-12)
    assert compute_metric("weighted_f1", truth, pred) == pytest.approx(
        f1_score(truth, pred, average="weighted", zero_division=0), abs=1e-12)
    assert compute_metric("accuracy", truth, pred) == pytest.approx(accuracy_score(truth, pred), abs=1e-12)


def test_macro_f1_counts_a_class_absent_from_predictions_as_zero() -> None:
    # class c is true twice and never predicted: its F1 is 0 and it still weighs in the mean
    truth = ["a", "a", "b", "b", "c", "c"]
    pred = ["a", "a", "b", "b", "a", "b"]
    f1_a, f1_b = 2 * 2 / (2 * 2 + 1), 2 * 2 / (2 * 2 + 1)
    assert compute_metric("macro_f1", truth, pred) == pytest.approx((f1_a + f1_b + 0) / 3)


@pytest.mark.parametrize("value,holds", [(0.80, True), (0.7999, False), (0.85, True)])
def test_quality_rule_threshold(value: float, holds: bool) -> None:
    assert quality_rule_holds(value, 0.80, 0.10, "higher_is_better", 0.84)[0] is holds


def test_quality_rule_tolerance_against_reference() -> None:
    assert quality_rule_holds(0.81, 0.80, 0.03, "higher_is_better", 0.84) == (True, pytest.approx(0.03))
    assert quality_rule_holds(0.805, 0.80, 0.03, "higher_is_better", 0.84)[0] is False
    assert quality_rule_holds(0.12, 0.20, 0.05, "lower_is_better", 0.10)[0] is True
    assert quality_rule_holds(0.16, 0.20, 0.05, "lower_is_better", 0.10)[0] is False


def test_no_tail_percentile_from_five_runs() -> None:
    s = timing.phase_stats([5.0, 1.0, 3.0, 2.0, 4.0], failures=1)
    assert (s.median, s.min, s.max, s.successes, s.failures) == (3.0, 1.0, 5.0, 5, 1)
    assert s.p95 is None
    assert s.tail_note is not None and "5 observations are too few" in s.tail_note


def test_tail_percentile_from_twenty_runs() -> None:
    s = timing.phase_stats([float(i) for i in range(1, 21)], failures=0)
    assert s.p95 == 19.0 and s.tail_note is None


def test_separation_overlap_and_gap() -> None:
    a = timing.phase_stats([10.0, 11.0, 12.0], 0)
    b = timing.phase_stats([11.5, 12.5, 13.0], 0)
    c = timing.phase_stats([30.0, 31.0, 32.0], 0)
    d = timing.phase_stats([12.1, 12.2, 30.0], 0)
    assert timing.separation(a, b).decides is False
    assert timing.separation(a, c).decides is True
    assert timing.separation(a, d).to_json_dict() == pytest.approx(
        {"decides": False, "gap": 1.2, "spread": 17.9,
         "reason": "the gap between medians is no larger than the spread"})


def test_separation_without_a_successful_run_has_no_gap() -> None:
    none = timing.phase_stats([], 2)
    sep = timing.separation(none, timing.phase_stats([1.0], 0))
    assert sep == Separation(decides=False, gap=None, spread=None, reason="a series has no successful run")
    # The format has always left gap and spread out here, rather than writing them as null.
    assert sep.to_json_dict() == {"decides": False, "reason": "a series has no successful run"}


def test_memory_invariants() -> None:
    good = {"baseline_allocated_bytes": 10, "baseline_reserved_bytes": 20, "peak_allocated_bytes": 30,
            "peak_reserved_bytes": 40}
    assert memory.invariant_findings(GridRow.of(good), "f", 2, "") == []
    bad = dict(good, peak_allocated_bytes=50)
    assert [f.code for f in memory.invariant_findings(GridRow.of(bad), "f", 2, "")] == ["allocated-exceeds-reserved"]
    low = dict(good, peak_reserved_bytes=15, peak_allocated_bytes=12)
    assert [f.code for f in memory.invariant_findings(GridRow.of(low), "f", 2, "")] == ["peak-below-baseline"]


def _tariff(gpu: str, price: int, gpus: int) -> cost.Tariff:
    return cost.Tariff(gpu, gpu.upper(), 7, price, gpus, "2026-09-24", "published")


def test_seed_prices() -> None:
    rtx = cost.quote(_tariff("rtx-4090", 11000, 1), 2, None)
    assert (rtx["total_usd_minor"], rtx["gpus"], cost.usd(rtx["total_usd_minor"])) == (22000, 2, "220.00")
    one_b200 = cost.quote(_tariff("b200", 207100, 2), 1, None)
    assert (one_b200["total_usd_minor"], one_b200["gpus"]) == (207100, 2)
    two_b200 = cost.quote(_tariff("b200", 207100, 2), 2, None)
    assert (cost.usd(two_b200["total_usd_minor"]), two_b200["gpus"]) == ("4142.00", 4)


def test_cost_per_result_and_zero_refused() -> None:
    assert cost.per_result(207100, 3) == CostPerResult(usd_minor="69033.33", undefined_reason=None)
    assert cost.per_result(11000, 0).usd_minor is None
    assert cost.per_result(11000, None).usd_minor is None
    with pytest.raises(QuoteError, match="0 is refused") as refused:
        cost.quote(_tariff("rtx-4090", 11000, 1), 1, 0)
    assert "--" not in str(refused.value)
    assert cost.quote(_tariff("rtx-4090", 11000, 1), 1, 2)["per_result"] == {"usd_minor": "5500.00",
                                                                            "undefined_reason": None}


def test_lots_refused_without_naming_an_option() -> None:
    with pytest.raises(QuoteError, match="the number of lots must be a positive whole number") as refused:
        cost.quote(_tariff("rtx-4090", 11000, 1), 0, None)
    # Still a UsageError, so the command line keeps exiting 2; the library never names its options.
    assert isinstance(refused.value, UsageError) and refused.value.exit_status == 2
    assert "--" not in str(refused.value)


def test_usd_is_the_one_money_format() -> None:
    from generator.core.money import usd_amount

    for cents in (0, 5, 207100, 10**40 + 1):
        assert cost.usd(cents) == usd_amount(cents)
    assert cost.usd(Decimal("207100")) == "2071.00"


def test_monday_to_friday_is_96_hours_fitting_seven_days() -> None:
    hours = cost.window_hours("2026-10-05T09:00", "2026-10-09T09:00", "Europe/Paris")
    assert hours == 96
    cover = cost.covering_packages(hours)
    assert [p["covers"] for p in cover["packages"]] == [False, True, True]
    assert cover["smallest_covering_days"] == 7 and cover["extra_30_day_periods"] is None


@pytest.mark.parametrize("start,end,hours", [
    ("2026-03-28T12:00", "2026-03-29T12:00", 23),   # spring forward in Europe/Paris
    ("2026-10-24T12:00", "2026-10-25T12:00", 25),   # fall back
])
def test_window_across_dst(start: str, end: str, hours: int) -> None:
    assert cost.window_hours(start, end, "Europe/Paris") == hours


def test_dst_decides_the_package() -> None:
    # 72 wall-clock hours across the autumn change are 73 real hours: the 3-day package no longer covers
    hours = cost.window_hours("2026-10-23T09:00", "2026-10-26T09:00", "Europe/Paris")
    assert hours == 73
    assert cost.covering_packages(hours)["smallest_covering_days"] == 7


def test_window_beyond_thirty_days_names_extra_periods() -> None:
    cover = cost.covering_packages(Decimal(24 * 45))
    assert cover["smallest_covering_days"] is None and cover["extra_30_day_periods"] == 1


def test_bad_timezone_is_a_usage_error() -> None:
    with pytest.raises(LocalTimeError, match="not an IANA time zone") as refused:
        cost.window_hours("2026-10-05T09:00", "2026-10-09T09:00", "Mars/Olympus")
    assert isinstance(refused.value, UsageError) and refused.value.exit_status == 2


@pytest.mark.parametrize("start,end", [
    ("2026-10-25T02:30", "2026-10-26T09:00"),  # occurs twice in Europe/Paris
    ("2027-03-28T02:30", "2027-03-29T09:00"),  # does not exist there
    ("2026-10-05 9h", "2026-10-09T09:00"),
    ("2026-10-05", "2026-10-09T09:00"),  # a date alone is no window time (only a deadline may be one)
])
def test_local_time_errors_name_no_option(start: str, end: str) -> None:
    with pytest.raises(LocalTimeError) as refused:
        cost.window_hours(start, end, "Europe/Paris", strict=True)
    assert "--" not in str(refused.value)


def _edited(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """Distinct expected IDs and an observed column: mostly in order with a few edits, or shuffled."""
    n = draw(st.integers(min_value=0, max_value=80))
    expected = [f"id-{i}" for i in range(n)]
    observed = list(expected)
    for _ in range(draw(st.integers(min_value=0, max_value=6))):
        kind = draw(st.sampled_from(["replace", "duplicate", "delete", "extra", "truncate", "swap"]))
        if not observed and kind != "extra":
            continue
        i = draw(st.integers(min_value=0, max_value=max(0, len(observed) - 1)))
        if kind == "replace":
            observed[i] = draw(st.sampled_from(["x-1", "x-2", " id-0", f"id-{n + 1}"]))
        elif kind == "duplicate":
            observed.insert(i, observed[draw(st.integers(min_value=0, max_value=len(observed) - 1))])
        elif kind == "delete":
            del observed[i]
        elif kind == "extra":
            observed.insert(i, draw(st.sampled_from(["x-1", "x-3"])))
        elif kind == "truncate":
            observed = observed[:i]
        else:
            j = draw(st.integers(min_value=0, max_value=len(observed) - 1))
            observed[i], observed[j] = observed[j], observed[i]
    if draw(st.booleans()) and draw(st.booleans()):
        observed = draw(st.permutations(observed))
    return expected, observed


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_id_comparison_matches_plain_set_arithmetic(data: st.DataObject) -> None:
    from collections import Counter

    import numpy as np
    import pyarrow as pa

    from generator.audit.load.readers import idsets

    expected, observed = data.draw(st.composite(_edited)())
    cmp = idsets.compare(pa.array(expected, pa.string()), pa.array(observed, pa.string()), True)
    counts = Counter(observed)
    dups = [i for i, k in counts.items() if k > 1]
    missing = [i for i in expected if i not in counts]
    extra = [i for i in counts if i not in set(expected)]
    assert (cmp.duplicates, cmp.missing, cmp.extra, cmp.observed_distinct) == (
        sum(counts[i] - 1 for i in dups), len(missing), len(extra), len(counts))
    assert (cmp.first_duplicates, cmp.first_missing, cmp.first_extra) == (dups[:5], missing[:5], extra[:5])
    if cmp.match:  # each expected ID gets the row that holds it
        rows = idsets.in_expected_order(np.arange(len(observed)), cmp)
        assert [observed[r] for r in rows] == expected


def _one_width(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """Zero-padded IDs of one width (registered sorted or not) and an observed column out of order, edited
    with same-width IDs that are not expected: some differ where every expected ID has the same byte."""
    width = draw(st.integers(min_value=1, max_value=6))
    numbers = draw(st.lists(st.integers(min_value=0, max_value=10**width - 1), min_size=1, max_size=60, unique=True))
    expected = [f"id-{i:0{width}d}" for i in (numbers if draw(st.booleans()) else sorted(numbers))]
    observed = draw(st.permutations(expected))
    for _ in range(draw(st.integers(min_value=0, max_value=5))):
        i = draw(st.integers(min_value=0, max_value=len(observed) - 1))
        kind = draw(st.sampled_from(["foreign", "prefix", "digit", "duplicate", "delete"]))
        if kind == "foreign":  # a byte where the expected IDs share one
            observed[i] = "xd-" + observed[i][3:]
        elif kind == "prefix":
            observed[i] = "id_" + observed[i][3:]
        elif kind == "digit":  # an ID that could be expected
            observed[i] = f"id-{draw(st.integers(min_value=0, max_value=10**width - 1)):0{width}d}"
        elif kind == "duplicate":
            observed.insert(i, observed[draw(st.integers(min_value=0, max_value=len(observed) - 1))])
        elif len(observed) > 1:
            del observed[i]
    return expected, observed


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_ids_of_one_width_are_placed_by_sorting_exactly_as_by_hashing(data: st.DataObject) -> None:
    """An out-of-order file of fixed-width IDs is placed by sorting packed keys: the same index for every
    row as pyarrow's hash lookup (-1 where not expected), also for sliced columns."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from generator.audit.load.readers import idkeys, idsets

    expected, observed = data.draw(st.composite(_one_width)())
    lead = data.draw(st.integers(min_value=0, max_value=2))  # arrays that start inside their buffers
    want = pa.array(["pad"] * lead + expected, pa.string()).slice(lead)
    have = pa.array(["pad"] * lead + observed, pa.string()).slice(lead)
    placed = idkeys.sorted_positions(want, have)
    assert placed is not None  # one width; at most 6 digits and 2 edited bytes vary
    hashed = idsets.with_nulls_as(pc.index_in(have, value_set=want), -1)
    assert placed.tolist() == hashed.tolist()


def test_ids_of_several_widths_or_too_many_varying_bytes_are_not_packed() -> None:
    import pyarrow as pa

    from generator.audit.load.readers import idkeys

    ids = pa.array(["a-1", "a-2"], pa.string())
    assert idkeys.packed_keys(ids, pa.array(["a-1", "a-10"], pa.string())) is None
    assert idkeys.packed_keys(ids, pa.array(["a-1"], pa.string())) is not None
    wide = pa.array(["abcdefghi", "bcdefghij"], pa.string())  # nine varying bytes: more than a key holds
    assert idkeys.packed_keys(wide, wide) is None
    assert idkeys.packed_keys(pa.array(["a-1", None], pa.string()), ids) is None
