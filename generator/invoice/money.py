"""The money an invoice asks for: its net, tax categories, prepaid, rounding and amount due, read and added up.

EN 16931 states how an invoice's amounts hang together (BR-CO-10, BR-CO-13 to BR-CO-17) and the XSD checks
none of it: an invoice whose lines match the committed packages can still ask for any amount due. Every amount
is compared exactly as written, to the cent, with no tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext
from typing import Any

from generator.core.codes.registry import registered
from generator.invoice.document import Invoice

MAX_DIGITS = 24  # of an amount or a quantity: more is no invoice (and would overflow decimal arithmetic)
CENT = Decimal("0.01")
# EN 16931's RoundingAmount (BT-114) rounds the amount due for payment in cash (to 0.05 or a whole unit):
# a matter of cents. One whole unit or more is no rounding but a second, unexplained charge or discount.
MAX_ROUNDING = Decimal("1.00")
RATE_RANGE = (Decimal(0), Decimal(100))  # a tax rate is a share of the basis: 0 to 100 %
NOT_GIVEN = "not given"


@dataclass(frozen=True)
class InvoiceFinding:
    """A difference between the invoice and the decision: code, the invoice line (None for the invoice as a
    whole, or a package nobody billed), the field, what was billed and what the decision committed; for the
    invoice's own sums `committed` is what they add up to, or what is allowed, as `against` says."""

    code: str
    line: int | None
    field: str
    billed: str | None
    committed: str | None
    message: str
    against: str = "committed"  # what `committed` is: "committed", "recomputed" or "allowed"

    def __post_init__(self) -> None:
        registered(self.code, "invoice finding")  # UnregisteredCode for a code the registry does not hold


def given(value: object) -> str:
    """A value as a reader reads it: "not given" where the invoice (or the decision) gives none."""
    return NOT_GIVEN if value is None or value == "" else str(value)


def decimal_of(text: str | None, label: str) -> Decimal | None:
    """An amount as written, or None when absent or no number; a number of more than MAX_DIGITS digits is
    refused (ValueError), since no invoice has one and exact arithmetic on it would be unbounded."""
    if text is None:
        return None
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        return None
    if not value.is_finite() or len(value.as_tuple().digits) > MAX_DIGITS:
        raise ValueError(f"its {label} {text.strip()[:40]} has more than {MAX_DIGITS} digits")
    return value


def money_fields(settlement: Any, ns: dict[str, str], currency: str | None) -> dict[str, Any]:
    """From the CII's ApplicableHeaderTradeSettlement: the rounding, the tax total in the invoice's currency
    (BT-110; another currency's total, BT-111, is the tax currency's) and the tax categories, as strings."""
    def text(node: Any, path: str) -> str | None:
        found = node.find(path, ns)
        return None if found is None or found.text is None else found.text

    def amount(node: Any, path: str) -> str | None:
        value = decimal_of(text(node, path), path.rsplit(":", 1)[-1])
        return None if value is None else str(value)

    totals = "ram:SpecifiedTradeSettlementHeaderMonetarySummation"
    own = [t for t in settlement.findall(f"{totals}/ram:TaxTotalAmount", ns)
           if t.get("currencyID") in (None, currency)]
    if len(own) > 1:
        raise ValueError(f"it states {len(own)} tax totals in its currency {currency}: which one is meant is "
                         "ambiguous")
    taxes = [{"category": text(t, "ram:CategoryCode"), "rate": amount(t, "ram:RateApplicablePercent"),
              "basis": amount(t, "ram:BasisAmount"), "amount": amount(t, "ram:CalculatedAmount")}
             for t in settlement.findall("ram:ApplicableTradeTax", ns)]
    tax_total = decimal_of(own[0].text, "TaxTotalAmount") if own else None
    return {"rounding": amount(settlement, f"{totals}/ram:RoundingAmount"), "taxes": taxes,
            "tax_total": None if tax_total is None else str(tax_total)}


def _finding(code: str, name: str, billed: Decimal | None, computed: Decimal | str | None,
             message: str) -> InvoiceFinding:
    """An invoice-wide finding: `computed` is a recomputed amount, or (a string) the range allowed."""
    return InvoiceFinding(code, None, name, None if billed is None else str(billed),
                          None if computed is None else str(computed), message,
                          "allowed" if isinstance(computed, str) else "recomputed")


