"""Edges of reconciling an invoice's lines with the committed packages (generator.invoice.reconcile): one lot, one
cent, a unit in another case, a package on two lines, a total not given."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from typing import Any

import pytest

from generator.invoice.committed import Committed
from generator.invoice.document import Invoice, InvoiceLine, InvoiceTax, OtherFormat
from generator.invoice.identify import Identity
from generator.invoice.money import InvoiceFinding
from generator.invoice.reconcile import REGISTER, BilledLine, match_lines, reconcile

D = Decimal
RTX = Committed("rtx-4090", 7, 1, 11000, 1, 11000, ("rtx-batch",), model_name="GeForce RTX 4090",
                article_ids=("IGPU-4090-7D",))
B200 = Committed("b200", 7, 1, 207100, 2, 207100, ("b200-batch",))
COMMITTED = [RTX, B200]


def item(gpu: str = "rtx-4090", quantity: str | None = "1", price: str | None = "110.00", total: str | None = "auto",
         position: int = 1, **changes: Any) -> InvoiceLine:
    """A line billing `gpu` for 7 days by its slug and gpu-audit's attribute; its total price x quantity unless
    given."""
    amount = None if total is None else D(total) if total != "auto" else \
        (D(quantity or 0) * D(price or 0)).quantize(D("0.01"))
    base = InvoiceLine(position=position, line_id=str(position), seller_id=gpu, name=f"{gpu} package", days=7,
                       quantity=None if quantity is None else D(quantity), unit="C62",
                       unit_price=None if price is None else D(price), total=amount, tax_category="Z",
                       tax_rate=D(0))
    return dataclasses.replace(base, **changes)


def bill(*lines: InvoiceLine, **changes: Any) -> Invoice:
    """An invoice of `lines` whose own sums add up (zero-rated), so that only the lines' findings remain."""
    net = sum((x.total for x in lines if x.total is not None and x.counted), D("0.00"))
    base = Invoice(source="t.xml", number="N-1", type_code="380", currency="USD", lines=lines, net_total=net,
                   tax_total=D("0.00"), grand_total=net, prepaid=None, due=net, line_total=net,
                   taxes=(InvoiceTax("Z", D(0), net, D("0.00")),))
    return dataclasses.replace(base, **changes)


def of_line(findings: list[InvoiceFinding], position: int = 1) -> list[tuple[str, str | None, str | None]]:
    return [(f.code, f.billed, f.committed) for f in findings if f.line == position]


def test_a_billed_line_is_a_frozen_value() -> None:
    billed = BilledLine(item(), Identity("rtx-4090", 7, ()), RTX)
    with pytest.raises(dataclasses.FrozenInstanceError):
        billed.package = None  # type: ignore[misc]
    assert len({billed, billed}) == 1


@pytest.mark.parametrize(("line", "committed"), [
    (item(), RTX), (item(quantity="1.00"), RTX), (item(unit="c62"), RTX), (item(unit="H87"), RTX),
    (item(unit="LO"), RTX), (item(total=None), RTX), (item("b200", price="2071.00"), B200),
    (item(price="110.0"), dataclasses.replace(RTX, gpus_per_lot=None)),
    (item(price="110"), dataclasses.replace(RTX, gpus_per_lot=1))],
    ids=["exact", "quantity-1.00", "unit-in-lower-case", "unit-piece", "unit-lot", "no-line-total", "lot-of-2-gpus",
         "gpus-per-lot-not-given", "gpus-per-lot-1"])
def test_a_line_billing_its_package_whole_is_no_finding(line: InvoiceLine, committed: Committed) -> None:
    packages = [committed, B200] if committed.gpu == "rtx-4090" else [RTX, committed]
    assert of_line(reconcile(bill(line), packages)) == []


