"""An experiment's rented packages: whether they cover the window, their price from the tariffs, the claimed
totals checked, and whether a shorter package would have covered the window."""

from __future__ import annotations

from decimal import Decimal
from typing import NamedTuple

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.protocol import ExperimentSpec, Rental
from generator.audit.load.inputs.rows import GridRow
from generator.audit.recompute.decision.model import Package, Window
from generator.audit.recompute.money import cost
from generator.audit.recompute.money.spend import PackagePeriod
from generator.audit.validate.tariffrules import ILLUSTRATIVE, PROVIDER, ManifestProof
from generator.core.money import usd_amount

E, W = Severity.ERROR, Severity.WARNING

# A grid row as recompute walks it: its index in the grid, its cells, its physical line.
Row = tuple[int, GridRow, int]


class _Files(NamedTuple):
    """Where the findings point: the grid and the tariffs file."""

    grid: str
    tariffs: str


def covers_window(window: Window, days: int, hours: Decimal | None = None) -> bool:
    """Whether packages of `days` in all cover the window: a package exactly as long as the window covers it.

    Taken from the window's exact coverage (cost.coverage, on the real timeline) or its exact `hours`, never
    from its hours as shown, which are rounded to 0.01 h: a 7-day window and one second more shows "168" but is
    not covered.
    """
    exact = next((p.covers for p in window.packages if p.days == days), None)
    if exact is not None:
        return exact
    return (hours if hours is not None else Decimal(window.hours)) <= days * 24


def _coverage_findings(out: list[Finding], files: _Files, exp: ExperimentSpec, rows: list[Row],
                       window: Window, hours: Decimal | None, where: str) -> bool:
    """Whether the registered packages cover the window; they and every row's package that does not are findings."""
    rental = exp.rental
    covers = covers_window(window, rental.total_days, hours)
    if not covers:
        out.append(make_finding(
            "package-does-not-cover-window", E, "protocol.json", f"the {rental.label}-day package "
            f"({rental.total_days * 24} h) does not cover the {window.hours} h window",
            field=where, claimed=rental.total_days,
            recomputed=window.smallest_covering_days, rule="the package must cover the whole campaign window",
            fix="rent a package that covers the window, or budget the extra periods"))
    if len(rental.periods) > 1:
        return covers  # a row names one of the periods (comparability): the periods cover the window together
    for _, row, line in rows:
        days = row.duration_days
        if days is not None and not covers_window(window, days, hours):
            out.append(make_finding(
                "duration-does-not-cover-window", E, files.grid,
                f"a {days}-day package does not cover the {window.hours} h window", line=line,
                field="duration_days", claimed=days, recomputed=window.smallest_covering_days,
                rule="3, 7 or 30 days covering the window", fix="choose a package covering the window"))
    return covers


def _unverifiable_totals(files: _Files, rental: Rental, rows: list[Row]) -> list[Finding]:
    """A claimed package total that no tariff can check: a budget nobody can verify must not pass silently."""
    return [make_finding(
        "package-total-unverifiable", E, files.grid, f"package_total_usd_minor claims "
        f"{row.package_total_usd_minor}, but no tariff prices {rental.gpu} over {rental.label} "
        "days: the total cannot be checked", line=line, field="package_total_usd_minor",
        claimed=row.package_total_usd_minor, recomputed=None,
        rule="the total is price per lot x lots from a published tariff; gpu-audit never invents a price",
        fix=f"leave package_total_usd_minor empty, or add the provider's price for {rental.gpu} "
            f"({rental.label} days) to the tariffs file")
        for _, row, line in rows if row.package_total_usd_minor is not None]


def _no_tariff(files: _Files, rental: Rental, days: int) -> Finding:
    return make_finding(
        "no-tariff", W, files.tariffs, f"no tariff for {rental.gpu} over {days} days: the cost is undefined",
        field="gpu", claimed=rental.gpu, rule="prices come from the tariffs file only",
        fix="add the provider's published price, or accept an undefined cost")


def _mismatch_hint(tariff: cost.Tariff, claimed: int, total: int) -> str:
    """Why a claimed total differs, when it shows a known mistake."""
    if tariff.gpus_per_lot > 1 and claimed == total * tariff.gpus_per_lot:
        return (f": a {tariff.gpu} lot already holds {tariff.gpus_per_lot} GPUs and its price covers them; "
                "multiplying by the GPU count again counts them twice")
    if total and claimed % total == 0 and claimed // total > 1:
        return f": {claimed // total} x the package; a package is one expense, never summed over repeated rows"
    return ""


def _priced_findings(out: list[Finding], files: _Files, tariffs: list[cost.Tariff], rental: Rental,
                     rows: list[Row]) -> None:
    """Each row's GPUs against the lots billed, each price's status, and each claimed total against the tariffs."""
    first = tariffs[0]
    total = sum(cost.package_total(t, rental.lots) for t in tariffs)
    rented = first.gpus_per_lot * rental.lots
    for _, row, line in rows:
        used = row.gpu_count
        if isinstance(used, int) and used > rented:
            out.append(make_finding(
                "gpus-beyond-rental", E, files.grid, f"gpu_count claims {used} GPUs; the package rents "
                f"{rental.lots} lot(s) of {first.gpus_per_lot} = {rented} GPU(s)", line=line, field="gpu_count",
                claimed=used, recomputed=rented, rule="the program runs on the GPUs of the lots billed",
                fix="rent and register the lots the runs used, or report the GPUs actually used"))
    for tariff in tariffs:
        if tariff.price_status == "illustrative":
            out.append(make_finding(
                "illustrative-price", Severity.INFO, files.tariffs,
                f"the price of {tariff.gpu} for {tariff.duration_days} days is illustrative, not published",
                field="price_status", claimed=tariff.price_per_lot_usd_minor,
                rule="only published prices commit a budget", fix="check the provider's current offer"))
    per_lot = " + ".join(str(t.price_per_lot_usd_minor) for t in tariffs)
    for _, row, line in rows:
        claimed = row.package_total_usd_minor
        if claimed is None or claimed == total:
            continue
        hint = _mismatch_hint(first, claimed, total) if len(tariffs) == 1 else (
            ": the extra periods are part of the committed package" if claimed in
            {cost.package_total(t, rental.lots) for t in tariffs} else "")
        out.append(make_finding(
            "package-total-mismatch", E, files.grid, f"package_total_usd_minor claims {claimed}, the tariff "
            f"gives {total} ({per_lot} x {rental.lots} lots){hint}", line=line, field="package_total_usd_minor",
            claimed=claimed, recomputed=total, rule="price per lot x lots, in integer cents", fix=f"write {total}"))


