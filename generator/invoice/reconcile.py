"""An invoice's lines and totals against the committed packages: each line identified, each package billed once.

The currency comes first: an invoice in another currency than the decision's is one finding and nothing is
compared against it. Otherwise each line is identified (generator.invoice.identify), matched to at most one
committed package and compared with it (lots, unit, unit price, line total); the invoice's own sums are added
up (generator.invoice.money); and the total net of tax is compared with the committed total, exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, localcontext

from generator.invoice.breakdown import breakdown_findings, currency_findings
from generator.invoice.committed import CURRENCY, Committed, committed_total, dollars, known, usd
from generator.invoice.document import Invoice, InvoiceLine
from generator.invoice.identify import Identity, identify, unidentified_reason
from generator.invoice.money import MAX_DIGITS, InvoiceFinding, due_findings, given, net_findings, tax_findings

INVOICE_TYPE = "380"  # UNTDID 1001: a commercial invoice (381 is a credit note, 384 a corrected invoice)
LOT_UNITS = frozenset({"C62", "H87", "LO"})  # UN/ECE rec. 20: one, piece, lot: what a package is billed in
TIME_UNITS = frozenset({"HUR", "DAY", "MIN", "SEC", "WEE", "MON", "ANN"})  # a rental billed by time
CENT = Decimal("0.01")
REGISTER = ("register the provider's article ID of the package in the protocol (experiments[].rental.article_ids) "
            "and build the bundle again, or ask the provider to name the GPU and the package duration on the line")


@dataclass(frozen=True)
class BilledLine:
    """One invoice line as reconciled: the line, how it was identified, and the package it bills (None when it
    bills none the decision committed, or one another line bills already)."""

    line: InvoiceLine
    identity: Identity
    package: Committed | None


def _line_words(line: InvoiceLine) -> str:
    """The line as finance finds it on the invoice: number, name, item IDs and amount."""
    ids = [f"{who} {value}" for who, value in (("seller's item ID", line.seller_id), ("buyer's item ID",
                                                                                      line.buyer_id),
                                                (f"global ID ({given(line.global_scheme)})", line.global_id)) if value]
    return (f"invoice line {line.line_id or line.position} \"{given(line.name)}\" "
            f"({'; '.join(ids) if ids else 'no item ID'}; amount {given(line.total)})")


def _line_findings(line: InvoiceLine, c: Committed) -> list[InvoiceFinding]:
    """One billed line against the package it bills."""
    where, out = line.position, []
    lot_price, qty = dollars(c.price_per_lot_usd_minor), line.quantity
    per_gpu = (c.gpus_per_lot or 1) > 1 and qty is not None and line.unit_price is not None and \
        lot_price is not None and qty == c.lots * (c.gpus_per_lot or 1) and \
        line.unit_price * (c.gpus_per_lot or 1) == lot_price
    if per_gpu:
        return [InvoiceFinding("billed-per-gpu", where, "BilledQuantity", f"{qty} x {line.unit_price}",
                               f"{c.lots} lot(s) x {usd(c.price_per_lot_usd_minor)}",
                               f"{c.what}: billed per GPU ({qty} x {line.unit_price}); a lot of {c.gpus_per_lot} "
                               f"GPUs is one price, billed per lot: {c.lots} x {usd(c.price_per_lot_usd_minor)}")]
    off, on = line.allowances or Decimal(0), line.charges or Decimal(0)
    with localcontext() as exact:
        exact.prec = 4 * MAX_DIGITS  # the product of two amounts of MAX_DIGITS digits, exactly
        computed = None if qty is None or line.unit_price is None else \
            (qty * line.unit_price).quantize(CENT, rounding=ROUND_HALF_UP)  # to the cent as the tax (BR-CO-17)
    if (line.unit or "").upper() in TIME_UNITS or (qty is not None and qty != qty.to_integral_value()) or \
            (line.total is not None and computed is not None and line.total != computed - off + on):
        out.append(InvoiceFinding("pro-rated", where, "BilledQuantity",
                                  f"{given(qty)} {given(line.unit)} = {given(line.total)}",
                                  f"{c.lots} whole lot(s) for {c.days} days",
                                  f"{c.what}: a pro-rated amount ({given(qty)} {given(line.unit)}, line total "
                                  f"{given(line.total)}); a package is billed whole, per lot, with no hourly "
                                  "pro-rating"))
    elif (line.unit or "").upper() not in LOT_UNITS:
        out.append(InvoiceFinding("unit", where, "BilledQuantity/@unitCode", line.unit, "C62 (lots)",
                                  f"{c.what}: billed in unit {given(line.unit)}; a package is billed in lots (C62)"))
    elif qty is None or qty != c.lots:
        out.append(InvoiceFinding("lots-differ", where, "BilledQuantity", None if qty is None else str(qty),
                                  str(c.lots), f"{c.what}: {given(qty)} lot(s) billed, {c.lots} committed"))
    if line.unit_price != lot_price and not out:
        out.append(InvoiceFinding("unit-price-differs", where, "NetPriceProductTradePrice/ChargeAmount",
                                  None if line.unit_price is None else str(line.unit_price),
                                  usd(c.price_per_lot_usd_minor),
                                  f"{c.what}: unit price {given(line.unit_price)} billed, the tariff's price per lot "
                                  f"is {usd(c.price_per_lot_usd_minor)}"))
    if (off or on) and not out:
        parts = [f"{what} of {value}" for what, value in (("an allowance", off), ("a charge", on)) if value]
        reasons = f" ({'; '.join(line.allowance_reasons)})" if line.allowance_reasons else ""
        out.append(InvoiceFinding("line-allowance-charge", where, "SpecifiedTradeAllowanceCharge",
                                  f"{' and '.join(parts)} = {given(line.total)}", usd(c.total_usd_minor),
                                  f"{c.what}: {' and '.join(parts)}{reasons} on the line brings it to "
                                  f"{given(line.total)}; the package committed is {c.lots} x "
                                  f"{usd(c.price_per_lot_usd_minor)}, billed whole"))
    return out


def _document_findings(invoice: Invoice) -> list[InvoiceFinding]:
    """The document itself: an invoice (not a credit note), every amount in its currency, whose net, tax, gross
    and due amounts add up (EN 16931 BR-CO-10, BR-CO-13 to BR-CO-17, which the XSD does not check:
    generator.invoice.money) and whose tax breakdown ties to its lines (BR-S-08 and its siblings:
    generator.invoice.breakdown). The tax is never compared with the decision, only with the invoice's own sums."""
    out = []
    if invoice.type_code != INVOICE_TYPE:
        out.append(InvoiceFinding("document-type", None, "ExchangedDocument/TypeCode", invoice.type_code,
                                  INVOICE_TYPE, f"the document's type code is {given(invoice.type_code)} (381 is a "
                                  "credit note, 384 a corrected invoice), not 380, a commercial invoice: it is not a "
                                  "bill of the committed packages"))
    return out + currency_findings(invoice) + net_findings(invoice) + due_findings(invoice) + \
        tax_findings(invoice) + breakdown_findings(invoice)


