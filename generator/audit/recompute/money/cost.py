"""Package cost in exact integer cents, the campaign window in its time zone, and cost per accepted result."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from decimal import ROUND_HALF_UP, Decimal, localcontext

from generator.audit.load.inputs.rows import TariffRow
from generator.audit.recompute.decision.model import CostPerResult, Coverage, PackageCover
from generator.audit.validate.tariffrules import ManifestProof, Price, price_source, published_catalogue
from generator.core.errors import LocalTimeError, QuoteError
from generator.core.instants import local_time_issue, parse_local
from generator.core.jsonvalue import JsonDocument
from generator.core.money import usd_amount

PACKAGE_DAYS = (3, 7, 30)


@dataclass(frozen=True)
class Tariff:
    """One catalogue price: a lot of `gpus_per_lot` GPUs for `duration_days`, in integer cents."""

    gpu: str
    model_name: str | None  # None: the cell was no valid value (a finding of reading)
    duration_days: int
    price_per_lot_usd_minor: int
    gpus_per_lot: int
    snapshot_date: str | None
    price_status: str | None
    source: str | None = None  # where the provider publishes it (the tariffs' optional last column)

    def terms(self) -> Price | None:
        """The price's terms for the tariff rule (None when a cell of them was no valid value)."""
        if self.snapshot_date is None or self.price_status is None:
            return None
        return Price(self.gpu, self.duration_days, self.price_per_lot_usd_minor, self.gpus_per_lot,
                     self.snapshot_date, self.price_status, self.source)

    def origin(self, proof: ManifestProof | None = None) -> tuple[str, str | None] | None:
        """Where the price comes from (tariffrules.price_source); None for a published price without a source."""
        terms = self.terms()
        return None if terms is None else price_source(terms, published_catalogue(), proof)


def tariffs_from_rows(rows: Sequence[TariffRow]) -> dict[tuple[str, int], Tariff]:
    """Index complete tariff rows by (gpu, duration_days); the first of duplicates wins (they are findings).

    A row of a file whose header lacks a column is not indexed; a cell that is no valid value (None, a finding
    of reading) leaves the price unknown only where the price needs it (gpu, duration, price, GPUs per lot)."""
    out: dict[tuple[str, int], Tariff] = {}
    for r in rows:
        if not r.complete or r.gpu is None or r.duration_days is None or r.price_per_lot_usd_minor is None \
                or r.gpus_per_lot is None:
            continue
        # model_name, snapshot_date and price_status stay as read (None for an invalid cell, as before).
        t = Tariff(r.gpu, r.model_name, r.duration_days, r.price_per_lot_usd_minor, r.gpus_per_lot,
                   r.snapshot_date, r.price_status, r.source)
        out.setdefault((t.gpu, t.duration_days), t)
    return out


def package_total(tariff: Tariff, lots: int) -> int:
    """Price per lot x lots. The lot price already covers every GPU of the lot: never multiply by GPUs again."""
    return tariff.price_per_lot_usd_minor * lots


def usd(cents: int | Decimal) -> str:
    """Cents as a USD amount with two decimals, exact at any size: 207100 -> "2071.00" (generator.core.money)."""
    return usd_amount(cents)


def per_result(total_usd_minor: int, accepted_results: int | None) -> CostPerResult:
    """Cost per accepted result; undefined (with the reason) without a positive count of accepted results."""
    if accepted_results is None:
        return CostPerResult(None, "no count of accepted results was given: only the package cost")
    if accepted_results <= 0:
        return CostPerResult(None, "no corpus was accepted: the cost per result is undefined, the committed "
                                   "package remains")
    with localcontext() as ctx:
        ctx.prec = max(28, len(str(total_usd_minor)) + 4)  # exact whatever the size of the total
        exact = Decimal(total_usd_minor) / Decimal(accepted_results)
        return CostPerResult(str(exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)), None)


def window_hours(start: str, end: str, tz: str, *, strict: bool = False) -> Decimal:
    """Hours between two local times in the zone, counted on the real timeline (DST changes included).

    `strict` refuses a time the zone skips or shows twice (the `cost` command); `check` reports those as
    findings (generator.audit.validate.protocol_rules) and still places them, fold 0, so that the rest can be checked.
    """
    a, b = parse_local(start, tz), parse_local(end, tz)
    for text in (start, end) if strict else ():
        issue = local_time_issue(text, tz)
        if issue is not None and issue.kind == "nonexistent":
            raise LocalTimeError(f"{text} does not exist in {tz} (the clocks jump from {issue.utc_offsets[0]} to "
                                 f"{issue.utc_offsets[1]}); give a time outside the gap, such as {issue.read_as}")
        if issue is not None:
            raise LocalTimeError(f"{text} occurs twice in {tz} ({issue.read_as}); write the offset that is meant "
                                 f"({text}{issue.utc_offsets[0]} or {text}{issue.utc_offsets[1]}), a time outside "
                                 "the repeated hour, or the window in UTC (time zone UTC)")
    try:
        seconds = (b.astimezone(UTC) - a.astimezone(UTC)).total_seconds()
    except OverflowError:
        raise LocalTimeError(f"{start} or {end} lies outside the range of dates that can be placed in {tz}") from None
    return Decimal(int(seconds)) / 3600


def coverage(hours: Decimal) -> Coverage:
    """Which of the 3-, 7- and 30-day packages cover the window; beyond 30 days, the explicit extra periods."""
    packages = tuple(PackageCover(days=d, hours=d * 24, covers=hours <= d * 24) for d in PACKAGE_DAYS)
    smallest = next((p.days for p in packages if p.covers), None)
    extra = None
    if smallest is None:
        periods = math.ceil(hours / 720)
        extra = periods - 1
    shown = hours.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    text = f"{shown:f}".rstrip("0").rstrip(".") if "." in f"{shown:f}" else f"{shown:f}"
    return Coverage(hours=text, packages=packages, smallest_covering_days=smallest, extra_30_day_periods=extra)


def covering_packages(hours: Decimal) -> JsonDocument:
    """coverage() as the JSON-ready dictionary the `cost` command prints from."""
    return coverage(hours).to_json_dict()


def quote(tariff: Tariff, lots: int, accepted_results: int | None) -> JsonDocument:
    """The `cost` command's result: the package total, GPUs covered and, if given a count, cost per result."""
    if lots < 1:
        raise QuoteError(f"the number of lots must be a positive whole number, not {lots}")
    if accepted_results is not None and accepted_results < 1:
        raise QuoteError(f"the number of accepted results must be a positive whole number of distinct accepted "
                         f"results, not {accepted_results}; 0 is refused (the cost per result would be "
                         "undefined): give no count instead, for the package cost alone")
    total = package_total(tariff, lots)
    source = tariff.origin()  # outside a campaign no Lab manifest is named: a source column or the catalogue
    return {
        "gpu": tariff.gpu, "model_name": tariff.model_name, "duration_days": tariff.duration_days, "lots": lots,
        "gpus_per_lot": tariff.gpus_per_lot, "gpus": tariff.gpus_per_lot * lots,
        "price_per_lot_usd_minor": tariff.price_per_lot_usd_minor, "total_usd_minor": total,
        "price_status": tariff.price_status, "snapshot_date": tariff.snapshot_date,
        "price_source": source[0] if source else None, "price_source_detail": source[1] if source else None,
        "accepted_results": accepted_results, "per_result": per_result(total, accepted_results).to_json_dict(),
    }
