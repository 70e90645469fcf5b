"""The invoice as the reader gives it: its lines, header taxes, document charges, foreign amounts and format.

Frozen records and nothing else: the reader (generator.invoice.read) builds them, and the sums (`money`), the tax
breakdown (`breakdown`) and the reconciliation read them, so that each of those imports the records one way.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class InvoiceTax:
    """One tax category of the invoice's header (ApplicableTradeTax): its category code, rate in percent,
    basis and the tax it states, as written."""

    category: str | None
    rate: Decimal | None
    basis: Decimal | None
    amount: Decimal | None


@dataclass(frozen=True)
class DocumentCharge:
    """A document-level allowance or charge (EN 16931 BG-20, BG-21): its amount and tax category, as written."""

    charge: bool
    amount: Decimal | None
    category: str | None
    rate: Decimal | None


@dataclass(frozen=True)
class ForeignAmount:
    """An amount whose currencyID is not the invoice's: the line it is on (None: the header), the element's name
    and the currencyID as written."""

    line: int | None
    name: str
    currency: str


@dataclass(frozen=True)
class InvoiceLine:
    """One billed line as the CII states it: its position and line ID, the item's IDs (the seller's, the
    buyer's, a global one such as a GTIN), name and description, the item attribute `duration_days` (gpu-audit's
    own convention), quantity and unit, net unit price, line total (net) and the line's allowances and charges."""

    position: int
    line_id: str
    seller_id: str | None
    name: str
    days: int | None
    quantity: Decimal | None
    unit: str | None
    unit_price: Decimal | None
    total: Decimal | None
    buyer_id: str | None = None
    global_id: str | None = None
    global_scheme: str | None = None  # the GlobalID's schemeID (0160: a GTIN)
    description: str = ""
    allowances: Decimal | None = None
    charges: Decimal | None = None
    allowance_reasons: tuple[str, ...] = ()
    status: str | None = None  # LineStatusReasonCode (Factur-X EXTENDED): DETAIL and INFORMATION are not summed
    tax_category: str | None = None  # the line's tax category code and rate (BT-151, BT-152)
    tax_rate: Decimal | None = None

    @property
    def counted(self) -> bool:
        """Whether the line bills an amount of its own: not a sub-line (DETAIL) of a group line, nor a line for
        information (INFORMATION), which the EXTENDED profile leaves out of the totals."""
        return (self.status or "").upper() not in ("DETAIL", "INFORMATION")


@dataclass(frozen=True)
class OtherFormat:
    """A document in a format gpu-audit does not reconcile, which the factur-x library reads (UBL, Order-X): its
    format's token (as --json writes it) and name, its root element and namespace."""

    format: str
    name: str
    root: str
    namespace: str


@dataclass(frozen=True)
class Invoice:
    """The invoice's number, currency, lines and totals (net, tax and gross kept apart)."""

    source: str
    number: str
    type_code: str | None  # UNTDID 1001: 380 a commercial invoice, 381 a credit note, ...
    currency: str | None
    lines: tuple[InvoiceLine, ...]
    net_total: Decimal | None
    tax_total: Decimal | None
    grand_total: Decimal | None
    prepaid: Decimal | None
    due: Decimal | None
    rounding: Decimal | None = None
    taxes: tuple[InvoiceTax, ...] = ()  # the header's tax categories
    line_total: Decimal | None = None  # the sum of the line totals as the header states it (BT-106)
    allowance_total: Decimal | None = None  # the document's allowances (BT-107) and charges (BT-108)
    charge_total: Decimal | None = None
    charges: tuple[DocumentCharge, ...] = ()  # the document's allowances and charges, with their tax categories
    foreign: tuple[ForeignAmount, ...] = ()  # amounts marked in another currency (the first few), and how many
    foreign_count: int = 0
    tax_currency: str | None = None  # TaxCurrencyCode (BT-6)
    document_format: str = "cii"  # "cii" (Factur-X, ZUGFeRD 2.x), "zugferd-1.0", or another format's token
    other_format: OtherFormat | None = None  # a document the factur-x library reads and gpu-audit does not reconcile
