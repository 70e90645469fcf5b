"""Edges of an invoice's own sums (generator.invoice.money): one cent, exactly at a limit, a total not given."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from typing import Any

import pytest
from lxml import etree

from generator.invoice.document import Invoice, InvoiceLine, InvoiceTax
from generator.invoice.money import (
    InvoiceFinding,
    decimal_of,
    due_findings,
    given,
    money_fields,
    net_findings,
    tax_findings,
)

D = Decimal
# An amount has at most 24 digits (generator.invoice.money.MAX_DIGITS): written out here, so that the tests pin it.
RAM = "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"
NS = {"ram": RAM}


def invoice(**changes: Any) -> Invoice:
    """A consistent invoice of 100.00 net, 20.00 tax, 120.00 due; `changes` set fields."""
    base = Invoice(source="t.xml", number="N-1", type_code="380", currency="USD", lines=(), net_total=D("100.00"),
                   tax_total=D("20.00"), grand_total=D("120.00"), prepaid=None, due=D("120.00"),
                   taxes=(InvoiceTax("S", D("20.00"), D("100.00"), D("20.00")),))
    return dataclasses.replace(base, **changes)


def codes(findings: list[InvoiceFinding]) -> list[str]:
    return [f.code for f in findings]


def line(total: str | None, status: str | None = None) -> InvoiceLine:
    return InvoiceLine(position=1, line_id="1", seller_id=None, name="x", days=None, quantity=D(1), unit="C62",
                       unit_price=None if total is None else D(total), total=None if total is None else D(total),
                       status=status)


def test_the_findings_and_tax_categories_are_frozen_values() -> None:
    finding = InvoiceFinding("total-differs", None, "f", "1", "2", "m")
    tax = InvoiceTax("S", D(20), D(100), D(20))
    for value, name in ((finding, "code"), (tax, "rate")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, name, None)
    assert len({finding, finding, tax, tax}) == 2  # hashable: a finding is a value


@pytest.mark.parametrize(("value", "expected"), [(None, "not given"), ("", "not given"), ("0", "0"), (0, "0"),
                                                 ("A-7", "A-7"), (D("0.00"), "0.00")])
def test_a_value_not_given_reads_so_and_any_other_as_written(value: object, expected: str) -> None:
    assert given(value) == expected


@pytest.mark.parametrize(("text", "expected"), [(None, None), ("abc", None), (" 110.00\n", D("110.00")),
                                                ("1" * 24, D("1" * 24)),
                                                ("0." + "0" * 30 + "1", D("1E-31"))])
def test_an_amount_is_read_as_written_up_to_its_digits(text: str | None, expected: Decimal | None) -> None:
    value = decimal_of(text, "amount")
    assert value == expected and (value is None or str(value) == str(expected))


@pytest.mark.parametrize(("text", "shown"), [("1" * 25, "1" * 25),
                                             (" " + "9" * 50, "9" * 40), ("Infinity", "Infinity"), ("NaN", "NaN"),
                                             ("-Infinity", "-Infinity")])
def test_an_amount_of_one_digit_more_or_no_finite_number_is_refused_showing_its_first_40_characters(
        text: str, shown: str) -> None:
    with pytest.raises(ValueError) as refused:
        decimal_of(text, "LineTotalAmount")
    assert str(refused.value) == f"its LineTotalAmount {shown} has more than 24 digits"


def settlement(totals: str, taxes: str = "") -> Any:
    summation = f"<ram:SpecifiedTradeSettlementHeaderMonetarySummation>{totals}" \
                "</ram:SpecifiedTradeSettlementHeaderMonetarySummation>"
    return etree.fromstring(f'<ram:S xmlns:ram="{RAM}">{taxes}{summation}</ram:S>')


def test_the_money_fields_read_the_rounding_the_categories_and_the_total_in_the_invoices_currency() -> None:
    taxes = ("<ram:ApplicableTradeTax><ram:CalculatedAmount>20.00</ram:CalculatedAmount>"
             "<ram:BasisAmount> 100.00 </ram:BasisAmount><ram:CategoryCode>S</ram:CategoryCode>"
             "<ram:RateApplicablePercent>20</ram:RateApplicablePercent></ram:ApplicableTradeTax>"
             "<ram:ApplicableTradeTax><ram:CategoryCode/></ram:ApplicableTradeTax>")
    totals = ('<ram:RoundingAmount>0.05</ram:RoundingAmount><ram:TaxTotalAmount currencyID="USD">20.00'
              '</ram:TaxTotalAmount><ram:TaxTotalAmount currencyID="EUR">18.40</ram:TaxTotalAmount>')
    assert money_fields(settlement(totals, taxes), NS, "USD") == {
        "rounding": "0.05", "tax_total": "20.00",
        "taxes": [{"category": "S", "rate": "20", "basis": "100.00", "amount": "20.00"},
                  {"category": None, "rate": None, "basis": None, "amount": None}]}
    # a total without currencyID is the invoice's; none given, nothing stated
    assert money_fields(settlement("<ram:TaxTotalAmount>7.00</ram:TaxTotalAmount>"), NS, "USD")["tax_total"] == "7.00"
    assert money_fields(settlement("<ram:RoundingAmount/>"), NS, "USD") == {"rounding": None, "taxes": [],
                                                                             "tax_total": None}


def test_two_tax_totals_in_the_invoices_currency_are_ambiguous_and_an_amount_too_long_is_named() -> None:
    two = '<ram:TaxTotalAmount currencyID="USD">1.00</ram:TaxTotalAmount><ram:TaxTotalAmount>2.00</ram:TaxTotalAmount>'
    with pytest.raises(ValueError, match="it states 2 tax totals in its currency USD"):
        money_fields(settlement(two), NS, "USD")
    with pytest.raises(ValueError, match=f"its RoundingAmount {'1' * 25} has"):
        money_fields(settlement(f"<ram:RoundingAmount>{'1' * 25}</ram:RoundingAmount>"), NS, "USD")


@pytest.mark.parametrize("changes", [
    {}, {"tax_total": None, "grand_total": D("100.00"), "due": D("100.00"), "taxes": ()},
    {"prepaid": D("0.00")}, {"prepaid": D("20.00"), "due": D("100.00")}, {"rounding": D("0.99"), "due": D("120.99")},
    {"rounding": D("-0.99"), "due": D("119.01")}, {"due": D("120.0")},
    {"prepaid": D("10.00"), "rounding": D("0.05"), "due": D("110.05")}, {"net_total": None}],
    ids=["consistent", "no-tax", "prepaid-0", "prepaid", "rounding-0.99", "rounding--0.99", "due-120.0",
         "prepaid-and-rounding", "no-net"])
def test_an_amount_due_that_adds_up_is_no_finding(changes: dict[str, Any]) -> None:
    assert due_findings(invoice(**changes)) == []


@pytest.mark.parametrize(("changes", "code", "billed", "committed"), [
    ({"grand_total": D("120.01"), "due": D("120.01")}, "gross-inconsistent", "120.01", "120.00"),
    ({"tax_total": None}, "gross-inconsistent", "120.00", "100.00"),
    ({"prepaid": D("-0.01"), "due": D("120.01")}, "prepaid-negative", "-0.01", "0.00 or more"),
    ({"rounding": D("1.00"), "due": D("121.00")}, "rounding-implausible", "1.00", "less than 1.00 either way"),
    ({"rounding": D("-1.00"), "due": D("119.00")}, "rounding-implausible", "-1.00", "less than 1.00 either way"),
    ({"due": D("120.01")}, "due-inconsistent", "120.01", "120.00"),
    ({"prepaid": D("10.00"), "rounding": D("0.05"), "due": D("110.04")}, "due-inconsistent", "110.04", "110.05"),
    ({"prepaid": D("10.00"), "due": D("130.00")}, "due-inconsistent", "130.00", "110.00"),
    ({"rounding": D("0.05"), "due": D("119.95")}, "due-inconsistent", "119.95", "120.05"),
    ({"due": None, "prepaid": D("10.00"), "rounding": D("0.05")}, "due-missing", None, "110.05"),
    ({"grand_total": None, "net_total": None}, "due-missing", None, None)],
    ids=["gross-one-cent", "tax-total-missing", "prepaid-one-cent-below-0", "rounding-1.00", "rounding--1.00",
         "due-one-cent", "due-with-prepaid-and-rounding", "prepaid-added", "rounding-subtracted", "due-missing",
         "gross-missing"])
def test_an_amount_due_one_cent_or_one_unit_off_is_one_finding(changes: dict[str, Any], code: str,
                                                               billed: str | None, committed: str | None) -> None:
    (finding,) = due_findings(invoice(**changes))
    assert (finding.code, finding.billed, finding.committed) == (code, billed, committed)
    assert finding.line is None and finding.against == ("allowed" if code in ("prepaid-negative",
                                                                             "rounding-implausible") else "recomputed")


def test_the_amount_due_findings_say_which_amount_and_what_it_should_be() -> None:
    (gross,) = due_findings(invoice(grand_total=D("120.01"), due=D("120.01")))
    assert gross.field == "GrandTotalAmount"
    assert gross.message == "the invoice's gross total 120.01 is not its net 100.00 plus its tax 20.00"
    (due,) = due_findings(invoice(prepaid=D("10.00"), rounding=D("0.05"), due=D("110.00")))
    assert due.message == ("the amount due 110.00 is not the gross total 120.00 less what was prepaid (10.00) plus "
                           "the rounding (0.05): 110.05 (EN 16931 BR-CO-16)")
    (missing,) = due_findings(invoice(due=None))
    assert (missing.field, missing.message) == ("DuePayableAmount", "the invoice states no DuePayableAmount: the "
                                                "amount to be paid cannot be checked")
    (no_gross,) = due_findings(invoice(grand_total=None))
    assert (no_gross.field, no_gross.committed) == ("GrandTotalAmount", None)
    (prepaid,) = due_findings(invoice(prepaid=D("-5.00"), due=D("125.00")))
    assert "above the gross total (120.00)" in prepaid.message


@pytest.mark.parametrize(("tax", "message"), [
    (InvoiceTax("Z", D("0"), D("100.00"), D("0.00")), None),
    (InvoiceTax("S", D("100"), D("100.00"), D("100.00")), None),
    (InvoiceTax("S", D("0.5"), D("100.00"), D("0.50")), None),
    (InvoiceTax("S", D("99.5"), D("100.00"), D("99.50")), None),
    (InvoiceTax("S", D("10"), D("0.25"), D("0.03")), None),  # 0.025: half up to 0.03, never half even to 0.02
    (InvoiceTax("S", D("10"), D("-0.25"), D("-0.03")), None),
    (InvoiceTax("E", None, D("100.00"), D("0.00")), None),
    (InvoiceTax("S", D("-0.01"), D("100.00"), D("0.00")), "tax category S states a rate of -0.01 %: a tax rate is 0 "
                                                          "to 100 %"),
    (InvoiceTax("S", D("100.01"), D("100.00"), D("100.01")), "tax category S states a rate of 100.01 %: a tax rate "
                                                             "is 0 to 100 %"),
    (InvoiceTax("S", D("20"), D("0.25"), D("0.06")), "tax category S: its tax (0.06) is not its basis (0.25) x its "
                                                     "rate 20 % = 0.05 (rounded to the cent, EN 16931 BR-CO-17)"),
    (InvoiceTax("S", D("20"), D("100.00"), D("20.01")), "tax category S: its tax (20.01) is not its basis (100.00) x "
                                                        "its rate 20 % = 20.00 (rounded to the cent, EN 16931 "
                                                        "BR-CO-17)"),
    (InvoiceTax("E", None, D("100.00"), D("1.00")), "tax category E: its tax (1.00) is not its basis (100.00) x its "
                                                    "rate 0 % = 0.00 (rounded to the cent, EN 16931 BR-CO-17)"),
    (InvoiceTax(None, D("20"), None, None), "tax category not given: its tax (not given) is not its basis (not "
                                            "given) x its rate 20 % = not given (rounded to the cent, EN 16931 "
                                            "BR-CO-17)")],
    ids=["rate-0", "rate-100", "rate-0.5", "rate-99.5", "half-up", "half-up-negative", "rate-not-given",
         "rate-below-0", "rate-above-100", "one-cent-over", "one-cent-over-20", "exempt-taxed", "no-basis"])
def test_each_tax_category_its_rate_0_to_100_and_its_tax_to_the_cent(tax: InvoiceTax, message: str | None) -> None:
    taxes = [t for t in (tax.amount,) if t is not None]
    findings = tax_findings(invoice(taxes=(tax,), tax_total=sum(taxes, D("0.00")) if taxes else None))
    assert [f.message for f in findings] == ([] if message is None else [message])
    if findings and message is not None:
        rate = "states a rate" in message
        assert findings[0].code == ("tax-rate" if rate else "tax-category-inconsistent")
        assert findings[0].billed == (str(tax.rate) if rate else None if tax.amount is None else str(tax.amount))


@pytest.mark.parametrize(("taxes", "total", "committed"), [
    ((), D("0.01"), "0.00"), ((D("20.00"), D("5.00")), D("25.01"), "25.00"), ((D("20.00"), D("5.00")), None, "25.00"),
    ((D("20.00"), None), D("0.00"), "20.00")], ids=["none-but-a-cent", "two-one-cent", "total-missing",
                                                     "one-amount-missing"])
def test_a_tax_total_that_is_not_the_sum_of_its_categories_is_a_finding(
        taxes: tuple[Decimal | None, ...], total: Decimal | None, committed: str) -> None:
    categories = tuple(InvoiceTax("S", D("20"), None if t is None else t * 5, t) for t in taxes)
    findings = [f for f in tax_findings(invoice(taxes=categories, tax_total=total))
                if f.code == "tax-total-inconsistent"]
    assert [(f.billed, f.committed) for f in findings] == [(None if total is None else str(total), committed)]
    assert findings[0].message == (f"the tax total ({given(total)}) is not the sum of its {len(taxes)} tax categories, "
                                   f"{committed} (EN 16931 BR-CO-14)")


@pytest.mark.parametrize(("taxes", "total"), [((), None), ((), D("0")), ((D("20.00"), D("5.00")), D("25.00")),
                                              ((None,), None)])
def test_a_tax_total_that_is_the_sum_of_its_categories_or_none_of_no_tax_is_no_finding(
        taxes: tuple[Decimal | None, ...], total: Decimal | None) -> None:
    categories = tuple(InvoiceTax("S", D("20"), None if t is None else t * 5, t) for t in taxes)
    assert "tax-total-inconsistent" not in codes(tax_findings(invoice(taxes=categories, tax_total=total)))


@pytest.mark.parametrize(("lines", "changes", "expected"), [
    (("60.00", "40.00"), {"line_total": D("100.00")}, []),
    (("60.00", "40.00"), {"line_total": None}, []),
    # a line without its total: BR-CO-10 cannot be added up
    (("60.00", None), {"line_total": D("60.00"), "net_total": D("60.00")}, []),
    (("60.00", "40.00"), {"line_total": D("100.01"), "net_total": D("100.01")},
     [("LineTotalAmount", "100.01", "100.00")]),
    (("60.00", "40.00"), {"line_total": D("100.00"), "allowance_total": D("10.00"), "net_total": D("90.00")}, []),
    (("60.00", "40.00"), {"line_total": D("100.00"), "charge_total": D("5.00"), "net_total": D("105.00")}, []),
    (("60.00", "40.00"), {"line_total": D("100.00"), "allowance_total": D("10.00"), "charge_total": D("5.00"),
                          "net_total": D("95.00")}, []),
    (("60.00", "40.00"), {"line_total": D("100.00"), "allowance_total": D("10.00"), "net_total": D("100.00")},
     [("TaxBasisTotalAmount", "100.00", "90.00")]),
    (("60.00", "40.00"), {"line_total": D("100.00"), "charge_total": D("5.00"), "net_total": D("95.00")},
     [("TaxBasisTotalAmount", "95.00", "105.00")]),
    (("60.00", "40.00"), {"line_total": D("100.00"), "net_total": D("100.01")},
     [("TaxBasisTotalAmount", "100.01", "100.00")]),
    (("60.00", "40.00"), {"line_total": D("100.00"), "net_total": None}, [])],
    ids=["adds-up", "no-line-total", "a-line-without-total", "one-cent", "allowance", "charge", "both",
         "allowance-not-taken", "charge-not-added", "net-one-cent", "no-net"])
def test_the_sum_of_line_totals_and_the_net_add_up_to_the_cent(
        lines: tuple[str | None, ...], changes: dict[str, Any], expected: list[tuple[str, str, str]]) -> None:
    items = tuple(dataclasses.replace(line(t), position=n) for n, t in enumerate(lines, 1))
    found = net_findings(invoice(lines=items, **changes))
    assert [(f.field, f.billed, f.committed) for f in found] == expected
    assert all(f.code == "net-inconsistent" for f in found)


def test_a_sub_line_is_not_added_and_the_net_findings_name_the_sums() -> None:
    items = (line("100.00", "GROUP"), line("60.00", "DETAIL"), line("40.00", "detail"), line("0.00", "INFORMATION"))
    assert net_findings(invoice(lines=items, line_total=D("100.00"))) == []
    (lines,) = net_findings(invoice(lines=items[:2] + (line("0.01"),), line_total=D("100.00")))
    assert lines.message == ("the invoice's sum of line totals (100.00) is not the sum of its 2 line(s), 100.01 (EN "
                             "16931 BR-CO-10)")
    (net,) = net_findings(invoice(lines=items, line_total=D("100.00"), allowance_total=D("10.00"),
                                  charge_total=D("5.00")))
    assert net.message == ("the invoice's total net of tax (100.00) is not its sum of line totals (100.00) less its "
                           "allowances (10.00) plus its charges (5.00): 95.00 (EN 16931 BR-CO-13)")
    (bare,) = net_findings(invoice(lines=items, line_total=D("100.00"), net_total=D("90.00")))
    assert "less its allowances (0) plus its charges (0): 100.00 (EN" in bare.message
