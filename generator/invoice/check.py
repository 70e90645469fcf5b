"""`invoice check`: a verified bundle's committed packages against a provider's invoice, line by line.

The bundle is verified first with the rules of `verify`; its decision.json then gives the packages the
campaign committed, each counted once. Tax is shown apart and never compared: the committed budget is net.
The invoice's own sums (tax, gross, amount due) are added up by generator.invoice.money.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from decimal import Decimal, localcontext
from pathlib import Path
from typing import Any

from generator.bundle.verdict import Report, Trust
from generator.core.errors import UnreadableInputError
from generator.core.money import usd_amount
from generator.invoice.money import MAX_DIGITS, InvoiceFinding, due_findings, tax_findings
from generator.invoice.read import Invoice, InvoiceLine, read_invoice

CURRENCY = "USD"  # the tariffs' currency
INVOICE_TYPE = "380"  # UNTDID 1001: a commercial invoice (381 is a credit note, 384 a corrected invoice)
LOT_UNITS = frozenset({"C62", "H87", "LO"})  # UN/ECE rec. 20: one, piece, lot: what a package is billed in
TIME_UNITS = frozenset({"HUR", "DAY", "MIN", "SEC", "WEE", "MON", "ANN"})  # a rental billed by time
CENT = Decimal("0.01")


@dataclass(frozen=True)
class Committed:
    """A package the decision committed: GPU and duration, lots (summed over experiments renting the same
    package, each experiment once), price per lot and GPUs per lot from the tariffs, the committed total."""

    gpu: str
    days: int
    lots: int
    price_per_lot_usd_minor: int | None
    gpus_per_lot: int | None
    total_usd_minor: int | None
    experiments: tuple[str, ...]
    price_source: str | None = None  # catalogue, provider or illustrative; None in a decision older than these
    price_source_detail: str | None = None  # the catalogue's snapshot date, lab-manifest, or the source named


@dataclass
class InvoiceCheck:
    """The outcome: the bundle's verification, the invoice read, the findings, and the totals (tax apart)."""

    report: Report
    invoice: Invoice | None = None
    committed: list[Committed] = field(default_factory=list)
    findings: list[InvoiceFinding] = field(default_factory=list)
    other_expenses: list[tuple[str, int]] = field(default_factory=list)  # registered apart: listed, not compared

    @property
    def ok(self) -> bool:
        return self.report.ok and self.invoice is not None and not self.findings

    def to_json(self) -> dict[str, Any]:
        """The same result for machines: amounts as decimal strings, cents as integers."""
        inv = self.invoice
        return {"bundle": {"path": self.report.bundle, "bundle_id": self.report.bundle_id, "verified": self.report.ok,
                           "problems": [str(p) for p in self.report.problems]},
                "invoice": None if inv is None else {
                    "source": inv.source, "number": inv.number, "type_code": inv.type_code, "currency": inv.currency,
                    "due": _str(inv.due), "prepaid": _str(inv.prepaid), "rounding": _str(inv.rounding),
                    "taxes": [{k: _str(v) if isinstance(v, Decimal) else v for k, v in asdict(t).items()}
                              for t in inv.taxes],
                    "compared": "xml",  # the invoice's XML only: its printed page is never read
                    "net_total": _str(inv.net_total), "tax_total": _str(inv.tax_total),
                    "grand_total": _str(inv.grand_total), "lines": len(inv.lines)},
                "committed": [asdict(c) for c in self.committed],
                "committed_total_usd_minor": committed_total(self.committed),
                "other_expenses": [{"what": w, "amount_usd_minor": a} for w, a in self.other_expenses],
                "findings": [asdict(f) for f in self.findings], "ok": self.ok}