def match_lines(invoice: Invoice, committed: list[Committed]) -> list[BilledLine]:
    """Each line, identified, with the committed package it bills: the first line naming a package bills it."""
    packages, names = {c.key: c for c in committed}, known(committed)
    billed: set[tuple[str, int]] = set()
    out = []
    for line in invoice.lines:
        identity = identify(line, names)
        if not line.counted:  # a sub-line or an information line bills nothing of its own
            out.append(BilledLine(line, identity, None))
            continue
        key = (identity.gpu or "", identity.days or 0)
        package = packages.get(key) if identity.complete and key not in billed else None
        if package is not None:
            billed.add(key)
        out.append(BilledLine(line, identity, package))
    return out


def _unmatched(b: BilledLine, committed: list[Committed]) -> InvoiceFinding:
    """The finding of a line that bills no committed package, or one another line bills already."""
    line, identity = b.line, b.identity
    if not identity.complete:
        return InvoiceFinding("line-not-identified", line.position, "SpecifiedTradeProduct",
                              f"\"{given(line.name)}\", {given(line.total)}", "no package identified",
                              f"{_line_words(line)}: no committed package identified: "
                              f"{unidentified_reason(line, known(committed))}; {REGISTER}")
    what = f"{identity.gpu}, {identity.days} days"
    if (identity.gpu, identity.days) in {c.key for c in committed}:
        return InvoiceFinding("billed-twice", line.position, "SpecifiedTradeProduct", what, "billed once",
                              f"{_line_words(line)} bills {what} (by its {identity.ways[0]}), a package another line "
                              "bills already: the decision committed it once")
    return InvoiceFinding("billed-not-committed", line.position, "SpecifiedTradeProduct", what, "no such package",
                          f"{_line_words(line)} bills {what} (by its {identity.ways[0]}), a package the decision did "
                          "not commit")


