"""What a campaign spends beside one package: consecutive packages (a rental's periods) and other expenses."""

from __future__ import annotations

from dataclasses import dataclass

from generator.audit.recompute.jsonrecord import JsonRecord

__all__ = ["OtherExpense", "PackagePeriod"]


@dataclass(frozen=True)
class PackagePeriod(JsonRecord):
    """One of an experiment's consecutive packages: its days and its price (None throughout without a tariff)."""

    duration_days: int
    price_per_lot_usd_minor: int | None
    total_usd_minor: int | None
    price_status: str | None
    price_source: str | None
    price_source_detail: str | None
    snapshot_date: str | None


@dataclass(frozen=True)
class OtherExpense(JsonRecord):
    """An expense the protocol registers beside the packages (storage, egress, a second rental): listed apart,
    with its justification, and never part of a configuration's committed budget or the ranking."""

    what: str
    amount_usd_minor: int
    why: str
