"""What a campaign commits beyond one package, as decision.json records it: a package of consecutive periods (a
rental's `periods`), each priced, and the shared rentals with the experiments run in each."""

from __future__ import annotations

from dataclasses import dataclass

from generator.core.jsonrecord import JsonRecord

__all__ = ["PackagePeriod", "SharedRental"]


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
class SharedRental(JsonRecord):
    """A rental of the protocol's `rentals`, listed once with the experiments run in it (none when unused): its
    package is each of those experiments' `package`, committed once."""

    id: str
    experiments: tuple[str, ...]