def format_finding(invoice: Invoice) -> InvoiceFinding | None:
    """The finding of a document in another format the factur-x library reads (UBL, Order-X): what it is, that
    nothing was compared, and what to ask the provider for; None for a CII or ZUGFeRD 1.0 invoice."""
    other = invoice.other_format
    if other is None:
        return None
    ask = "the invoice of this order" if other.format == "order-x" else "the same invoice"
    return InvoiceFinding("invoice-format", None, "root element", f"{other.root} of namespace {other.namespace}",
                          "Factur-X or ZUGFeRD (UN/CEFACT CII)",
                          f"{invoice.source} is {other.name}: gpu-audit reconciles Factur-X and ZUGFeRD invoices "
                          "(UN/CEFACT CII, EN 16931) only, so nothing was compared with the committed packages; ask "
                          f"the provider for {ask} as Factur-X or ZUGFeRD (a PDF carrying its XML), or as its CII "
                          "XML", "allowed")


def reconcile(invoice: Invoice, committed: list[Committed]) -> list[InvoiceFinding]:
    """Every difference between the invoice's lines and totals and the committed packages."""
    other = format_finding(invoice)
    if other is not None:  # nothing was read to compare
        return [other]
    if invoice.currency != CURRENCY:
        return [InvoiceFinding("currency", None, "InvoiceCurrencyCode", invoice.currency, CURRENCY,
                               f"the invoice is in {given(invoice.currency)}; the tariffs, and so the committed "
                               f"budget, are in {CURRENCY}: no amount was compared, nor anything else (ask the "
                               f"provider for the invoice in {CURRENCY})")]
    findings: list[InvoiceFinding] = _document_findings(invoice)
    matched = match_lines(invoice, committed)
    for b in (b for b in matched if b.line.counted):
        if b.identity.conflict:
            findings.append(InvoiceFinding(
                "line-identification-conflict", b.line.position, "SpecifiedTradeProduct", b.identity.conflict,
                "one package", f"{_line_words(b.line)} is identified differently by different ways: "
                f"{b.identity.conflict}; ask the provider to correct the line"))
        findings += _unmatched_or_compared(b, committed)
    billed = {b.package.key for b in matched if b.package is not None}
    for c in committed:
        if c.key not in billed:
            findings.append(InvoiceFinding("committed-not-billed", None, "IncludedSupplyChainTradeLineItem",
                                           "no line", f"{c.lots} x {usd(c.price_per_lot_usd_minor)}",
                                           f"{c.what}: committed but billed by no invoice line"))
    return findings + _total_findings(invoice, committed)


def _unmatched_or_compared(b: BilledLine, committed: list[Committed]) -> list[InvoiceFinding]:
    return [_unmatched(b, committed)] if b.package is None else _line_findings(b.line, b.package)


def _total_findings(invoice: Invoice, committed: list[Committed]) -> list[InvoiceFinding]:
    """The invoice's total net of tax against the campaign's committed total, exactly."""
    total = committed_total(committed)
    if invoice.net_total is not None and invoice.net_total == dollars(total):
        return []
    committed_words = (f"the campaign's committed total is {usd(total)}" if total is not None else
                       "the campaign has no committed total (a package has no published price), so no billed "
                       "total can be confirmed")
    parts = [f"{what} {value}" for what, value in (("less the document's allowances", invoice.allowance_total),
                                                    ("plus its charges", invoice.charge_total)) if value]
    document = f" (its lines' {given(invoice.line_total)} {' '.join(parts)})" if parts else ""
    return [InvoiceFinding("total-differs", None, "TaxBasisTotalAmount",
                           None if invoice.net_total is None else str(invoice.net_total), usd(total),
                           f"the invoice's total net of tax is {given(invoice.net_total)} {CURRENCY}{document}; "
                           + committed_words)]