LINE_FINDINGS = {
    "per-gpu": (item("b200", "2", "1035.50"), [("billed-per-gpu", "2 x 1035.50", "1 lot(s) x 2071.00 USD")]),
    "per-gpu-2.0000": (item("b200", "2.0000", "1035.50"), [("billed-per-gpu", "2.0000 x 1035.50",
                                                            "1 lot(s) x 2071.00 USD")]),
    "two-lots-of-2-gpus": (item("b200", "2", "2071.00"), [("lots-differ", "2", "1")]),
    "half-price-per-lot": (item("b200", "1", "1035.50"), [("unit-price-differs", "1035.50", "2071.00 USD")]),
    "two-lots": (item(quantity="2"), [("lots-differ", "2", "1")]),
    "no-quantity": (item(quantity=None, total="110.00"), [("lots-differ", None, "1")]),
    "one-cent-price": (item(price="110.01"), [("unit-price-differs", "110.01", "110.00 USD")]),
    # 1 x 110.005 is 110.01 rounded half up, as the tax is (EN 16931 rounds to the cent): a wrong price, not pro-rating
    "half-a-cent-price": (item(price="110.005", total="110.01"), [("unit-price-differs", "110.005", "110.00 USD")]),
    "no-price": (item(price=None, total="110.00"), [("unit-price-differs", None, "110.00 USD")]),
    "hours": (item(quantity="168", price="0.65", unit="HUR"), [("pro-rated", "168 HUR = 109.20",
                                                                 "1 whole lot(s) for 7 days")]),
    "hours-lower-case": (item(quantity="168", price="0.65", unit="hur"), [("pro-rated", "168 hur = 109.20",
                                                                           "1 whole lot(s) for 7 days")]),
    "half-a-lot": (item(quantity="1.5"), [("pro-rated", "1.5 C62 = 165.00", "1 whole lot(s) for 7 days")]),
    "total-one-cent": (item(total="110.01"), [("pro-rated", "1 C62 = 110.01", "1 whole lot(s) for 7 days")]),
    "kilograms": (item(unit="KGM"), [("unit", "KGM", "C62 (lots)")]),
    "no-unit": (item(unit=None), [("unit", None, "C62 (lots)")]),
    "allowance": (item(total="100.00", allowances=D("10.00")), [("line-allowance-charge",
                                                                 "an allowance of 10.00 = 100.00", "110.00 USD")]),
    "charge": (item(total="115.00", charges=D("5.00")), [("line-allowance-charge", "a charge of 5.00 = 115.00",
                                                          "110.00 USD")]),
    "both": (item(total="105.00", allowances=D("10.00"), charges=D("5.00")),
             [("line-allowance-charge", "an allowance of 10.00 and a charge of 5.00 = 105.00", "110.00 USD")]),
    "allowance-not-taken": (item(total="110.00", allowances=D("10.00")), [("pro-rated", "1 C62 = 110.00",
                                                                           "1 whole lot(s) for 7 days")]),
    "charge-not-added": (item(total="110.00", charges=D("5.00")), [("pro-rated", "1 C62 = 110.00",
                                                                    "1 whole lot(s) for 7 days")]),
    "two-lots-with-an-allowance": (item(quantity="2", total="210.00", allowances=D("10.00")),
                                   [("lots-differ", "2", "1")]),
}


@pytest.mark.parametrize(("line", "expected"), LINE_FINDINGS.values(), ids=LINE_FINDINGS.keys())
def test_a_line_one_lot_one_cent_or_one_unit_off_is_one_finding(line: InvoiceLine,
                                                                 expected: list[tuple[str, Any, Any]]) -> None:
    assert of_line(reconcile(bill(line), COMMITTED)) == expected


