"""Provider invoices for the tests, made by real tools: drafthorse writes the CII XML (EN 16931), the factur-x
library checks it against its official XSD and embeds it into a PDF/A-3 that WeasyPrint renders.

Nothing here is written by hand as XML. `python tests/invoices.py OUT.pdf` writes the matching invoice of
inputs/example (docs/invoices.md's example for finance).
"""

from __future__ import annotations

import functools
import io
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import facturx
from conftest import gpu_audit
from drafthorse.models.accounting import ApplicableTradeTax, CategoryTradeTax, TradeAllowanceCharge
from drafthorse.models.document import Document
from drafthorse.models.note import IncludedNote
from drafthorse.models.product import ProductCharacteristic
from drafthorse.models.tradelines import LineItem

PROFILE = "urn:cen.eu:en16931:2017"
EXTENDED = "urn:cen.eu:en16931:2017#conformant#urn:factur-x.eu:1p0:extended"


@dataclass
class Line:
    """One billed line: the GPU slug, its package duration, quantity, unit and price; by default written as
    gpu-audit's own fixtures write it (the slug as the seller's item ID, the item attribute `duration_days`), or
    as providers write it (their own item IDs, a name, a description, notes, an allowance, a tax category)."""

    gpu: str
    days: int
    quantity: Decimal
    unit_price: Decimal
    unit: str = "C62"  # UN/ECE rec. 20: one (a lot); HUR would be hours
    total: Decimal | None = None  # price x quantity less the allowance unless given
    name: str = ""
    seller_id: str | None = ""  # "": the GPU slug; None: no seller's item ID
    attribute: bool = True  # the item attribute duration_days
    buyer_id: str | None = None
    global_id: tuple[str, str] | None = None  # (schemeID, ID): 0160 is a GTIN
    description: str | None = None
    notes: tuple[str, ...] = ()
    allowance: tuple[Decimal, str] | None = None  # a line allowance (BG-27) and its reason
    tax: tuple[str, Decimal] | None = None  # (category, rate); None: S at the invoice's rate
    status: str | None = None  # LineStatusReasonCode of the EXTENDED profile: GROUP, DETAIL or INFORMATION


@dataclass
class Invoice:
    """An invoice of packages, in a currency, with VAT at a rate (shown apart, never compared)."""

    lines: list[Line]
    currency: str = "USD"
    vat_percent: Decimal = Decimal("20.00")
    number: str = "ITG-2026-0042"
    type_code: str = "380"  # a commercial invoice; 381 a credit note
    issued: date = date(2026, 10, 10)
    extra_totals: dict[str, Decimal] = field(default_factory=dict)
    prepaid: Decimal | None = None  # TotalPrepaidAmount, written only when given
    rounding: Decimal | None = None  # RoundingAmount, written only when given
    tax_overrides: dict[str, Decimal] = field(default_factory=dict)  # "rate", "amount" of the (first) category
    notes: tuple[str, ...] = ()  # the document's notes (BT-22)
    # document-level allowances (negative) and charges (positive): (amount, reason, tax category, rate)
    allowances: list[tuple[Decimal, str, str, Decimal]] = field(default_factory=list)
    extended: bool = False  # the Factur-X EXTENDED profile, whose DETAIL lines are not summed
    # the header's tax breakdown as given, (category, rate, basis, amount) each, instead of the one the lines make
    header_taxes: list[tuple[str, Decimal, Decimal, Decimal]] | None = None
    currency_ids: dict[str, str] = field(default_factory=dict)  # element name -> the currencyID set on each
    tax_currency: tuple[str, Decimal] | None = None  # TaxCurrencyCode and the tax total in it (BT-6, BT-111)


def example_lines() -> list[Line]:
    """What inputs/example committed: one rtx-4090 lot and one b200 lot of 2 GPUs, 7 days each."""
    return [Line("rtx-4090", 7, Decimal("1"), Decimal("110.00"), name="IteraGPU RTX 4090, 7-day package"),
            Line("b200", 7, Decimal("1"), Decimal("2071.00"), name="IteraGPU B200 (lot of 2 GPUs), 7-day package")]


