"""An experiment's rented package: whether it covers the window, its price from the tariffs, claimed totals checked."""

from __future__ import annotations

from decimal import Decimal
from typing import NamedTuple

from generator.audit.findings import Finding, Severity, make_finding
from generator.audit.inputs.protocol import ExperimentSpec, Rental
from generator.audit.inputs.rows import GridRow
from generator.audit.recompute import cost
from generator.audit.recompute.model import Package, Window
from generator.audit.tariffrules import ManifestProof

E, W = Severity.ERROR, Severity.WARNING

# A grid row as recompute walks it: its index in the grid, its cells, its physical line.
Row = tuple[int, GridRow, int]


class _Files(NamedTuple):
    """Where the findings point: the grid and the tariffs file."""

    grid: str
    tariffs: str


def covers_window(window: Window, days: int) -> bool:
    """Whether a package of `days` covers the window: a package exactly as long as the window covers it.

    Taken from the window's exact coverage (cost.coverage, on the real timeline), never from its hours as
    shown, which are rounded to 0.01 h: a 7-day window and one second more shows "168" but is not covered.
    """
    exact = next((p.covers for p in window.packages if p.days == days), None)
    return exact if exact is not None else Decimal(window.hours) <= days * 24


def _coverage_findings(out: list[Finding], files: _Files, exp: ExperimentSpec, rows: list[Row],
                       window: Window) -> bool:
    """Whether the registered package covers the window; it and every row's package that does not are findings."""
    rental = exp.rental
    covers = covers_window(window, rental.duration_days)
    if not covers:
        out.append(make_finding(
            "package-does-not-cover-window", E, "protocol.json", f"the {rental.duration_days}-day package "
            f"({rental.duration_days * 24} h) does not cover the {window.hours} h window",
            field=f"/experiments/{exp.id}/rental", claimed=rental.duration_days,
            recomputed=window.smallest_covering_days, rule="the package must cover the whole campaign window",
            fix="rent a package that covers the window, or budget the extra periods"))
    for _, row, line in rows:
        days = row.duration_days
        if days is not None and not covers_window(window, days):
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
        f"{row.package_total_usd_minor}, but no tariff prices {rental.gpu} over {rental.duration_days} "
        "days: the total cannot be checked", line=line, field="package_total_usd_minor",
        claimed=row.package_total_usd_minor, recomputed=None,
        rule="the total is price per lot x lots from a published tariff; gpu-audit never invents a price",
        fix=f"leave package_total_usd_minor empty, or add the provider's price for {rental.gpu} "
            f"({rental.duration_days} days) to the tariffs file")
        for _, row, line in rows if row.package_total_usd_minor is not None]


def _unpriced_package(out: list[Finding], files: _Files, rental: Rental, rows: list[Row],
                      covers: bool) -> Package:
    """A package without a tariff: its cost is undefined, and a total claimed for it cannot be checked."""
    out.append(make_finding(
        "no-tariff", W, files.tariffs,
        f"no tariff for {rental.gpu} over {rental.duration_days} days: the cost is undefined",
        field="gpu", claimed=rental.gpu, rule="prices come from the tariffs file only",
        fix="add the provider's published price, or accept an undefined cost"))
    out.extend(_unverifiable_totals(files, rental, rows))
    return Package(gpu=rental.gpu, duration_days=rental.duration_days, lots=rental.lots,
                   covers_window=covers, total_usd_minor=None, gpus_per_lot=None, gpus=None,
                   price_per_lot_usd_minor=None, price_status=None, model_name=None, snapshot_date=None,
                   price_source=None, price_source_detail=None)


def _mismatch_hint(tariff: cost.Tariff, claimed: int, total: int) -> str:
    """Why a claimed total differs, when it shows a known mistake."""
    if tariff.gpus_per_lot > 1 and claimed == total * tariff.gpus_per_lot:
        return (f": a {tariff.gpu} lot already holds {tariff.gpus_per_lot} GPUs and its price covers them; "
                "multiplying by the GPU count again counts them twice")
    if total and claimed % total == 0 and claimed // total > 1:
        return f": {claimed // total} x the package; a package is one expense, never summed over repeated rows"
    return ""


def _priced_findings(out: list[Finding], files: _Files, tariff: cost.Tariff, rental: Rental,
                     rows: list[Row]) -> None:
    """Each row's GPUs against the lots billed, the price's status, and each claimed total against the tariff."""
    total = cost.package_total(tariff, rental.lots)
    rented = tariff.gpus_per_lot * rental.lots
    for _, row, line in rows:
        used = row.gpu_count
        if isinstance(used, int) and used > rented:
            out.append(make_finding(
                "gpus-beyond-rental", E, files.grid, f"gpu_count claims {used} GPUs; the package rents "
                f"{rental.lots} lot(s) of {tariff.gpus_per_lot} = {rented} GPU(s)", line=line, field="gpu_count",
                claimed=used, recomputed=rented, rule="the program runs on the GPUs of the lots billed",
                fix="rent and register the lots the runs used, or report the GPUs actually used"))
    if tariff.price_status == "illustrative":
        out.append(make_finding(
            "illustrative-price", Severity.INFO, files.tariffs,
            f"the price of {tariff.gpu} for {tariff.duration_days} days is illustrative, not published",
            field="price_status", claimed=tariff.price_per_lot_usd_minor,
            rule="only published prices commit a budget", fix="check the provider's current offer"))
    for _, row, line in rows:
        claimed = row.package_total_usd_minor
        if claimed is None or claimed == total:
            continue
        out.append(make_finding(
            "package-total-mismatch", E, files.grid, f"package_total_usd_minor claims {claimed}, the tariff "
            f"gives {total} ({tariff.price_per_lot_usd_minor} x {rental.lots} lots)"
            f"{_mismatch_hint(tariff, claimed, total)}", line=line, field="package_total_usd_minor",
            claimed=claimed, recomputed=total, rule="price per lot x lots, in integer cents", fix=f"write {total}"))


def price_package(exp: ExperimentSpec, rows: list[Row], window: Window, tariffs: dict[tuple[str, int], cost.Tariff],
                  grid_file: str, tariffs_file: str, proof: ManifestProof | None = None
                  ) -> tuple[Package, list[Finding]]:
    """The experiment's package: whether it covers the window, its price from the tariffs, and the findings."""
    out: list[Finding] = []
    files = _Files(grid_file, tariffs_file)
    rental = exp.rental
    covers = _coverage_findings(out, files, exp, rows, window)
    tariff = tariffs.get((rental.gpu, rental.duration_days))
    if tariff is None:
        return _unpriced_package(out, files, rental, rows, covers), out
    _priced_findings(out, files, tariff, rental, rows)
    source = tariff.origin(proof)
    return Package(gpu=rental.gpu, duration_days=rental.duration_days, lots=rental.lots,
                   covers_window=covers, total_usd_minor=cost.package_total(tariff, rental.lots),
                   gpus_per_lot=tariff.gpus_per_lot, gpus=tariff.gpus_per_lot * rental.lots,
                   price_per_lot_usd_minor=tariff.price_per_lot_usd_minor, price_status=tariff.price_status,
                   model_name=tariff.model_name, snapshot_date=tariff.snapshot_date,
                   price_source=source[0] if source else None, price_source_detail=source[1] if source else None), out
