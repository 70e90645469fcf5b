"""No Python `None`, `True` or `False` in any `invoice` command's output (issue #35): every invoice the tests make is
checked, as text and as --json, and attached; a value the invoice does not give reads "not given"."""

from __future__ import annotations

import re
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest
from invoices import Invoice, Line, cii_xml, en16931_invoice, en16931_lines, example_lines, facturx_pdf, named_lines
from test_invoice_check import HOSTILE, MISMATCHES, _lines
from test_invoice_providers import ZUGFERD_1

# what is made of a verified bundle and an invoice read is what these tests are about, not the readers' limits
pytestmark = pytest.mark.usefixtures("note_parsed_here", "invoice_read_here")

D = Decimal
PYTHON_WORDS = re.compile(r"\b(None|True|False)\b")


def _allowance() -> list[Line]:
    lines = en16931_lines()
    lines[1].allowance = (D("71.00"), "Treuerabatt")
    return lines


INVOICES: dict[str, Invoice] = {
    "example": Invoice(example_lines()),
    "named": Invoice(named_lines()),
    "not-identified": Invoice(named_lines(rtx="Rechenleistung Oktober")),
    "gpu-without-duration": Invoice(named_lines(rtx="RTX 4090 package")),
    "b200-3-days": Invoice(named_lines(rtx="b200 package 3 Tage")),
    "conflict": Invoice([Line("rtx-4090", 7, D("1"), D("110.00"), name="b200 package 7 days", attribute=False)]
                        + named_lines()[1:]),
    "billed-twice": Invoice(named_lines() + named_lines()[1:], extra_totals={"tax_basis_total": D("2181.00")}),
    "eur": Invoice(named_lines(), currency="EUR"),
    "one-cent": Invoice(named_lines(), extra_totals={"tax_basis_total": D("2181.01")}),
    "en16931": en16931_invoice(),
    "line-allowance": en16931_invoice(_allowance()),
    "document-allowance": en16931_invoice(allowances=[(D("-50.00"), "Rabatt", "S", D("19.00"))]),
    "extended-sub-lines": Invoice([*named_lines()[:1], replace(named_lines()[1], status="GROUP"),
                                   Line("b200", 7, D("1"), D("1035.50"), name="GPU 1", status="DETAIL")],
                                  extended=True),
    "credit-note": Invoice(example_lines(), type_code="381"),
    "gross": Invoice(example_lines(), extra_totals={"grand_total": D("9999.00"), "due_amount": D("9999.00")}),
    "due": Invoice(example_lines(), extra_totals={"due_amount": D("9999.00")}),
    "years": Invoice(_lines(l0={"unit": "ANN"})),
    "kilograms": Invoice(_lines(l0={"unit": "KGM"})),
    "sub-cent": Invoice(_lines(l0={"unit_price": D("110.004"), "total": D("110.00")})),
    "prepaid-negative": Invoice(example_lines(), prepaid=D("-50000.00")),
    "rounding": Invoice(example_lines(), rounding=D("-617.20")),
    "tax-rate": Invoice(example_lines(), vat_percent=D("4485")),
    "tax-total": Invoice(example_lines(), extra_totals={"tax_total": D("500.00"), "grand_total": D("2681.00"),
                                                        "due_amount": D("2681.00")}),
    "tax-category": Invoice(example_lines(), tax_overrides={"amount": D("436.21")},
                            extra_totals={"tax_total": D("436.21"), "grand_total": D("2617.21"),
                                          "due_amount": D("2617.21")}),
    "no-lines-billed": Invoice([Line("h100", 30, D("1"), D("900.00"), seller_id=None, attribute=False,
                                     name="Storage")]),
    **{f"mismatch-{code}": Invoice(lines) for code, (lines, _, _) in MISMATCHES.items()},
}
UNREADABLE = {"zugferd-1": ZUGFERD_1, **{f"hostile-{k}": v for k, v in HOSTILE.items() if k != "huge"}}


def _clean(*outputs: str) -> None:
    for text in outputs:
        assert not PYTHON_WORDS.search(text), text


@pytest.mark.parametrize("case", sorted(INVOICES))
def test_invoice_check_never_prints_none(case: str, run_cli, example_bundle: Path,
                                         example_keys: tuple[Path, Path], tmp_path: Path) -> None:
    path = tmp_path / "invoice.xml"
    path.write_bytes(cii_xml(INVOICES[case]))
    trust = ("--trust", str(example_keys[1]))
    text = run_cli("invoice", "check", str(path), str(example_bundle), *trust)
    assert text.code in (0, 1) and text.out.splitlines()[-1].startswith(("OK: ", "FAILED: ")), text.out + text.err
    as_json = run_cli("invoice", "check", str(path), str(example_bundle), *trust, "--json")
    assert as_json.code == text.code
    _clean(text.out, text.err, as_json.out, as_json.err)


@pytest.mark.parametrize("case", sorted(UNREADABLE))
def test_an_unreadable_invoice_is_one_line_with_no_none(case: str, run_cli, example_bundle: Path,
                                                        example_keys: tuple[Path, Path], tmp_path: Path) -> None:
    path = tmp_path / "invoice.xml"
    path.write_bytes(UNREADABLE[case])
    r = run_cli("invoice", "check", str(path), str(example_bundle), "--trust", str(example_keys[1]))
    assert r.code == 2 and r.err.count("\n") == 1, r.err
    _clean(r.out, r.err)


@pytest.mark.parametrize("case", ["not-identified", "eur", "example"])
def test_invoice_attach_never_prints_none(case: str, run_cli, example_bundle: Path, example_keys: tuple[Path, Path],
                                          tmp_path: Path) -> None:
    path = tmp_path / "invoice.pdf"
    path.write_bytes(facturx_pdf(INVOICES[case]))
    for n, extra in enumerate(((), ("--attach-anyway",))):
        r = run_cli("invoice", "attach", str(path), str(example_bundle), "-o", str(tmp_path / f"out-{n}.pdf"),
                    "--trust", str(example_keys[1]), *extra)
        assert r.code in (0, 1), r.out + r.err
        _clean(r.out, r.err)


def test_a_value_the_invoice_does_not_give_reads_not_given() -> None:
    from generator.cli.invoice import _due_line, _findings
    from generator.invoice.document import Invoice as Read
    from generator.invoice.money import InvoiceFinding

    (row,) = _findings([InvoiceFinding("due-missing", None, "DuePayableAmount", None, None, "m", "recomputed")])
    assert row == "invoice: due-missing: m [billed not given; recomputed not given]"
    read = Read("x.xml", "1", "380", None, (), None, None, None, None, None)
    assert _due_line(read) == "amount due: not stated (gross: not given)"