def named_lines(rtx: str = "rtx-4090 package 7 days", b200: str = "b200 package 7 days") -> list[Line]:
    """The same packages as a provider's invoice made with drafthorse writes them: a name, no item ID, no
    attribute (issue #35's example)."""
    return [Line("rtx-4090", 7, Decimal("1"), Decimal("110.00"), name=rtx, seller_id=None, attribute=False),
            Line("b200", 7, Decimal("1"), Decimal("2071.00"), name=b200, seller_id=None, attribute=False)]


# The provider's article IDs of inputs/example's two packages, as a protocol registers them (rental.article_ids).
ARTICLES = {"rtx-4090": "IGPU-4090-7D", "b200": "IGPU-B200-7D"}


def en16931_lines(rtx: str = "GeForce RTX 4090, Mietpaket 7 Tage",
                  b200: str = "B200 (lot de 2 GPU), forfait 7 jours") -> list[Line]:
    """The packages in the shapes the EN 16931 examples use: the seller's item ID (the provider's article ID) and
    a name, the buyer's item ID, a GTIN, a description, line notes, and two tax categories (standard rate and
    reverse charge)."""
    return [Line("rtx-4090", 7, Decimal("1"), Decimal("110.00"), name=rtx, seller_id=ARTICLES["rtx-4090"],
                 attribute=False, buyer_id="PO-2026-118/1", global_id=("0160", "4012345000016"),
                 description="1 Los, Leistungszeitraum 03.10.2026 bis 10.10.2026",
                 notes=("Bereitstellung im Rechenzentrum FRA-2",), tax=("S", Decimal("19.00"))),
            Line("b200", 7, Decimal("1"), Decimal("2071.00"), name=b200, seller_id=ARTICLES["b200"],
                 attribute=False, buyer_id="PO-2026-118/2", description="1 lot, du 03/10/2026 au 10/10/2026",
                 notes=("Autoliquidation",), tax=("AE", Decimal("0.00")))]


def en16931_invoice(lines: list[Line] | None = None, **changes: object) -> Invoice:
    """An invoice of en16931_lines with the document's notes, as the EN 16931 examples write them."""
    invoice = Invoice(en16931_lines() if lines is None else lines,
                      notes=("#ADU#Zahlbar innerhalb von 30 Tagen ohne Abzug", "#REG#IteraGPU (test fixture)"))
    for key, value in changes.items():
        setattr(invoice, key, value)
    return invoice


def _total(line: Line) -> Decimal:
    if line.total is not None:
        return line.total
    off = line.allowance[0] if line.allowance else Decimal(0)
    return (line.unit_price * line.quantity).quantize(Decimal("0.01")) - off


def _category(invoice: Invoice, line: Line) -> tuple[str, Decimal]:
    return line.tax if line.tax is not None else ("S", invoice.vat_percent)


def _tax(category: str, rate: Decimal, basis: Decimal, overrides: dict[str, Decimal]) -> ApplicableTradeTax:
    tax = ApplicableTradeTax()
    tax.calculated_amount = overrides.get("amount", _vat(basis, rate))
    tax.basis_amount = basis
    tax.type_code = "VAT"
    tax.category_code = category
    if category in ("E", "AE"):
        tax.exemption_reason = "Reverse charge" if category == "AE" else "Exempt"
    tax.rate_applicable_percent = overrides.get("rate", rate)
    return tax