def test_the_line_findings_say_what_was_billed_and_what_was_committed() -> None:
    def message(line: InvoiceLine) -> str:
        (finding,) = [f for f in reconcile(bill(line), COMMITTED) if f.line == 1]
        return finding.message

    assert message(item("b200", "2", "1035.50")) == ("b200, 7-day package (b200-batch): billed per GPU (2 x 1035.50); "
                                                     "a lot of 2 GPUs is one price, billed per lot: 1 x 2071.00 USD")
    assert message(item(unit=None)) == ("rtx-4090, 7-day package (rtx-batch): billed in unit not given; a package is "
                                        "billed in lots (C62)")
    assert message(item(quantity=None, total="110.00")) == "rtx-4090, 7-day package (rtx-batch): not given lot(s) " \
                                                           "billed, 1 committed"
    assert message(item(price=None, total="110.00")) == ("rtx-4090, 7-day package (rtx-batch): unit price not given "
                                                         "billed, the tariff's price per lot is 110.00 USD")
    assert message(item(total="100.00", allowances=D("10.00"), allowance_reasons=("loyalty", "early"))) == (
        "rtx-4090, 7-day package (rtx-batch): an allowance of 10.00 (loyalty; early) on the line brings it to 100.00; "
        "the package committed is 1 x 110.00 USD, billed whole")


def test_a_package_billed_on_two_lines_is_billed_once_and_a_sub_line_bills_nothing() -> None:
    twice = bill(item(position=1), item(position=2, seller_id="IGPU-4090-7D", days=None, name="GeForce RTX 4090"))
    matched = match_lines(twice, COMMITTED)
    assert [b.package for b in matched] == [RTX, None]
    (finding,) = [f for f in reconcile(twice, COMMITTED) if f.line == 2]
    assert (finding.code, finding.billed, finding.committed) == ("billed-twice", "rtx-4090, 7 days", "billed once")
    assert finding.message == ("invoice line 2 \"GeForce RTX 4090\" (seller's item ID IGPU-4090-7D; amount 110.00) "
                               "bills rtx-4090, 7 days (by its article ID), a package another line bills already: the "
                               "decision committed it once")
    detail = bill(item(position=1, status="GROUP"), item(position=2, status="DETAIL"), item("b200", price="2071.00",
                                                                                            position=3))
    assert [b.package for b in match_lines(detail, COMMITTED)] == [RTX, None, B200]
    assert [f for f in reconcile(detail, COMMITTED) if f.line is not None] == []


def test_a_line_billing_no_committed_package_says_which_and_how_it_was_identified() -> None:
    other = item("h200", position=1, buyer_id="PO-1", global_id="4012345000016", global_scheme="0160", line_id="")
    (finding,) = [f for f in reconcile(bill(other), COMMITTED) if f.line == 1]
    assert (finding.code, finding.billed, finding.committed) == ("billed-not-committed", "h200, 7 days",
                                                                 "no such package")
    assert finding.message == (
        "invoice line 1 \"h200 package\" (seller's item ID h200; buyer's item ID PO-1; global ID (0160) "
        "4012345000016; amount 110.00) bills h200, 7 days (by its GPU slug), a package the decision did not commit")
    unknown = item(seller_id=None, days=None, name="Rechenzeit", line_id="A-7", total="110.00")
    (finding,) = [f for f in reconcile(bill(unknown), COMMITTED) if f.line == 1]
    assert (finding.code, finding.billed, finding.committed) == ("line-not-identified", "\"Rechenzeit\", 110.00",
                                                                 "no package identified")
    assert finding.message.startswith("invoice line A-7 \"Rechenzeit\" (no item ID; amount 110.00): no committed "
                                      "package identified: it gives no seller's item ID; ")
    assert finding.message.endswith(f"; {REGISTER}")


def test_a_line_its_ways_identify_differently_is_a_conflict_and_still_compared() -> None:
    line = item(seller_id="IGPU-4090-7D", days=None, name="B200, 7 days", quantity="2")
    found = of_line(reconcile(bill(line), COMMITTED))
    assert found == [("line-identification-conflict", "its article ID IGPU-4090-7D tells rtx-4090, 7 days; its name or "
                      "description names b200", "one package"), ("lots-differ", "2", "1")]


def test_a_committed_package_no_line_bills_is_a_finding() -> None:
    findings = reconcile(bill(item()), COMMITTED)
    assert [(f.code, f.billed, f.committed, f.message) for f in findings if f.code == "committed-not-billed"] == [
        ("committed-not-billed", "no line", "1 x 2071.00 USD", "b200, 7-day package (b200-batch): committed but billed "
         "by no invoice line")]


