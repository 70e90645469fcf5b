"""An invoice's tax breakdown tied to its lines (EN 16931 BR-S-08 and siblings), and every amount in its currency.

The sums of generator.invoice.money hold for any breakdown: a category whose basis is inflated above the net,
or a category stated twice, raises the tax, the gross and the amount due with every total adding up. Here each
category (its code and rate) is stated once, its basis is exactly the sum of the net amounts of the lines of
that category plus the document's charges less its allowances of that category, each line's category is one
the breakdown states, and every amount is in the invoice's currency: only the tax total may be stated a second
time, in the tax currency (TaxCurrencyCode, BT-6 and BT-111). `read_*` run in the reader's bounded child.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from generator.invoice.document import DocumentCharge, ForeignAmount, Invoice
from generator.invoice.money import InvoiceFinding, decimal_of, given

MAX_CHARGES = 10_000  # the document's allowances and charges read
MAX_FOREIGN = 20  # amounts in another currency quoted one by one; the rest are counted
# The EN 16931 rule tying each category's taxable amount to its lines (the category code -> the rule's name).
BASIS_RULES = {"S": "BR-S-08", "Z": "BR-Z-08", "E": "BR-E-08", "AE": "BR-AE-08", "K": "BR-IC-08", "G": "BR-G-08",
               "O": "BR-O-08", "L": "BR-IG-08", "M": "BR-IP-08"}
SUMMATION = "SpecifiedTradeSettlementHeaderMonetarySummation"
LINE_ITEM = "IncludedSupplyChainTradeLineItem"


def _local(tag: Any) -> str:
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


def read_charges(settlement: Any, ns: dict[str, str]) -> list[dict[str, Any]]:
    """In the child: the document's allowances and charges with their tax categories, as strings."""
    def text(node: Any, path: str) -> str | None:
        found = node.find(path, ns)
        return None if found is None or found.text is None else found.text.strip()

    entries = settlement.findall("ram:SpecifiedTradeAllowanceCharge", ns)
    if len(entries) > MAX_CHARGES:
        raise ValueError(f"it has {len(entries)} document allowances and charges (at most {MAX_CHARGES} are read)")
    out = []
    for entry in entries:
        amount = decimal_of(text(entry, "ram:ActualAmount"), "ActualAmount")
        rate = decimal_of(text(entry, "ram:CategoryTradeTax/ram:RateApplicablePercent"), "RateApplicablePercent")
        out.append({"charge": (text(entry, "ram:ChargeIndicator/{*}Indicator") or "").lower() == "true",
                    "amount": None if amount is None else str(amount),
                    "category": text(entry, "ram:CategoryTradeTax/ram:CategoryCode"),
                    "rate": None if rate is None else str(rate)})
    return out


def read_foreign(root: Any, items: list[Any], currency: str | None, tax_currency: str | None) -> dict[str, Any]:
    """In the child: the amounts whose currencyID is not the invoice's currency (the first MAX_FOREIGN, and how
    many in all), but for one header tax total in the tax currency, when that is another currency."""
    positions = {item: number for number, item in enumerate(items, start=1)}
    shown: list[dict[str, Any]] = []
    count, tax_total_seen = 0, False
    for element in root.iter():
        written = element.get("currencyID") if isinstance(element.tag, str) else None
        if written is None or written.strip() == (currency or ""):
            continue
        name = _local(element.tag)
        parent = element.getparent()
        if name == "TaxTotalAmount" and not tax_total_seen and tax_currency not in (None, currency) and \
                written.strip() == tax_currency and parent is not None and _local(parent.tag) == SUMMATION:
            tax_total_seen = True  # BT-111: the tax total in the tax currency, once
            continue
        count += 1
        if len(shown) < MAX_FOREIGN:
            line = next((positions[a] for a in element.iterancestors() if _local(a.tag) == LINE_ITEM
                         and a in positions), None)
            shown.append({"line": line, "name": name, "currency": written})
    return {"foreign": shown, "foreign_count": count}


def invoice_fields(answer: dict[str, Any]) -> dict[str, Any]:
    """The reader's answer as the Invoice's fields of this module: document charges, amounts in another
    currency, the tax currency."""
    def dec(value: Any) -> Decimal | None:
        return None if value is None else Decimal(value)

    return {"charges": tuple(DocumentCharge(c["charge"], dec(c["amount"]), c["category"], dec(c["rate"]))
                             for c in answer["charges"]),
            "foreign": tuple(ForeignAmount(f["line"], f["name"], f["currency"]) for f in answer["foreign"]),
            "foreign_count": answer["foreign_count"], "tax_currency": answer["tax_currency"]}


def _key(category: str | None, rate: Decimal | None) -> tuple[str, Decimal]:
    """A category as the breakdown groups it: its code and its rate (20 and 20.00 are one; no rate is 0)."""
    return (category or "").strip().upper(), Decimal(0) if rate is None else rate


def _named(category: str | None, rate: Decimal | None) -> str:
    return f"{given(category)} at {given(rate)} %"


