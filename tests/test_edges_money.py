"""Issue 51's edges of money and packages: a cent, a lot, a GPU, an hour on each side of a rule, and each message
that names an amount (the mutation command's survivors in core/money, recompute/cost and recompute/package)."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from generator.audit.load.findings import Finding
from generator.audit.load.inputs.protocol import ExperimentSpec
from generator.audit.load.inputs.rows import GridRow, TariffRow
from generator.audit.recompute.decision.model import Window
from generator.audit.recompute.money import cost, package
from generator.audit.recompute.money.spend import PackagePeriod, SharedRental
from generator.core import instants
from generator.core.errors import LocalTimeError, QuoteError
from generator.core.jsonvalue import JsonScalar
from generator.core.money import usd_amount, usd_decimal

EXAMPLE_PROTOCOL = json.loads((Path(__file__).resolve().parents[1] / "inputs" / "example" / "protocol.json")
                              .read_text(encoding="utf-8"))
TARIFF = cost.Tariff("g", "G", 7, 11000, 1, "2026-09-24", "published")

# ------------------------------------------------------------------------------------------ money as text


def test_an_amount_of_any_size_is_exact_to_the_cent() -> None:
    # 10^40 + 1 cents: 41 digits, past the 28 of a default decimal context
    assert usd_amount(10**40 + 1) == f"{10**38}.01"
    assert usd_amount(10**40 + 1, grouping=True).endswith(",000,000.01")
    assert usd_decimal(f"{10**40}.50") == Decimal(f"{10**38}.01")


@pytest.mark.parametrize(("cents", "text"), [(0, "0.00"), (1, "0.01"), (207100, "2071.00"), (-5, "-0.05"),
                                             ("2062.50", "20.63"), ("2062.49", "20.62"), ("50", "0.50"),
                                             ("0.50", "0.01"), ("0.49", "0.00"), (Decimal("250"), "2.50")])
def test_cents_are_dollars_half_up_without_grouping_unless_asked(cents: int | str | Decimal, text: str) -> None:
    assert usd_amount(cents) == text
    assert usd_amount(123456789) == "1234567.89" and usd_amount(123456789, grouping=True) == "1,234,567.89"


# ---------------------------------------------------------------------------------------- cost per result


@pytest.mark.parametrize(("total", "accepted", "per"), [
    (11000, 1, "11000.00"),  # one result: the whole package
    (1, 8, "0.13"),  # 0.125 cent: half up, never half to even (0.12)
    (3, 8, "0.38"),  # 0.375 cent: half up (half to even gives 0.38 too; 0.125 tells them apart)
    (207100, 3, "69033.33"),
    (10**40 + 1, 2, f"{5 * 10**39}.50"),  # exact far beyond 28 digits
    (10**40 + 1, 10**40, "1.00"),
])
def test_cost_per_result_is_exact_and_half_up(total: int, accepted: int, per: str) -> None:
    assert cost.per_result(total, accepted).usd_minor == per


@pytest.mark.parametrize("accepted", [0, -1, None])
def test_no_cost_per_result_without_a_positive_count(accepted: int | None) -> None:
    found = cost.per_result(11000, accepted)
    assert found.usd_minor is None and found.undefined_reason is not None


# ----------------------------------------------------------------------------------------------- quote


def test_one_lot_and_one_result_are_the_least_a_quote_takes() -> None:
    quoted = cost.quote(cost.Tariff("b200", "B200", 7, 207100, 2, "2026-09-24", "published"), 1, 1)
    assert (quoted["lots"], quoted["gpus"], quoted["total_usd_minor"]) == (1, 2, 207100)
    assert quoted["per_result"] == {"usd_minor": "207100.00", "undefined_reason": None}
    assert cost.quote(cost.Tariff("b200", "B200", 7, 207100, 2, "2026-09-24", "published"), 3, None)["gpus"] == 6
    for lots, accepted in ((0, None), (1, 0)):
        with pytest.raises(QuoteError):
            cost.quote(TARIFF, lots, accepted)


def test_a_quote_names_where_its_price_comes_from() -> None:
    catalogue = cost.quote(cost.Tariff("b200", "B200", 7, 207100, 2, "2026-09-24", "published"), 1, None)
    assert (catalogue["price_source"], catalogue["price_source_detail"]) == ("catalogue", "2026-09-24")
    quoted = cost.quote(cost.Tariff("x1", "X", 7, 5, 1, "2026-09-24", "published", "Q-7"), 1, None)
    assert (quoted["price_source"], quoted["price_source_detail"]) == ("provider", "Q-7")
    unsourced = cost.quote(cost.Tariff("x1", "X", 7, 5, 1, "2026-09-24", "published"), 1, None)
    assert (unsourced["price_source"], unsourced["price_source_detail"]) == (None, None)


# --------------------------------------------------------------------------------------- tariff records


@pytest.mark.parametrize("blank", ["snapshot_date", "price_status"])
def test_a_tariff_without_its_date_or_status_has_no_terms_and_no_origin(blank: str) -> None:
    cells = {"snapshot_date": "2026-09-24", "price_status": "published", blank: None}
    tariff = cost.Tariff("b200", "B200", 7, 207100, 2, cells["snapshot_date"], cells["price_status"])
    assert tariff.terms() is None and tariff.origin() is None
    whole = cost.Tariff("b200", "B200", 7, 207100, 2, "2026-09-24", "published")
    assert whole.terms() is not None and whole.origin() == ("catalogue", "2026-09-24")


ROW: dict[str, JsonScalar] = {"gpu": "g", "model_name": "G", "duration_days": 7, "price_per_lot_usd_minor": 11000,
                              "gpus_per_lot": 1, "snapshot_date": "2026-09-24", "price_status": "published"}


@pytest.mark.parametrize("missing", ["gpu", "duration_days", "price_per_lot_usd_minor", "gpus_per_lot", "complete"])
def test_a_tariff_row_lacking_a_priced_cell_is_not_indexed(missing: str) -> None:
    whole = TariffRow.of(ROW)
    row = replace(whole, complete=False) if missing == "complete" else \
        TariffRow.of({**ROW, missing: None})
    assert cost.tariffs_from_rows([row]) == {}
    assert list(cost.tariffs_from_rows([whole])) == [("g", 7)]


def test_the_first_of_two_rows_for_one_key_wins() -> None:
    rows = [TariffRow.of(ROW), TariffRow.of({**ROW, "price_per_lot_usd_minor": 1})]
    assert cost.tariffs_from_rows(rows)[("g", 7)].price_per_lot_usd_minor == 11000


# -------------------------------------------------------------------------------- time zones and offsets


@pytest.mark.parametrize(("text", "tz", "kind", "offsets"), [
    ("2026-03-29T02:30", "Europe/Berlin", "nonexistent", ("+01:00", "+02:00")),
    ("2026-10-25T02:30", "Europe/Berlin", "ambiguous", ("+02:00", "+01:00")),
    ("2026-03-29T01:30", "Europe/London", "nonexistent", ("+00:00", "+01:00")),  # a zero offset has a plus
    ("2026-03-08T02:30", "America/New_York", "nonexistent", ("-05:00", "-04:00")),
    ("2026-04-05T01:45", "Australia/Lord_Howe", "ambiguous", ("+11:00", "+10:30")),  # half an hour
    ("1912-01-01T00:10", "Africa/Abidjan", "nonexistent", ("-00:16:08", "+00:00")),  # a mean time's seconds
])
def test_a_skipped_or_repeated_time_names_its_offsets_exactly(text: str, tz: str, kind: str,
                                                             offsets: tuple[str, str]) -> None:
    issue = instants.local_time_issue(text, tz)
    assert issue is not None and (issue.kind, issue.utc_offsets) == (kind, offsets)


def test_the_strict_window_names_both_offsets_in_its_refusal() -> None:
    with pytest.raises(LocalTimeError) as gap:
        cost.window_hours("2026-03-29T02:30", "2026-04-01T09:00", "Europe/Berlin", strict=True)
    assert "(the clocks jump from +01:00 to +02:00)" in str(gap.value) and "such as 2026-03-29T03:30" in str(gap.value)
    with pytest.raises(LocalTimeError) as twice:
        cost.window_hours("2026-10-20T09:00", "2026-10-25T02:30", "Europe/Berlin", strict=True)
    assert "(2026-10-25T02:30+02:00 or 2026-10-25T02:30+01:00)" in str(twice.value)


def test_check_places_a_skipped_time_without_refusing_it() -> None:
    # not strict (check's reading): fold 0, one hour short across the spring gap; the finding is check's
    assert cost.window_hours("2026-03-29T02:30", "2026-03-30T02:30", "Europe/Berlin") == 23


# ------------------------------------------------------------------------------------------ package days


@pytest.mark.parametrize(("seconds", "smallest", "extra"), [
    (72 * 3600, 3, None), (72 * 3600 + 1, 7, None), (168 * 3600, 7, None), (168 * 3600 + 1, 30, None),
    (720 * 3600, 30, None), (720 * 3600 + 1, None, 1), (1440 * 3600, None, 1), (1440 * 3600 + 1, None, 2),
])
def test_each_package_covers_exactly_its_hours(seconds: int, smallest: int | None, extra: int | None) -> None:
    found = cost.coverage(Decimal(seconds) / 3600)
    assert [(p.days, p.hours) for p in found.packages] == [(3, 72), (7, 168), (30, 720)]
    assert (found.smallest_covering_days, found.extra_30_day_periods) == (smallest, extra)


@pytest.mark.parametrize(("seconds", "shown"), [(259650, "72.13"), (259632, "72.12"), (259200, "72"),
                                                (259236, "72.01"), (3636, "1.01")])
def test_the_window_hours_are_shown_half_up_without_trailing_zeros(seconds: int, shown: str) -> None:
    assert cost.coverage(Decimal(seconds) / 3600).hours == shown


# ------------------------------------------------------------------------------------- package findings


def _window(hours: Decimal, days: tuple[int, ...] = cost.PACKAGE_DAYS) -> Window:
    cover = cost.coverage(hours)
    packages = tuple(p for p in cover.packages if p.days in days)
    return Window(start="s", end="e", timezone="UTC", deadline="e", ends_before_deadline=True, hours=cover.hours,
                  packages=packages, smallest_covering_days=cover.smallest_covering_days,
                  extra_30_day_periods=cover.extra_30_day_periods)


def _experiment(rental: dict[str, Any]) -> ExperimentSpec:
    return ExperimentSpec.of({**EXAMPLE_PROTOCOL["experiments"][0], "id": "e", "rental": rental})


def _price(rental: dict[str, Any], rows: list[dict[str, Any]], tariffs: list[cost.Tariff],
           hours: Decimal = Decimal(96)) -> tuple[Any, list[Finding]]:
    grid = [(i, GridRow.of(r), i + 2) for i, r in enumerate(rows)]
    return package.price_package(_experiment({"gpu": "g", "lots": 1, **rental}), grid, _window(hours),
                                 {(t.gpu, t.duration_days): t for t in tariffs}, "grid.csv", "tariffs.csv")


def _codes(found: list[Finding], code: str) -> list[Finding]:
    return [f for f in found if f.code == code]


@pytest.mark.parametrize(("hours", "covered"), [(Decimal(240), True), (Decimal(240 * 3600 + 1) / 3600, False),
                                                (Decimal(241), False)])
def test_a_package_of_periods_covers_its_hours_from_the_exact_hours(hours: Decimal, covered: bool) -> None:
    # 7 + 3 days: no single package's coverage to read, so the exact hours decide, never the 0.01 h shown
    window = _window(hours)
    assert package.covers_window(window, 10, hours) is covered
    assert package.covers_window(_window(Decimal(240)), 10) is True
    assert package.covers_window(_window(Decimal(241)), 10) is False


def test_a_row_naming_one_period_of_several_is_no_coverage_finding() -> None:
    _, found = _price({"periods": [7, 3]}, [{"duration_days": 7}], [], Decimal(240))
    assert not _codes(found, "duration-does-not-cover-window") and not _codes(found, "package-does-not-cover-window")
    _, found = _price({"duration_days": 3}, [{"duration_days": 3}], [], Decimal(96))
    assert [f.message for f in _codes(found, "package-does-not-cover-window")] == [
        "the 3-day package (72 h) does not cover the 96 h window"]
    assert [(f.line, f.claimed) for f in _codes(found, "duration-does-not-cover-window")] == [(2, 3)]


def test_a_total_no_tariff_prices_is_named_only_where_a_total_is_claimed() -> None:
    _, found = _price({"duration_days": 7}, [{"package_total_usd_minor": 11000}, {}], [])
    assert [(f.line, f.claimed) for f in _codes(found, "package-total-unverifiable")] == [(2, 11000)]


def _mismatch(claimed: int, tariff: cost.Tariff, rental: dict[str, Any] | None = None) -> str:
    _, found = _price(rental or {"duration_days": 7}, [{"package_total_usd_minor": claimed}], [tariff])
    hits = _codes(found, "package-total-mismatch")
    assert len(hits) == 1
    return hits[0].message


B = cost.Tariff("g", "G", 7, 207100, 2, "2026-09-24", "published")
R = cost.Tariff("g", "G", 7, 10000, 1, "2026-09-24", "published")


@pytest.mark.parametrize(("claimed", "tariff", "hint"), [
    (414200, B, ": a g lot already holds 2 GPUs and its price covers them; multiplying by the GPU count again "
                "counts them twice"),
    (621300, B, ": 3 x the package; a package is one expense, never summed over repeated rows"),
    (20000, R, ": 2 x the package; a package is one expense, never summed over repeated rows"),
    (30000, R, ": 3 x the package; a package is one expense, never summed over repeated rows"),
    (25000, R, ""), (5000, R, ""), (10001, R, ""), (9999, R, ""), (0, R, ""),
    (5, cost.Tariff("g", "G", 7, 0, 1, "2026-09-24", "published"), ""),  # a price of 0 (a schema finding)
])
def test_a_mismatched_total_names_the_mistake_it_shows(claimed: int, tariff: cost.Tariff, hint: str) -> None:
    total = tariff.price_per_lot_usd_minor
    assert _mismatch(claimed, tariff) == (f"package_total_usd_minor claims {claimed}, the tariff gives {total} "
                                          f"({total} x 1 lots){hint}")


def test_a_claimed_total_equal_to_the_tariff_is_no_finding() -> None:
    _, found = _price({"duration_days": 7}, [{"package_total_usd_minor": 10000}, {}], [R])
    assert not _codes(found, "package-total-mismatch")


def test_a_total_of_one_period_of_several_names_the_extra_periods() -> None:
    three = cost.Tariff("g", "G", 3, 5000, 1, "2026-09-24", "published")
    _, found = _price({"periods": [7, 3]}, [{"package_total_usd_minor": 10000}, {"package_total_usd_minor": 14000}],
                      [R, three], Decimal(240))
    assert [f.message for f in _codes(found, "package-total-mismatch")] == [
        "package_total_usd_minor claims 10000, the tariff gives 15000 (10000 + 5000 x 1 lots): the extra periods "
        "are part of the committed package",
        "package_total_usd_minor claims 14000, the tariff gives 15000 (10000 + 5000 x 1 lots)"]


@pytest.mark.parametrize(("used", "beyond"), [(4, False), (5, True), (None, False)])
def test_the_gpus_used_may_be_every_gpu_of_the_lots_billed(used: int | None, beyond: bool) -> None:
    _, found = _price({"duration_days": 7, "lots": 2}, [{"gpu_count": used}], [B])
    assert [(f.claimed, f.recomputed) for f in _codes(found, "gpus-beyond-rental")] == ([(5, 4)] if beyond else [])


def test_an_illustrative_price_is_said_to_be_one() -> None:
    illustrative = cost.Tariff("g", "G", 7, 10000, 1, "2026-09-24", "illustrative")
    assert [f.claimed for f in _codes(_price({"duration_days": 7}, [], [illustrative])[1], "illustrative-price")] \
        == [10000]
    assert not _codes(_price({"duration_days": 7}, [], [R])[1], "illustrative-price")


@pytest.mark.parametrize(("rented", "hours", "needed"), [(7, Decimal(72), 3), (7, Decimal(73), None),
                                                         (30, Decimal(168), 7), (30, Decimal(169), None),
                                                         (3, Decimal(72), None)])
def test_a_shorter_package_is_named_only_when_it_covers_the_window(rented: int, hours: Decimal,
                                                                  needed: int | None) -> None:
    found, findings = _price({"duration_days": rented}, [], [], hours)
    assert (found.needed_days, found.needed_total_usd_minor) == (needed, None)
    warned = _codes(findings, "package-longer-than-needed")
    assert [(f.claimed, f.recomputed, f.field) for f in warned] == \
        ([(rented, needed, "/experiments/e/rental")] if needed else [])


def test_the_shorter_package_is_named_with_its_hours_and_the_money_it_saves() -> None:
    three = cost.Tariff("g", "G", 3, 4000, 1, "2026-09-24", "published")
    found, findings = _price({"duration_days": 7, "lots": 2}, [], [R, three], Decimal(72))
    assert (found.needed_days, found.needed_total_usd_minor, found.total_usd_minor) == (3, 8000, 20000)
    assert [f.message for f in _codes(findings, "package-longer-than-needed")] == [
        "the 7-day package (168 h) was rented, but a 3-day package (72 h) covers the 72 h window: 80.00 USD "
        "instead of 200.00 USD, 120.00 USD more than needed"]
    for tariffs in ([R], [three]):  # one of the two prices unknown: no difference in money
        found, findings = _price({"duration_days": 7}, [], tariffs, Decimal(72))
        assert [f.message.endswith("; the difference is unknown (no price for both in the tariffs)")
                for f in _codes(findings, "package-longer-than-needed")] == [True]


B3 = cost.Tariff("b200", "B200", 3, 90000, 2, "2026-11-30", "published", "Q-3")
B7 = cost.Tariff("b200", "B200", 7, 207100, 2, "2026-09-24", "published")


def _b200(periods: list[int], tariffs: list[cost.Tariff], lots: int = 1) -> Any:
    grid: list[tuple[int, GridRow, int]] = []
    return package.price_package(_experiment({"gpu": "b200", "lots": lots, "periods": periods}), grid,
                                 _window(Decimal(240)), {(t.gpu, t.duration_days): t for t in tariffs},
                                 "grid.csv", "tariffs.csv")[0]


def test_one_package_is_priced_whole_and_has_no_periods() -> None:
    found = _b200([7], [B7], lots=2)
    assert (found.total_usd_minor, found.gpus_per_lot, found.gpus, found.price_per_lot_usd_minor) == (414200, 2, 4,
                                                                                                      207100)
    assert (found.price_status, found.price_source, found.price_source_detail, found.snapshot_date) == \
        ("published", "catalogue", "2026-09-24", "2026-09-24")
    assert found.periods is None


def test_periods_of_two_sources_take_the_weaker_one_with_its_date() -> None:
    found = _b200([7, 3], [B7, B3])
    assert (found.total_usd_minor, found.price_per_lot_usd_minor) == (297100, 297100)
    assert (found.price_source, found.price_source_detail, found.snapshot_date) == ("provider", "Q-3", "2026-11-30")
    assert found.periods is not None and [(p.duration_days, p.total_usd_minor, p.price_source, p.price_source_detail)
                                          for p in found.periods] == [(7, 207100, "catalogue", "2026-09-24"),
                                                                      (3, 90000, "provider", "Q-3")]


def test_an_illustrative_period_makes_the_package_illustrative() -> None:
    found = _b200([7, 3], [B7, replace(B3, price_status="illustrative")])
    assert (found.price_status, found.price_source, found.price_source_detail) == ("illustrative", "illustrative",
                                                                                   None)
    both = _b200([7, 7], [B7])
    assert (both.price_source, both.price_source_detail, both.total_usd_minor) == ("catalogue", "2026-09-24", 414200)


def test_a_period_without_a_source_leaves_the_package_without_one() -> None:
    found = _b200([7, 3], [B7, replace(B3, source=None)])
    assert (found.price_source, found.price_source_detail, found.total_usd_minor) == (None, None, 297100)


def test_a_period_without_a_price_leaves_the_total_unknown() -> None:
    found = _b200([7, 3], [B7])
    assert (found.total_usd_minor, found.gpus, found.price_status, found.price_source) == (None, None, None, None)
    assert found.periods is not None and found.periods[1].total_usd_minor is None


def test_a_price_of_zero_totals_zero() -> None:
    # a price of 0 is a schema finding of the tariffs, and still what the file says: 0, not 1
    zero = cost.Tariff("g", "G", 7, 0, 1, "2026-09-24", "published")
    found, _ = _price({"duration_days": 7}, [], [zero])
    assert found.total_usd_minor == 0


@pytest.mark.parametrize("record", [
    TARIFF, instants.LocalTimeIssue("ambiguous", ("+02:00", "+01:00"), "x"),
    PackagePeriod(7, 1, 1, "published", "catalogue", "2026-09-24", "2026-09-24"), SharedRental("r", ("e",))],
    ids=lambda r: type(r).__name__)
def test_a_price_record_is_a_value_nobody_changes_afterwards(record: object) -> None:
    # one record feeds the findings, decision.json and the note: none of them may alter what the others read
    assert hash(record) == hash(replace(record))  # type: ignore[type-var]
    with pytest.raises(FrozenInstanceError):
        record.__setattr__(next(iter(record.__dataclass_fields__)), None)  # type: ignore[attr-defined]