def test_the_whole_invoice_matching_the_packages_is_no_finding() -> None:
    assert reconcile(bill(item(), item("b200", price="2071.00", position=2)), COMMITTED) == []


@pytest.mark.parametrize(("changes", "code", "billed", "committed"), [
    ({"currency": "EUR"}, "currency", "EUR", "USD"), ({"currency": "usd"}, "currency", "usd", "USD"),
    ({"currency": None}, "currency", None, "USD")], ids=["euro", "lower-case", "none"])
def test_an_invoice_in_another_currency_is_one_finding_and_nothing_is_compared(
        changes: dict[str, Any], code: str, billed: str | None, committed: str) -> None:
    (finding,) = reconcile(bill(item(quantity="3"), **changes), COMMITTED)
    assert (finding.code, finding.billed, finding.committed) == (code, billed, committed)
    assert finding.message.startswith(f"the invoice is in {billed or 'not given'}; the tariffs")


@pytest.mark.parametrize(("type_code", "found"), [("380", False), ("381", True), ("384", True), (None, True)])
def test_only_a_commercial_invoice_380_bills_the_packages(type_code: str | None, found: bool) -> None:
    invoice = bill(item(), item("b200", price="2071.00", position=2), type_code=type_code)
    assert [f.committed for f in reconcile(invoice, COMMITTED) if f.code == "document-type"] == \
        (["380"] if found else [])


@pytest.mark.parametrize(("token", "ask"), [("order-x", "the invoice of this order"), ("ubl", "the same invoice")])
def test_a_document_in_another_format_is_one_finding_asking_for_the_right_document(token: str, ask: str) -> None:
    other = OtherFormat(token, "a UBL document", "Invoice", "urn:x")
    (finding,) = reconcile(bill(item(), other_format=other), COMMITTED)
    assert (finding.code, finding.billed, finding.against) == ("invoice-format", "Invoice of namespace urn:x",
                                                               "allowed")
    assert f"ask the provider for {ask} as Factur-X or ZUGFeRD" in finding.message


@pytest.mark.parametrize(("net", "committed", "changes", "expected"), [
    (D("2181.00"), COMMITTED, {}, None),
    (D("2181.01"), COMMITTED, {}, ("2181.01", "2181.00 USD", "the invoice's total net of tax is 2181.01 USD; the "
                                   "campaign's committed total is 2181.00 USD")),
    (None, COMMITTED, {}, (None, "2181.00 USD", "the invoice's total net of tax is not given USD; the campaign's "
                           "committed total is 2181.00 USD")),
    (None, [dataclasses.replace(RTX, total_usd_minor=None), B200], {},
     (None, "no price", "the invoice's total net of tax is not given USD; the campaign has no committed total (a "
      "package has no published price), so no billed total can be confirmed")),
    (D("2181.00"), [dataclasses.replace(RTX, total_usd_minor=None), B200], {},
     ("2181.00", "no price", "the invoice's total net of tax is 2181.00 USD; the campaign has no committed total (a "
      "package has no published price), so no billed total can be confirmed")),
    (D("2176.00"), COMMITTED, {"allowance_total": D("10.00"), "charge_total": D("5.00")},
     ("2176.00", "2181.00 USD", "the invoice's total net of tax is 2176.00 USD (its lines' 2181.00 less the document's "
      "allowances 10.00 plus its charges 5.00); the campaign's committed total is 2181.00 USD"))],
    ids=["exact", "one-cent", "no-net", "no-net-no-committed-total", "no-committed-total", "document-allowances"])
def test_the_total_net_of_tax_is_the_committed_total_to_the_cent(
        net: Decimal | None, committed: list[Committed], changes: dict[str, Any],
        expected: tuple[str | None, str, str] | None) -> None:
    invoice = bill(item(), item("b200", price="2071.00", position=2), net_total=net, **changes)
    found = [(f.billed, f.committed, f.message) for f in reconcile(invoice, committed) if f.code == "total-differs"]
    assert found == ([] if expected is None else [expected])