@dataclass
class _Basis:
    """What a category's basis is made of: its lines' net amounts (and how many), its document allowances and
    charges."""

    lines: Decimal = Decimal("0.00")
    count: int = 0
    allowances: Decimal = Decimal("0.00")
    charges: Decimal = Decimal("0.00")

    @property
    def total(self) -> Decimal:
        return self.lines - self.allowances + self.charges


def _bases(invoice: Invoice) -> dict[tuple[str, Decimal], _Basis]:
    """Per category (code and rate): the lines counted in the totals, the document's allowances and charges."""
    sums: dict[tuple[str, Decimal], _Basis] = {}
    for line in (x for x in invoice.lines if x.counted):
        basis = sums.setdefault(_key(line.tax_category, line.tax_rate), _Basis())
        basis.lines += line.total or 0
        basis.count += 1
    for c in invoice.charges:
        basis = sums.setdefault(_key(c.category, c.rate), _Basis())
        if c.charge:
            basis.charges += c.amount or 0
        else:
            basis.allowances += c.amount or 0
    return sums


def breakdown_findings(invoice: Invoice) -> list[InvoiceFinding]:
    """Each category once; its basis its lines plus its charges less its allowances, to the cent (BR-S-08 and
    siblings); each line's (and document allowance's or charge's) category one the breakdown states."""
    out: list[InvoiceFinding] = []
    bases, stated = _bases(invoice), [_key(t.category, t.rate) for t in invoice.taxes]
    header = "; ".join(_named(t.category, t.rate) for t in invoice.taxes) or "no category"
    for index, (tax, key) in enumerate(zip(invoice.taxes, stated, strict=True)):
        what = f"tax category {_named(tax.category, tax.rate)}"
        if stated.count(key) > 1 and stated.index(key) == index:
            out.append(InvoiceFinding("tax-category-repeated", None, "ApplicableTradeTax/CategoryCode",
                                      f"{_named(tax.category, tax.rate)}, {stated.count(key)} times", "once",
                                      f"{what} is stated {stated.count(key)} times in the tax breakdown: each category "
                                      "(code and rate) is stated once, with the whole basis of its lines (EN 16931 "
                                      "BG-23)", "allowed"))
        basis = bases.get(key, _Basis())
        if tax.basis != basis.total:
            rule = BASIS_RULES.get(key[0], "BR-S-08 and its siblings")
            made = "no line of this category" if not basis.count else f"its {basis.count} line(s), {basis.lines}"
            out.append(InvoiceFinding("tax-basis-inconsistent", None, "ApplicableTradeTax/BasisAmount",
                                      given(tax.basis), str(basis.total),
                                      f"{what}: its basis ({given(tax.basis)}) is not {made}, less its document "
                                      f"allowances ({basis.allowances}) plus its charges ({basis.charges}): "
                                      f"{basis.total} (EN 16931 {rule})", "recomputed"))
    return out + _unstated(invoice, set(stated), header)


def _unstated(invoice: Invoice, stated: set[tuple[str, Decimal]], header: str) -> list[InvoiceFinding]:
    """The lines, and document allowances or charges, of a category the breakdown does not state."""
    out = []
    for line in (x for x in invoice.lines if x.counted):
        if _key(line.tax_category, line.tax_rate) not in stated:
            out.append(InvoiceFinding("line-tax-category", line.position, "SpecifiedLineTradeSettlement/"
                                      "ApplicableTradeTax", _named(line.tax_category, line.tax_rate), header,
                                      f"invoice line {line.line_id or line.position} is taxed as "
                                      f"{_named(line.tax_category, line.tax_rate)}, a category the invoice's tax "
                                      f"breakdown does not state ({header}): its tax is in no total (EN 16931 "
                                      "BR-S-08 and its siblings)", "allowed"))
    for c in invoice.charges:
        if _key(c.category, c.rate) not in stated:
            what = "charge" if c.charge else "allowance"
            out.append(InvoiceFinding("line-tax-category", None, "SpecifiedTradeAllowanceCharge/CategoryTradeTax",
                                      _named(c.category, c.rate), header,
                                      f"a document {what} of {given(c.amount)} is taxed as "
                                      f"{_named(c.category, c.rate)}, a category the invoice's tax breakdown does not "
                                      f"state ({header})", "allowed"))
    return out


def currency_findings(invoice: Invoice) -> list[InvoiceFinding]:
    """Each amount marked with another currency than the invoice's (the tax total in the tax currency apart)."""
    out = []
    for index, f in enumerate(invoice.foreign):
        more = invoice.foreign_count - len(invoice.foreign)
        rest = f"; and {more} more amount(s) in another currency" if more > 0 and index == len(invoice.foreign) - 1 \
            else ""
        where = f"invoice line {f.line}'s" if f.line is not None else "the invoice's"
        out.append(InvoiceFinding("amount-currency", f.line, f"{f.name}/@currencyID", f.currency,
                                  given(invoice.currency),
                                  f"{where} {f.name} is marked currencyID=\"{f.currency}\" in an invoice in "
                                  f"{given(invoice.currency)}: every amount is in the invoice's currency; only the tax "
                                  "total may be stated a second time, in the tax currency TaxCurrencyCode "
                                  f"({invoice.tax_currency or 'the invoice declares none'}){rest}", "allowed"))
    return out