def due_findings(invoice: Invoice) -> list[InvoiceFinding]:
    """The amount due against the gross (EN 16931 BR-CO-15, BR-CO-16): due = gross - prepaid + rounding,
    prepaid never negative, rounding within cents, and no amount due left unstated."""
    out: list[InvoiceFinding] = []
    net, tax, gross, due = invoice.net_total, invoice.tax_total or Decimal(0), invoice.grand_total, invoice.due
    prepaid, rounding = invoice.prepaid or Decimal(0), invoice.rounding or Decimal(0)
    if net is not None and gross is not None and gross != net + tax:
        out.append(_finding("gross-inconsistent", "GrandTotalAmount", gross, net + tax,
                            f"the invoice's gross total {gross} is not its net {net} plus its tax {tax}"))
    if prepaid < 0:
        out.append(_finding("prepaid-negative", "TotalPrepaidAmount", prepaid, "0.00 or more",
                            f"the prepaid amount {prepaid} is negative: a payment already made is never below zero, "
                            f"and a negative one raises the amount due above the gross total ({given(gross)})"))
    if abs(rounding) >= MAX_ROUNDING:
        out.append(_finding("rounding-implausible", "RoundingAmount", rounding, f"less than {MAX_ROUNDING} either way",
                            f"the rounding amount {rounding} is not a rounding: EN 16931 rounds the amount due for "
                            f"payment in cash, by less than {MAX_ROUNDING}"))
    if due is None or gross is None:
        missing = "DuePayableAmount" if due is None else "GrandTotalAmount"
        out.append(_finding("due-missing", missing, None, None if gross is None else gross - prepaid + rounding,
                            f"the invoice states no {missing}: the amount to be paid cannot be checked"))
    elif due != gross - prepaid + rounding:
        out.append(_finding("due-inconsistent", "DuePayableAmount", due, gross - prepaid + rounding,
                            f"the amount due {due} is not the gross total {gross} less what was prepaid ({prepaid}) "
                            f"plus the rounding ({rounding}): {gross - prepaid + rounding} (EN 16931 BR-CO-16)"))
    return out


def tax_findings(invoice: Invoice) -> list[InvoiceFinding]:
    """The tax: each category's rate a real rate (0 to 100 %), its tax its basis times its rate rounded half up
    to the cent (BR-CO-17, compared exactly: the official schematron's tolerance of one whole unit would let a
    cent-level forgery through), and the tax total the sum of the categories (BR-CO-14)."""
    out: list[InvoiceFinding] = []
    field = "ApplicableTradeTax"
    for tax in invoice.taxes:
        what = f"tax category {given(tax.category)}"
        if tax.rate is not None and not RATE_RANGE[0] <= tax.rate <= RATE_RANGE[1]:
            out.append(_finding("tax-rate", f"{field}/RateApplicablePercent", tax.rate, "0 to 100",
                                f"{what} states a rate of {tax.rate} %: a tax rate is 0 to 100 %"))
            continue
        with localcontext() as exact:
            exact.prec = 4 * MAX_DIGITS  # the product of two numbers of MAX_DIGITS digits, exactly
            computed = None if tax.basis is None else \
                (tax.basis * (tax.rate or 0) / 100).quantize(CENT, rounding=ROUND_HALF_UP)
        if computed is None or tax.amount != computed:
            out.append(_finding("tax-category-inconsistent", f"{field}/CalculatedAmount", tax.amount, computed,
                                f"{what}: its tax ({given(tax.amount)}) is not its basis ({given(tax.basis)}) x its "
                                f"rate {tax.rate or 0} % = {given(computed)} (rounded to the cent, EN 16931 "
                                "BR-CO-17)"))
    total = sum((t.amount for t in invoice.taxes if t.amount is not None), Decimal("0.00"))
    if (invoice.tax_total or 0) != total:  # no total stated is no tax, as BR-CO-15 reads it
        out.append(_finding("tax-total-inconsistent", "TaxTotalAmount", invoice.tax_total, total,
                            f"the tax total ({given(invoice.tax_total)}) is not the sum of its {len(invoice.taxes)} "
                            f"tax categories, {total} (EN 16931 BR-CO-14)"))
    return out


def net_findings(invoice: Invoice) -> list[InvoiceFinding]:
    """The net: the header's sum of line totals is the sum of the lines (EN 16931 BR-CO-10), and the total net of
    tax is that sum less the document's allowances plus its charges (BR-CO-13). A line billed twice under a net
    total that equals the committed one is caught here."""
    out: list[InvoiceFinding] = []
    totals = [line.total for line in invoice.lines if line.counted]  # EXTENDED: sub-lines are in their group's
    lines = sum((t for t in totals if t is not None), Decimal("0.00"))
    if invoice.line_total is not None and None not in totals and invoice.line_total != lines:
        out.append(_finding("net-inconsistent", "LineTotalAmount", invoice.line_total, lines,
                            f"the invoice's sum of line totals ({invoice.line_total}) is not the sum of its "
                            f"{len(totals)} line(s), {lines} (EN 16931 BR-CO-10)"))
    allowances, charges = invoice.allowance_total or Decimal(0), invoice.charge_total or Decimal(0)
    if invoice.line_total is not None and invoice.net_total is not None and \
            invoice.net_total != invoice.line_total - allowances + charges:
        out.append(_finding("net-inconsistent", "TaxBasisTotalAmount", invoice.net_total,
                            invoice.line_total - allowances + charges,
                            f"the invoice's total net of tax ({invoice.net_total}) is not its sum of line totals "
                            f"({invoice.line_total}) less its allowances ({allowances}) plus its charges "
                            f"({charges}): {invoice.line_total - allowances + charges} (EN 16931 BR-CO-13)"))
    return out