def _vat(basis: Decimal, rate: Decimal) -> Decimal:
    return (basis * rate / 100).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def _item(invoice: Invoice, number: int, line: Line) -> LineItem:
    item = LineItem()
    item.document.line_id = str(number)
    if line.status is not None:
        item.document.line_status_reason_code = line.status
    for text in line.notes:
        note = IncludedNote()
        note.content = text
        item.document.notes.add(note)
    if line.global_id is not None:
        item.product.global_id = line.global_id
    if line.seller_id is not None:
        item.product.seller_assigned_id = line.seller_id or line.gpu
    if line.buyer_id is not None:
        item.product.buyer_assigned_id = line.buyer_id
    item.product.name = line.name or f"{line.gpu}, {line.days}-day package"
    if line.description is not None:
        item.product.description = line.description
    if line.attribute:
        characteristic = ProductCharacteristic()
        characteristic.description = "duration_days"
        characteristic.value = str(line.days)
        item.product.characteristics.add(characteristic)
    item.agreement.net.amount = line.unit_price
    item.delivery.billed_quantity = (line.quantity, line.unit)
    category, rate = _category(invoice, line)
    item.settlement.trade_tax.type_code = "VAT"
    item.settlement.trade_tax.category_code = category
    item.settlement.trade_tax.rate_applicable_percent = rate
    if line.allowance is not None:
        allowance = TradeAllowanceCharge()
        allowance.indicator = False
        allowance.actual_amount = line.allowance[0]
        allowance.reason = line.allowance[1]
        item.settlement.allowance_charge.add(allowance)
    item.settlement.monetary_summation.total_amount = _total(line)
    return item


def _document_allowance(amount: Decimal, reason: str, category: str, rate: Decimal) -> TradeAllowanceCharge:
    entry = TradeAllowanceCharge()
    entry.indicator = amount > 0  # a charge; an allowance is written as a positive amount
    entry.actual_amount = abs(amount)
    entry.reason = reason
    tax = CategoryTradeTax()
    tax.type_code = "VAT"
    tax.category_code = category
    tax.rate_applicable_percent = rate
    entry.trade_tax.add(tax)
    return entry


def cii_xml(invoice: Invoice) -> bytes:
    """The invoice as Factur-X EN 16931 CII XML, checked against the factur-x library's XSD."""
    doc = Document()
    doc.context.guideline_parameter.id = EXTENDED if invoice.extended else PROFILE
    doc.header.id = invoice.number
    doc.header.type_code = invoice.type_code
    doc.header.issue_date_time = invoice.issued
    for text in invoice.notes:
        note = IncludedNote()
        note.content = text
        doc.header.notes.add(note)
    doc.trade.agreement.seller.name = "IteraGPU (test fixture)"
    doc.trade.agreement.seller.address.country_id = "FR"
    doc.trade.agreement.buyer.name = "Example Org (test fixture)"
    doc.trade.agreement.buyer.address.country_id = "DE"
    doc.trade.settlement.currency_code = invoice.currency
    doc.trade.settlement.payment_means.type_code = "30"
    net = Decimal("0.00")
    bases: dict[tuple[str, Decimal], Decimal] = {}
    for number, line in enumerate(invoice.lines, start=1):
        doc.trade.items.add(_item(invoice, number, line))
        if line.status in ("DETAIL", "INFORMATION"):  # EXTENDED: its amount is its group's, or none
            continue
        net += _total(line)
        key = _category(invoice, line)
        bases[key] = bases.get(key, Decimal("0.00")) + _total(line)
    off = sum((-a for a, *_ in invoice.allowances if a < 0), Decimal("0.00"))
    on = sum((a for a, *_ in invoice.allowances if a > 0), Decimal("0.00"))
    for amount, reason, category, rate in invoice.allowances:
        doc.trade.settlement.allowance_charge.add(_document_allowance(amount, reason, category, rate))
        bases[(category, rate)] = bases.get((category, rate), Decimal("0.00")) + amount
    vat = Decimal("0.00")
    for index, ((category, rate), basis) in enumerate(bases.items()):
        if invoice.header_taxes is not None:
            break
        tax = _tax(category, rate, basis, invoice.tax_overrides if index == 0 else {})
        doc.trade.settlement.trade_tax.add(tax)
        vat += _vat(basis, rate)
    for category, rate, basis, amount in invoice.header_taxes or []:
        doc.trade.settlement.trade_tax.add(_tax(category, rate, basis, {"amount": amount}))
        vat += amount
    basis = net - off + on
    totals = doc.trade.settlement.monetary_summation
    totals.line_total = net
    if invoice.allowances:
        totals.charge_total = on
        totals.allowance_total = off
    totals.tax_basis_total = invoice.extra_totals.get("tax_basis_total", basis)
    totals.tax_total = (invoice.extra_totals.get("tax_total", vat), invoice.currency)
    totals.grand_total = invoice.extra_totals.get("grand_total", basis + vat)
    if invoice.rounding is not None:
        totals.rounding_amount = invoice.rounding
    if invoice.prepaid is not None:
        totals.prepaid_total = invoice.prepaid
    due = basis + vat - (invoice.prepaid or 0) + (invoice.rounding or 0)  # EN 16931 BR-CO-16
    totals.due_amount = invoice.extra_totals.get("due_amount", due)
    level = "extended" if invoice.extended else "en16931"
    xml: bytes = _currencies(invoice, doc.serialize(schema=f"FACTUR-X_{level.upper()}"))
    facturx.xml_check_xsd(xml, flavor="factur-x", level=level)
    return xml