def _period(tariff: cost.Tariff | None, days: int, lots: int, proof: ManifestProof | None) -> PackagePeriod:
    source = tariff.origin(proof) if tariff is not None else None
    return PackagePeriod(days, tariff.price_per_lot_usd_minor if tariff else None,
                         cost.package_total(tariff, lots) if tariff else None, tariff.price_status if tariff else None,
                         source[0] if source else None, source[1] if source else None,
                         tariff.snapshot_date if tariff else None)


def _combined_source(periods: list[PackagePeriod]) -> tuple[str | None, str | None]:
    """One origin for several prices: the weakest (illustrative, then provider, then catalogue) and its sources."""
    kinds = [p.price_source for p in periods]
    kind = None if None in kinds else next((k for k in (ILLUSTRATIVE, PROVIDER) if k in kinds), kinds[0])
    details = list(dict.fromkeys(p.price_source_detail for p in periods if p.price_source == kind))
    return kind, "; ".join(d for d in details if d) or None


def _needed(out: list[Finding], exp: ExperimentSpec, window: Window, tariffs: dict[tuple[str, int], cost.Tariff],
            total: int | None, where: str) -> tuple[int | None, int | None]:
    """The shortest single package covering the window when it is shorter than the packages rented, its price
    for the same lots, and a warning that names the difference (a reader asks why the longer one was paid for)."""
    rental, needed = exp.rental, window.smallest_covering_days
    if needed is None or needed >= rental.total_days:
        return None, None
    shorter = tariffs.get((rental.gpu, needed))
    needed_total = cost.package_total(shorter, rental.lots) if shorter is not None else None
    if needed_total is not None and total is not None:
        money = (f": {usd_amount(needed_total)} USD instead of {usd_amount(total)} USD, "
                 f"{usd_amount(total - needed_total)} USD more than needed")
    else:
        money = "; the difference is unknown (no price for both in the tariffs)"
    out.append(make_finding(
        "package-longer-than-needed", W, "protocol.json", f"the {rental.label}-day package "
        f"({rental.total_days * 24} h) was rented, but a {needed}-day package ({needed * 24} h) covers the "
        f"{window.hours} h window{money}", field=where, claimed=rental.total_days,
        recomputed=needed, rule="the smallest package that covers the window is the package really needed",
        fix="say in the protocol's notes why the longer package was needed, or rent the shorter one next time"))
    return needed, needed_total


def price_package(exp: ExperimentSpec, rows: list[Row], window: Window, tariffs: dict[tuple[str, int], cost.Tariff],
                  grid_file: str, tariffs_file: str, proof: ManifestProof | None = None,
                  hours: Decimal | None = None, where: str | None = None) -> tuple[Package, list[Finding]]:
    """The experiment's packages: whether they cover the window, their price from the tariffs, and the findings
    (`where`: the protocol field of its rental when it is a shared one, listed in `rentals`)."""
    out: list[Finding] = []
    files = _Files(grid_file, tariffs_file)
    rental, where = exp.rental, where or f"/experiments/{exp.id}/rental"
    covers = _coverage_findings(out, files, exp, rows, window, hours, where)
    found = [tariffs.get((rental.gpu, days)) for days in rental.periods]
    priced = [t for t in found if t is not None]
    periods = [_period(t, days, rental.lots, proof) for t, days in zip(found, rental.periods, strict=True)]
    if len(priced) < len(found):
        out.extend(_no_tariff(files, rental, days) for t, days in zip(found, rental.periods, strict=True) if t is None)
        out.extend(_unverifiable_totals(files, rental, rows))
        total = None
    else:
        _priced_findings(out, files, priced, rental, rows)
        total = sum(p.total_usd_minor or 0 for p in periods)
    needed_days, needed_total = _needed(out, exp, window, tariffs, total, where)
    first = priced[0] if len(priced) == len(found) else None
    statuses = {p.price_status for p in periods}
    source, detail = _combined_source(periods)
    return Package(gpu=rental.gpu, duration_days=rental.total_days, lots=rental.lots, covers_window=covers,
                   total_usd_minor=total, gpus_per_lot=first.gpus_per_lot if first else None,
                   gpus=first.gpus_per_lot * rental.lots if first else None,
                   price_per_lot_usd_minor=sum(t.price_per_lot_usd_minor for t in priced) if first else None,
                   price_status=(ILLUSTRATIVE if ILLUSTRATIVE in statuses else periods[0].price_status) if first
                   else None, model_name=first.model_name if first else None,
                   snapshot_date=next((p.snapshot_date for p in periods if p.price_source == source),
                                      first.snapshot_date) if first else None, price_source=source if first else None,
                   price_source_detail=detail if first else None,
                   periods=tuple(periods) if len(periods) > 1 else None, needed_days=needed_days,
                   needed_total_usd_minor=needed_total, article_ids=rental.article_ids, rental=rental.id), out
