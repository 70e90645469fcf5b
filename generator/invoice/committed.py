"""The packages a verified decision committed, each counted once, as an invoice bills them.

decision.json's experiments[].package gives each experiment's packages: the GPU slug and the tariffs' model
name, the days (one package, or consecutive `periods`, each billed on a line of its own), the lots, the price
per lot and the provider's article IDs the protocol registered (one per package, in order). Experiments run in
one shared rental (the same `package.rental`) are that one rental, counted once; rentals of the same GPU for the
same days are one package of their lots together.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from generator.core.money import usd_amount
from generator.invoice.identify import Known

CURRENCY = "USD"  # the tariffs' currency: every amount of a decision is in US cents (*_usd_minor)


@dataclass(frozen=True)
class Committed:
    """A package the decision committed: GPU and duration, lots (summed over the rentals of the same package,
    each rental once, whatever the number of experiments run in it), price per lot and GPUs per lot from the
    tariffs, the committed total, and the experiments run in it."""

    gpu: str
    days: int
    lots: int
    price_per_lot_usd_minor: int | None
    gpus_per_lot: int | None
    total_usd_minor: int | None
    experiments: tuple[str, ...]
    price_source: str | None = None  # catalogue, provider or illustrative; None in a decision older than these
    price_source_detail: str | None = None  # the catalogue's snapshot date, lab-manifest, or the source named
    model_name: str | None = None  # the tariffs' name of the GPU ("GeForce RTX 4090"), as invoices may write it
    article_ids: tuple[str, ...] = ()  # the provider's article IDs registered for this package

    @property
    def key(self) -> tuple[str, int]:
        return self.gpu, self.days

    @property
    def what(self) -> str:
        """The package as the reader names it: `b200, 7-day package (b200-batch)`."""
        return f"{self.gpu}, {self.days}-day package ({', '.join(self.experiments)})"


def usd(cents: int | None) -> str:
    """Cents as '2071.00 USD' (generator.core.money), or 'no price'."""
    return "no price" if cents is None else f"{usd_amount(cents)} {CURRENCY}"


def dollars(cents: int | None) -> Decimal | None:
    """Cents as an exact dollar amount, compared with an invoice's amount as it is (110.004 is not 110.00)."""
    return None if cents is None else Decimal(cents) / 100


def _article(package: dict[str, Any], index: int) -> list[str]:
    """The provider's article ID of the package's `index`-th period, when the protocol registered them."""
    ids = package.get("article_ids")
    return [str(ids[index])] if isinstance(ids, list) and index < len(ids) else []


def _rentals(decision: dict[str, Any]) -> list[tuple[dict[str, Any], list[str]]]:
    """Each rental once with the experiments run in it: a shared rental (`package.rental`) is the package of every
    experiment naming it, counted once; an experiment's own rental is its package."""
    out: dict[tuple[str, str], tuple[dict[str, Any], list[str]]] = {}
    for e in decision.get("experiments") or []:
        p = e["package"]
        key = ("rental", str(p["rental"])) if p.get("rental") is not None else ("experiment", str(e["id"]))
        out.setdefault(key, (p, []))[1].append(str(e["id"]))
    return list(out.values())


def committed_packages(decision: dict[str, Any]) -> list[Committed]:
    """The packages of the decision's rentals, each rental once, those renting the same GPU and duration as one."""
    grouped: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for p, experiments in _rentals(decision):
        # Consecutive packages (a rental's periods) are billed one line each: one committed package per period.
        for index, part in enumerate(p.get("periods") or [p]):
            grouped.setdefault((p["gpu"], part["duration_days"]), []).append(
                {**p, **part, "lots": p["lots"], "experiments": experiments, "articles": _article(p, index)})
    out = []
    for (gpu, days), packages in grouped.items():
        lots = sum(int(p["lots"]) for p in packages)
        price = packages[0].get("price_per_lot_usd_minor")
        totals = [p.get("total_usd_minor") for p in packages]
        priced = [int(t) for t in totals if t is not None]
        out.append(Committed(gpu=gpu, days=days, lots=lots, price_per_lot_usd_minor=price,
                             gpus_per_lot=packages[0].get("gpus_per_lot"),
                             total_usd_minor=sum(priced) if len(priced) == len(totals) else None,
                             experiments=tuple(dict.fromkeys(x for p in packages for x in p["experiments"])),
                             price_source=packages[0].get("price_source"),
                             price_source_detail=packages[0].get("price_source_detail"),
                             model_name=packages[0].get("model_name"),
                             article_ids=tuple(dict.fromkeys(a for p in packages for a in p["articles"]))))
    return out


def known(committed: list[Committed]) -> list[Known]:
    """The committed packages as invoice lines may name them (generator.invoice.identify)."""
    return [Known(c.gpu, c.days, c.model_name, c.article_ids) for c in committed]


def other_expenses(decision: dict[str, Any]) -> list[tuple[str, int]]:
    """The expenses the protocol registered beside the packages (what, cents): listed, never compared."""
    campaign = decision.get("campaign") or {}
    return [(str(e["what"]), int(e["amount_usd_minor"])) for e in campaign.get("other_expenses") or []]


def committed_total(committed: list[Committed]) -> int | None:
    """The campaign's committed total in cents; None when a package has no price."""
    totals = [c.total_usd_minor for c in committed]
    return None if not totals or None in totals else sum(int(t) for t in totals if t is not None)
