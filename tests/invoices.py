"""Provider invoices for the tests, made by real tools: drafthorse writes the CII XML (EN 16931), the factur-x
library checks it against its official XSD and embeds it into a PDF/A-3 that WeasyPrint renders.

Nothing here is written by hand as XML. `python tests/invoices.py OUT.pdf` writes the matching invoice of
inputs/example (docs/invoices.md's example for finance).
"""

from __future__ import annotations

import functools
import io
import sys
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from pathlib import Path

import facturx
from drafthorse.models.accounting import ApplicableTradeTax
from drafthorse.models.document import Document
from drafthorse.models.product import ProductCharacteristic
from drafthorse.models.tradelines import LineItem

PROFILE = "urn:cen.eu:en16931:2017"


@dataclass
class Line:
    """One billed line: the GPU slug (the seller's item ID), its package duration, quantity, unit and price."""

    gpu: str
    days: int
    quantity: Decimal
    unit_price: Decimal
    unit: str = "C62"  # UN/ECE rec. 20: one (a lot); HUR would be hours
    total: Decimal | None = None  # price x quantity unless given
    name: str = ""


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
    tax_overrides: dict[str, Decimal] = field(default_factory=dict)  # "rate", "amount" of the category


def example_lines() -> list[Line]:
    """What inputs/example committed: one rtx-4090 lot and one b200 lot of 2 GPUs, 7 days each."""
    return [Line("rtx-4090", 7, Decimal("1"), Decimal("110.00"), name="IteraGPU RTX 4090, 7-day package"),
            Line("b200", 7, Decimal("1"), Decimal("2071.00"), name="IteraGPU B200 (lot of 2 GPUs), 7-day package")]


def _total(line: Line) -> Decimal:
    return line.total if line.total is not None else (line.unit_price * line.quantity).quantize(Decimal("0.01"))


def cii_xml(invoice: Invoice) -> bytes:
    """The invoice as Factur-X EN 16931 CII XML, checked against the factur-x library's XSD."""
    doc = Document()
    doc.context.guideline_parameter.id = PROFILE
    doc.header.id = invoice.number
    doc.header.type_code = invoice.type_code
    doc.header.issue_date_time = invoice.issued
    doc.trade.agreement.seller.name = "IteraGPU (test fixture)"
    doc.trade.agreement.seller.address.country_id = "FR"
    doc.trade.agreement.buyer.name = "Example Org (test fixture)"
    doc.trade.agreement.buyer.address.country_id = "DE"
    doc.trade.settlement.currency_code = invoice.currency
    doc.trade.settlement.payment_means.type_code = "30"
    net = Decimal("0.00")
    for number, line in enumerate(invoice.lines, start=1):
        item = LineItem()
        item.document.line_id = str(number)
        item.product.seller_assigned_id = line.gpu
        item.product.name = line.name or f"{line.gpu}, {line.days}-day package"
        characteristic = ProductCharacteristic()
        characteristic.description = "duration_days"
        characteristic.value = str(line.days)
        item.product.characteristics.add(characteristic)
        item.agreement.net.amount = line.unit_price
        item.delivery.billed_quantity = (line.quantity, line.unit)
        item.settlement.trade_tax.type_code = "VAT"
        item.settlement.trade_tax.category_code = "S"
        item.settlement.trade_tax.rate_applicable_percent = invoice.vat_percent
        item.settlement.monetary_summation.total_amount = _total(line)
        doc.trade.items.add(item)
        net += _total(line)
    vat = (net * invoice.vat_percent / 100).quantize(Decimal("0.01"))
    tax = ApplicableTradeTax()
    tax.calculated_amount = invoice.tax_overrides.get("amount", vat)
    tax.basis_amount = net
    tax.type_code = "VAT"
    tax.category_code = "S"
    tax.rate_applicable_percent = invoice.tax_overrides.get("rate", invoice.vat_percent)
    doc.trade.settlement.trade_tax.add(tax)
    totals = doc.trade.settlement.monetary_summation
    totals.line_total = net
    totals.tax_basis_total = invoice.extra_totals.get("tax_basis_total", net)
    totals.tax_total = (invoice.extra_totals.get("tax_total", vat), invoice.currency)
    totals.grand_total = invoice.extra_totals.get("grand_total", net + vat)
    if invoice.rounding is not None:
        totals.rounding_amount = invoice.rounding
    if invoice.prepaid is not None:
        totals.prepaid_total = invoice.prepaid
    due = net + vat - (invoice.prepaid or 0) + (invoice.rounding or 0)  # EN 16931 BR-CO-16
    totals.due_amount = invoice.extra_totals.get("due_amount", due)
    xml: bytes = doc.serialize(schema="FACTUR-X_EN16931")
    facturx.xml_check_xsd(xml, flavor="factur-x", level="en16931")
    return xml


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
                                              level="en16931", check_xsd=True)
    return pdf


if __name__ == "__main__":
    Path(sys.argv[1]).write_bytes(facturx_pdf(Invoice(example_lines())))