def _currencies(invoice: Invoice, xml: bytes) -> bytes:
    """The XML with the currencyID attributes asked for, and the tax currency's code and tax total (the second
    TaxTotalAmount the EN 16931 XSD allows), set with lxml on what drafthorse wrote."""
    if not invoice.currency_ids and invoice.tax_currency is None:
        return xml
    from lxml import etree

    root = etree.fromstring(xml)
    ram = "{urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100}"
    for element in root.iter():
        name = element.tag.rpartition("}")[2] if isinstance(element.tag, str) else ""
        if name in invoice.currency_ids:
            element.set("currencyID", invoice.currency_ids[name])
    if invoice.tax_currency is not None:
        code, amount = invoice.tax_currency
        (settlement,) = root.iter(f"{ram}ApplicableHeaderTradeSettlement")
        settlement.find(f"{ram}InvoiceCurrencyCode").addprevious(etree.Element(f"{ram}TaxCurrencyCode"))
        settlement.find(f"{ram}TaxCurrencyCode").text = code
        (total,) = settlement.iter(f"{ram}TaxTotalAmount")
        total.addnext(etree.Element(f"{ram}TaxTotalAmount", currencyID=code))
        total.getnext().text = str(amount)
    return bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))


def visible_pdf(invoice: Invoice) -> bytes:
    """The human-readable invoice: a PDF/A-3b page WeasyPrint renders (its lines, as the XML states them)."""
    rows = "".join(f"<tr><td>{line.name or line.gpu}</td><td>{line.quantity}</td><td>{line.unit_price}</td>"
                   f"<td>{_total(line)}</td></tr>" for line in invoice.lines)
    return _rendered(invoice.number, rows)


@functools.cache
def _rendered(number: str, rows: str) -> bytes:
    import weasyprint

    html = (f"<html lang='en'><head><title>Invoice {number}</title></head><body><h1>Invoice {number}</h1>"
            f"<p>Test fixture, not a real invoice.</p><table>{rows}</table></body></html>")
    out = io.BytesIO()
    weasyprint.HTML(string=html).write_pdf(out, pdf_variant="pdf/a-3b")
    return out.getvalue()


def facturx_pdf(invoice: Invoice) -> bytes:
    """The Factur-X PDF: the visible invoice with its CII XML attached by the factur-x library."""
    pdf: bytes = facturx.generate_from_binary(visible_pdf(invoice), cii_xml(invoice), flavor="factur-x",
                                              level="extended" if invoice.extended else "en16931",
                                              check_xsd=True)
    return pdf


if __name__ == "__main__":
    Path(sys.argv[1]).write_bytes(facturx_pdf(Invoice(example_lines())))


def invoice_check(tmp_path: Path, signed: tuple[Path, Path], invoice: Invoice | bytes, *extra: str,
                  name: str = "invoice.pdf") -> subprocess.CompletedProcess[str]:
    """`gpu-audit invoice check` of `invoice` (its Factur-X PDF, or the bytes given) against a signed bundle."""
    path = tmp_path / name
    path.write_bytes(invoice if isinstance(invoice, bytes) else facturx_pdf(invoice))
    bundle, cert = signed
    return gpu_audit("invoice", "check", str(path), str(bundle), "--trust", str(cert), *extra)