def _str(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


def usd(cents: int | None) -> str:
    """Cents as '2071.00 USD' (generator.core.money), or 'no price'."""
    return "no price" if cents is None else f"{usd_amount(cents)} {CURRENCY}"


def committed_packages(decision: dict[str, Any]) -> list[Committed]:
    """The packages of the decision's experiments, those renting the same GPU and duration as one."""
    grouped: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for e in decision.get("experiments") or []:
        p = e["package"]
        # Consecutive packages (a rental's periods) are billed one line each: one committed package per period.
        for part in p.get("periods") or [p]:
            grouped.setdefault((p["gpu"], part["duration_days"]), []).append(
                {**p, **part, "lots": p["lots"], "experiment": e["id"]})
    out = []
    for (gpu, days), packages in grouped.items():
        lots = sum(int(p["lots"]) for p in packages)
        price = packages[0].get("price_per_lot_usd_minor")
        totals = [p.get("total_usd_minor") for p in packages]
        priced = [int(t) for t in totals if t is not None]
        out.append(Committed(gpu=gpu, days=days, lots=lots, price_per_lot_usd_minor=price,
                             gpus_per_lot=packages[0].get("gpus_per_lot"),
                             total_usd_minor=sum(priced) if len(priced) == len(totals) else None,
                             experiments=tuple(p["experiment"] for p in packages),
                             price_source=packages[0].get("price_source"),
                             price_source_detail=packages[0].get("price_source_detail")))
    return out


def other_expenses(decision: dict[str, Any]) -> list[tuple[str, int]]:
    """The expenses the protocol registered beside the packages (what, cents): listed, never compared."""
    campaign = decision.get("campaign") or {}
    return [(str(e["what"]), int(e["amount_usd_minor"])) for e in campaign.get("other_expenses") or []]


def committed_total(committed: list[Committed]) -> int | None:
    """The campaign's committed total in cents; None when a package has no price."""
    totals = [c.total_usd_minor for c in committed]
    return None if not totals or None in totals else sum(int(t) for t in totals if t is not None)


def _dollars(cents: int | None) -> Decimal | None:
    """Cents as an exact dollar amount, compared with an invoice's amount as it is (110.004 is not 110.00)."""
    return None if cents is None else Decimal(cents) / 100


def _what(c: Committed) -> str:
    return f"{c.gpu}, {c.days}-day package ({', '.join(c.experiments)})"


def _line_findings(line: InvoiceLine, c: Committed) -> list[InvoiceFinding]:
    """One billed line against the package it bills."""
    where, out = line.position, []
    lot_price, qty = _dollars(c.price_per_lot_usd_minor), line.quantity
    per_gpu = (c.gpus_per_lot or 1) > 1 and qty is not None and line.unit_price is not None and \
        lot_price is not None and qty == c.lots * (c.gpus_per_lot or 1) and \
        line.unit_price * (c.gpus_per_lot or 1) == lot_price
    if per_gpu:
        return [InvoiceFinding("billed-per-gpu", where, "BilledQuantity", f"{qty} x {line.unit_price}",
                               f"{c.lots} lot(s) x {usd(c.price_per_lot_usd_minor)}",
                               f"{_what(c)}: billed per GPU ({qty} x {line.unit_price}); a lot of {c.gpus_per_lot} "
                               f"GPUs is one price, billed per lot: {c.lots} x {usd(c.price_per_lot_usd_minor)}")]
    with localcontext() as exact:
        exact.prec = 4 * MAX_DIGITS  # the product of two amounts of MAX_DIGITS digits, exactly
        computed = None if qty is None or line.unit_price is None else (qty * line.unit_price).quantize(CENT)
    if (line.unit or "").upper() in TIME_UNITS or (qty is not None and qty != qty.to_integral_value()) or \
            (line.total is not None and computed is not None and line.total != computed):
        out.append(InvoiceFinding("pro-rated", where, "BilledQuantity", f"{qty} {line.unit} = {line.total}",
                                  f"{c.lots} whole lot(s) for {c.days} days",
                                  f"{_what(c)}: a pro-rated amount ({qty} {line.unit}, line total {line.total}); a "
                                  "package is billed whole, per lot, with no hourly pro-rating"))
    elif (line.unit or "").upper() not in LOT_UNITS:
        out.append(InvoiceFinding("unit", where, "BilledQuantity/@unitCode", line.unit, "C62 (lots)",
                                  f"{_what(c)}: billed in unit {line.unit}; a package is billed in lots (C62)"))
    elif qty is None or qty != c.lots:
        out.append(InvoiceFinding("lots-differ", where, "BilledQuantity", None if qty is None else str(qty),
                                  str(c.lots), f"{_what(c)}: {qty} lot(s) billed, {c.lots} committed"))
    if line.unit_price != lot_price and not out:
        out.append(InvoiceFinding("unit-price-differs", where, "NetPriceProductTradePrice/ChargeAmount",
                                  _str(line.unit_price), usd(c.price_per_lot_usd_minor),
                                  f"{_what(c)}: unit price {line.unit_price} billed, the tariff's price per lot is "
                                  f"{usd(c.price_per_lot_usd_minor)}"))
    return out


def _document_findings(invoice: Invoice) -> list[InvoiceFinding]:
    """The document itself: an invoice (not a credit note), whose tax, gross and due amounts add up (EN 16931
    BR-CO-14 to BR-CO-17, which the XSD does not check: generator.invoice.money). The tax is never compared with the
    decision, only with the invoice's own sums."""
    out = []
    if invoice.type_code != INVOICE_TYPE:
        out.append(InvoiceFinding("document-type", None, "ExchangedDocument/TypeCode", invoice.type_code,
                                  INVOICE_TYPE, f"the document's type code is {invoice.type_code} (381 is a credit "
                                  "note, 384 a corrected invoice), not 380, a commercial invoice: it is not a bill "
                                  "of the committed packages"))
    return out + due_findings(invoice) + tax_findings(invoice)


def reconcile(invoice: Invoice, committed: list[Committed]) -> list[InvoiceFinding]:
    """Every difference between the invoice's lines and totals and the committed packages."""
    findings: list[InvoiceFinding] = _document_findings(invoice)
    if invoice.currency != CURRENCY:
        findings.append(InvoiceFinding("currency", None, "InvoiceCurrencyCode", invoice.currency, CURRENCY,
                                       f"the invoice is in {invoice.currency}; the tariffs, and so the committed "
                                       f"budget, are in {CURRENCY}: nothing can be compared without the provider's "
                                       "invoice in the tariff's currency"))
    by_key = {(c.gpu, c.days): c for c in committed}
    billed: set[tuple[str, int]] = set()
    for line in invoice.lines:
        key = (line.gpu or "", line.days or 0)
        package = by_key.get(key)
        if package is None or key in billed:
            why = ("a package already billed by another line, which the decision committed once"
                   if package is not None else "a package the decision did not commit")
            findings.append(InvoiceFinding(
                "billed-not-committed", line.position, "SellerAssignedID", f"{line.gpu}, {line.days} days",
                None, f"invoice line {line.line_id or line.position} bills {line.gpu!s} for {line.days!s} days "
                      f"({line.name}), {why}"))
            continue
        billed.add(key)
        findings += _line_findings(line, package)
    for c in committed:
        if (c.gpu, c.days) not in billed:
            findings.append(InvoiceFinding("committed-not-billed", None, "IncludedSupplyChainTradeLineItem", None,
                                           f"{c.lots} x {usd(c.price_per_lot_usd_minor)}",
                                           f"{_what(c)}: committed but billed by no invoice line"))
    total = committed_total(committed)
    if invoice.net_total is None or invoice.net_total != _dollars(total):
        committed_words = (f"the campaign's committed total is {usd(total)}" if total is not None else
                           "the campaign has no committed total (a package has no published price), so no billed "
                           "total can be confirmed")
        findings.append(InvoiceFinding("total-differs", None, "TaxBasisTotalAmount", _str(invoice.net_total),
                                       usd(total), f"the invoice's total net of tax is {invoice.net_total}; "
                                       + committed_words))
    return findings


def _decision_of(path: Path, trust: Trust, allow_unsigned: bool) -> tuple[Report, bytes | None]:
    """Verify the bundle (a folder, a zip or a note) and take its decision.json as verification read it: the
    bytes that were checked are the bytes reconciled, whatever happens to the files afterwards."""
    from generator.bundle.verify import verify_bundle

    report = verify_bundle(path, trust=trust, allow_unsigned=allow_unsigned)
    return report, report.decision if report.ok else None


def check_invoice(invoice_path: Path, bundle: Path, trust: Trust, allow_unsigned: bool = False) -> InvoiceCheck:
    """`gpu-audit invoice check`: verify the bundle, read the invoice, reconcile them."""
    invoice = read_invoice(invoice_path)  # an unreadable invoice is exit 2 before the bundle is touched
    report, raw = _decision_of(bundle, trust, allow_unsigned)
    report.bundle = str(bundle)
    result = InvoiceCheck(report=report, invoice=invoice)
    if raw is None:
        if report.ok:
            raise UnreadableInputError(f"{bundle}: the verified bundle holds no readable decision.json")
        return result
    decision = json.loads(raw)
    result.committed = committed_packages(decision)
    result.other_expenses = other_expenses(decision)
    result.findings = reconcile(invoice, result.committed)
    return result
