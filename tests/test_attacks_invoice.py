"""Attacks on `gpu-audit invoice check` (issue #30, item 4): the amount due, the tax, and which XML is the invoice.

Each invoice is made by the real tools (drafthorse writes the CII, the factur-x library embeds it, pikepdf adds
what an attacker adds) and checked by the CLI against the genuine signed bundle of inputs/example.
"""

from __future__ import annotations

import io
import json
import subprocess
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pikepdf
import pytest
from conftest import gpu_audit
from invoices import Invoice, cii_xml, example_lines, facturx_pdf, named_lines

from generator.invoice.check import Committed, InvoiceFinding, committed_packages, reconcile
from generator.invoice.money import due_findings
from generator.invoice.read import read_invoice

D = Decimal
COMPARED = "only the invoice's XML was compared, not its printed page"




def _check(tmp_path: Path, signed: tuple[Path, Path], invoice: Invoice | bytes,
           *extra: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "invoice.pdf"
    path.write_bytes(invoice if isinstance(invoice, bytes) else facturx_pdf(invoice))
    bundle, cert = signed
    return gpu_audit("invoice", "check", str(path), str(bundle), "--trust", str(cert), *extra)


def _finding(r: subprocess.CompletedProcess[str], code: str) -> str:
    """The output line of the invoice-wide finding `code` (exit 1, and the FAILED line last)."""
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1].startswith("FAILED: "), r.stdout
    shown = [row for row in r.stdout.splitlines() if row.startswith(f"invoice: {code}: ")]
    assert shown, r.stdout
    return shown[0]


# ------------------------------------------------------------------------------------------ the money paid

def test_a_negative_prepaid_amount_inflating_the_due_amount_is_refused(tmp_path: Path,
                                                                      signed: tuple[Path, Path]) -> None:
    """The attack of the issue: -50,000.00 'prepaid' makes 52,617.20 due on a gross of 2,617.20, and the
    arithmetic of BR-CO-16 holds; a prepaid amount below zero is no payment."""
    r = _check(tmp_path, signed, Invoice(example_lines(), prepaid=D("-50000.00")))
    row = _finding(r, "prepaid-negative")
    assert "-50000.00" in row, row
    assert "amount due 52617.20 USD" in r.stdout, r.stdout


def test_a_due_amount_that_is_not_gross_less_prepaid_plus_rounding_is_refused(tmp_path: Path,
                                                                             signed: tuple[Path, Path]) -> None:
    invoice = Invoice(example_lines(), prepaid=D("617.20"), rounding=D("0.20"),
                      extra_totals={"due_amount": D("2100.00")})
    row = _finding(_check(tmp_path, signed, invoice), "due-inconsistent")
    assert "[billed 2100.00; recomputed 2000.20]" in row, row


def test_a_due_amount_one_cent_off_is_refused(tmp_path: Path, signed: tuple[Path, Path]) -> None:
    """The boundary: no tolerance, and the rounding counted (2,617.20 - 617.20 + 0.20 is 2,000.20)."""
    invoice = Invoice(example_lines(), prepaid=D("617.20"), rounding=D("0.20"),
                      extra_totals={"due_amount": D("2000.21")})
    row = _finding(_check(tmp_path, signed, invoice), "due-inconsistent")
    assert "[billed 2000.21; recomputed 2000.20]" in row, row


def test_a_genuine_prepaid_and_rounding_pass_and_the_amount_due_is_shown(tmp_path: Path,
                                                                         signed: tuple[Path, Path]) -> None:
    r = _check(tmp_path, signed, Invoice(example_lines(), prepaid=D("617.20"), rounding=D("-0.20")))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "amount due 1999.80 USD (gross 2617.20, prepaid 617.20, rounding -0.20)" in r.stdout, r.stdout
    assert COMPARED in r.stdout, r.stdout
    assert r.stdout.splitlines()[-1].startswith("OK: invoice ITG-2026-0042 bills exactly"), r.stdout
    invoice = Invoice(example_lines(), prepaid=D("617.20"), rounding=D("-0.20"))
    result = json.loads(_check(tmp_path, signed, invoice, "--json").stdout)
    assert result["ok"] is True and result["invoice"]["due"] == "1999.80", result
    assert result["invoice"]["compared"] == "xml", result


# ------------------------------------------------------------------------------------------ the tax

def test_a_tax_total_that_is_not_the_sum_of_its_categories_is_refused(tmp_path: Path,
                                                                     signed: tuple[Path, Path]) -> None:
    invoice = Invoice(example_lines(), extra_totals={"tax_total": D("500.00"), "grand_total": D("2681.00"),
                                                     "due_amount": D("2681.00")})
    row = _finding(_check(tmp_path, signed, invoice), "tax-total-inconsistent")
    assert "[billed 500.00; recomputed 436.20]" in row, row


def test_a_tax_rate_of_4485_percent_is_refused(tmp_path: Path, signed: tuple[Path, Path]) -> None:
    """Scenario I02: every sum adds up, at a rate no tax has."""
    row = _finding(_check(tmp_path, signed, Invoice(example_lines(), vat_percent=D("4485"))), "tax-rate")
    assert "4485" in row and "0 to 100" in row, row


def test_a_negative_tax_rate_is_refused(tmp_path: Path, signed: tuple[Path, Path]) -> None:
    row = _finding(_check(tmp_path, signed, Invoice(example_lines(), vat_percent=D("-20.00"))), "tax-rate")
    assert "-20.00" in row, row


def test_a_category_tax_that_is_not_its_basis_times_its_rate_is_refused(tmp_path: Path,
                                                                       signed: tuple[Path, Path]) -> None:
    invoice = Invoice(example_lines(), tax_overrides={"amount": D("436.21")},
                      extra_totals={"tax_total": D("436.21"), "grand_total": D("2617.21"), "due_amount": D("2617.21")})
    row = _finding(_check(tmp_path, signed, invoice), "tax-category-inconsistent")
    assert "[billed 436.21; recomputed 436.20]" in row, row


# ------------------------------------------------------------------------------------------ which XML


def _with(tmp_path: Path, add: str) -> bytes:
    """The genuine invoice with a second invoice XML (another invoice: only the rtx-4090 line) added by pikepdf:
    `top` under another .xml name at the top of the name tree, `nested` as factur-x.xml two levels deep in a
    /Kids tree, `renamed` under a name that is no XML name; `moved` moves the genuine one two levels deep."""
    other = cii_xml(Invoice(example_lines()[:1]))
    pdf = pikepdf.open(io.BytesIO(facturx_pdf(Invoice(example_lines()))))
    if add in ("nested", "moved"):  # moved: the genuine one alone, two levels deep
        tree = pdf.Root.Names.EmbeddedFiles
        spec = tree.Names[1] if add == "moved" else pikepdf.AttachedFileSpec(pdf, other, mime_type="text/xml").obj
        deep = pdf.make_indirect(pikepdf.Dictionary(
            Kids=[pdf.make_indirect(pikepdf.Dictionary(Names=["factur-x.xml", spec],
                                                       Limits=["factur-x.xml", "factur-x.xml"]))],
            Limits=["factur-x.xml", "factur-x.xml"]))
        genuine = pdf.make_indirect(pikepdf.Dictionary(Names=tree.Names, Limits=["factur-x.xml", "factur-x.xml"]))
        kids = [deep] if add == "moved" else [deep, genuine]
        pdf.Root.Names.EmbeddedFiles = pdf.make_indirect(pikepdf.Dictionary(Kids=kids))
    else:
        name = {"top": "Invoice.xml", "renamed": "payment-details.dat"}[add]
        pdf.attachments[name] = pikepdf.AttachedFileSpec(pdf, other, mime_type="text/xml")
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


def test_two_invoice_xmls_under_different_names_are_refused(tmp_path: Path, signed: tuple[Path, Path]) -> None:
    """Scenario I06: the factur-x library reads the first *.xml of the name tree, here the other invoice."""
    import facturx

    data = _with(tmp_path, "top")
    name, xml = facturx.get_xml_from_pdf(data, check_xsd=False)
    assert name == "Invoice.xml" and b"b200" not in xml  # what a reader of that library would reconcile
    r = _check(tmp_path, signed, data)
    assert r.returncode == 2 and "ambiguous" in r.stderr and "Invoice.xml" in r.stderr, r.stdout + r.stderr


def test_a_second_invoice_xml_nested_two_levels_deep_is_refused(tmp_path: Path, signed: tuple[Path, Path]) -> None:
    """Scenario I05: pypdf (and so the factur-x library) reads one level of /Kids; pikepdf, like other PDF
    readers, walks the whole name tree and finds both."""
    data = _with(tmp_path, "nested")
    assert len(list(pikepdf.open(io.BytesIO(data)).attachments.items())) >= 1
    r = _check(tmp_path, signed, data)
    assert r.returncode == 2 and "ambiguous" in r.stderr and "factur-x.xml" in r.stderr, r.stdout + r.stderr


def test_a_cii_xml_under_a_name_that_is_no_xml_name_is_refused(tmp_path: Path, signed: tuple[Path, Path]) -> None:
    r = _check(tmp_path, signed, _with(tmp_path, "renamed"))
    assert r.returncode == 2 and "ambiguous" in r.stderr and "payment-details.dat" in r.stderr, r.stdout + r.stderr


def test_an_invoice_xml_only_two_levels_deep_is_refused(tmp_path: Path, signed: tuple[Path, Path]) -> None:
    """The one invoice XML where pypdf, and so the factur-x library, does not look: readers would disagree on
    whether the PDF is an invoice at all."""
    r = _check(tmp_path, signed, _with(tmp_path, "moved"))
    assert r.returncode == 2 and "where the factur-x library does not read it" in r.stderr, r.stdout + r.stderr


# ------------------------------------------------------------------------------------------ what is never silent

def test_a_rounding_of_whole_units_is_refused(tmp_path: Path, signed: tuple[Path, Path]) -> None:
    row = _finding(_check(tmp_path, signed, Invoice(example_lines(), rounding=D("-617.20"))), "rounding-implausible")
    assert "[billed -617.20; allowed less than 1.00 either way]" in row, row


def test_an_invoice_that_states_no_amount_due_is_never_silently_ok(tmp_path: Path,
                                                                  signed: tuple[Path, Path]) -> None:
    xml = cii_xml(Invoice(example_lines()))
    xml = xml.replace(b"<ram:DuePayableAmount>2617.20</ram:DuePayableAmount>", b"")
    bundle, cert = signed
    (tmp_path / "no-due.xml").write_bytes(xml)
    r = gpu_audit("invoice", "check", str(tmp_path / "no-due.xml"), str(bundle), "--trust", str(cert))
    # the EN 16931 XSD requires it: refused unread (exit 2); a profile whose XSD does not is a finding
    assert r.returncode == 2 and "DuePayableAmount" in r.stderr, r.stdout + r.stderr
    genuine = tmp_path / "genuine.xml"
    genuine.write_bytes(cii_xml(Invoice(example_lines())))
    (found,) = due_findings(replace(read_invoice(genuine), due=None))
    assert found.code == "due-missing" and "states no DuePayableAmount" in found.message, found


# ------------------------------------------------------------------------------------------ issue 46 item 5

@pytest.fixture(scope="module")
def committed(signed: tuple[Path, Path]) -> list[Committed]:
    return committed_packages(json.loads((signed[0] / "data" / "decision.json").read_text(encoding="utf-8")))


def _found(tmp_path: Path, invoice: Invoice, committed: list[Committed]) -> list[InvoiceFinding]:
    path = tmp_path / "invoice.xml"
    path.write_bytes(cii_xml(invoice))
    return reconcile(read_invoice(path), committed)


def test_a_tax_basis_inflated_above_the_net_is_refused(tmp_path: Path, signed: tuple[Path, Path]) -> None:
    """The attack: category S at 20 % on a basis of 10,000.00 makes 4,181.00 due on a net of 2,181.00, and
    BR-CO-14, BR-CO-15 and BR-CO-17 all hold; its basis is not the sum of its lines (BR-S-08)."""
    invoice = Invoice(example_lines(), header_taxes=[("S", D("20.00"), D("10000.00"), D("2000.00"))])
    r = _check(tmp_path, signed, invoice)
    assert "amount due 4181.00 USD" in r.stdout, r.stdout
    row = _finding(r, "tax-basis-inconsistent")
    assert "BR-S-08" in row and "[billed 10000.00; recomputed 2181.00]" in row, row
    assert "bills exactly" not in r.stdout


@pytest.mark.parametrize("category,rule", [("Z", "BR-Z-08"), ("E", "BR-E-08"), ("AE", "BR-AE-08"),
                                           ("K", "BR-IC-08"), ("G", "BR-G-08"), ("O", "BR-O-08")])
def test_each_categorys_basis_ties_to_its_lines(category: str, rule: str, tmp_path: Path,
                                                committed: list[Committed]) -> None:
    lines = example_lines()
    for line in lines:
        line.tax = (category, D("0.00"))
    genuine = Invoice(lines, header_taxes=[(category, D("0.00"), D("2181.00"), D("0.00"))])
    assert _found(tmp_path, genuine, committed) == []
    inflated = Invoice(lines, header_taxes=[(category, D("0.00"), D("2181.00"), D("0.00")),
                                            ("S", D("20.00"), D("10000.00"), D("2000.00"))])
    found = [f for f in _found(tmp_path, inflated, committed) if f.code == "tax-basis-inconsistent"]
    assert [f.billed for f in found] == ["10000.00"] and "no line" in found[0].message, found
    short = Invoice(lines, header_taxes=[(category, D("0.00"), D("2180.00"), D("0.00"))])
    (found_short,) = [f for f in _found(tmp_path, short, committed) if f.code == "tax-basis-inconsistent"]
    assert rule in found_short.message and found_short.committed == "2181.00", found_short


def test_one_tax_category_stated_twice_is_refused(tmp_path: Path, signed: tuple[Path, Path]) -> None:
    twice = [("S", D("20.00"), D("2181.00"), D("436.20")), ("S", D("20"), D("2181.00"), D("436.20"))]
    r = _check(tmp_path, signed, Invoice(example_lines(), header_taxes=twice))
    row = _finding(r, "tax-category-repeated")
    assert "S at 20" in row, row
    assert "bills exactly" not in r.stdout


def test_a_line_tax_rate_the_breakdown_does_not_state_is_refused(tmp_path: Path,
                                                                committed: list[Committed]) -> None:
    lines = example_lines()
    lines[0].tax = ("S", D("19.00"))
    invoice = Invoice(lines, header_taxes=[("S", D("20.00"), D("2181.00"), D("436.20"))])
    found = [f for f in _found(tmp_path, invoice, committed) if f.code == "line-tax-category"]
    assert [(f.line, f.billed) for f in found] == [(1, "S at 19.00 %")], found
    assert "S at 20.00 %" in (found[0].committed or ""), found


@pytest.mark.parametrize("element", ["LineTotalAmount", "ChargeAmount", "TaxBasisTotalAmount", "GrandTotalAmount",
                                     "DuePayableAmount", "BasisAmount", "CalculatedAmount", "TaxTotalAmount"])
def test_an_amount_in_another_currency_than_the_invoices_is_refused(element: str, tmp_path: Path,
                                                                   committed: list[Committed]) -> None:
    found = [f for f in _found(tmp_path, Invoice(example_lines(), currency_ids={element: "EUR"}), committed)
             if f.code == "amount-currency"]
    assert found and all(f.billed == "EUR" and f.committed == "USD" for f in found), found
    assert found[0].field == f"{element}/@currencyID", found


def test_the_tax_total_in_the_tax_currency_is_allowed_and_nothing_else_in_it(tmp_path: Path,
                                                                            committed: list[Committed]) -> None:
    genuine = Invoice(example_lines(), tax_currency=("EUR", D("401.30")),
                      currency_ids={"GrandTotalAmount": "USD", "LineTotalAmount": "USD"})
    assert _found(tmp_path, genuine, committed) == []
    other = Invoice(example_lines(), tax_currency=("EUR", D("401.30")), currency_ids={"GrandTotalAmount": "EUR"})
    assert [f.code for f in _found(tmp_path, other, committed)] == ["amount-currency"]


@pytest.mark.parametrize("rtx,b200", [
    ("RTX 4090 D, 7-day package", "B200 package 7 days"),
    ("GeForce RTX 4090 Laptop GPU, 7 days", "B200 package 7 days"),
    ("RTX 4090 Ti 7 Tage", "B200 package 7 days"),
    ("RTX 4090 SUPER, forfait 7 jours", "B200 package 7 days"),
    ("RTX 4090 package 7 days", "B200 NVL package 7 days"),
    ("RTX 4090 package 7 days", "B200-SXM6 package 7 days"),
])
def test_a_line_naming_a_variant_of_the_gpu_names_no_committed_gpu(rtx: str, b200: str, tmp_path: Path,
                                                                  committed: list[Committed]) -> None:
    found = _found(tmp_path, Invoice(named_lines(rtx=rtx, b200=b200)), committed)
    (line,) = [f for f in found if f.code == "line-not-identified"]
    assert "a variant" in line.message, line.message
    assert "committed-not-billed" in {f.code for f in found}


def test_a_variant_named_beside_the_gpu_slug_is_a_conflict_and_french_elision_is_no_variant(
        tmp_path: Path, committed: list[Committed]) -> None:
    lines = example_lines()
    lines[0].name = "RTX 4090 D, 7-day package"
    found = _found(tmp_path, Invoice(lines), committed)
    assert [(f.code, f.line) for f in found] == [("line-identification-conflict", 1)], found
    french = named_lines(rtx="Forfait RTX 4090 d'une durée de 7 jours")
    assert _found(tmp_path, Invoice(french), committed) == []


def test_a_variant_the_committed_packages_name_is_that_gpu() -> None:
    """"unless the tariffs list them": a committed RTX 4090 D is named by "RTX 4090 D", and a plain RTX 4090 then
    by "RTX 4090" alone."""
    from generator.invoice.document import InvoiceLine
    from generator.invoice.identify import Known, identify

    known = [Known("rtx-4090", 7, "GeForce RTX 4090", ()), Known("rtx-4090-d", 7, "GeForce RTX 4090 D", ())]

    def named(text: str) -> tuple[str | None, int | None]:
        line = InvoiceLine(1, "1", None, text, None, None, None, None, None)
        identity = identify(line, known)
        return identity.gpu, identity.days

    assert named("GeForce RTX 4090 D, 7 days") == ("rtx-4090-d", 7)
    assert named("GeForce RTX 4090, 7 days") == ("rtx-4090", 7)
    assert named("GeForce RTX 4090 Ti, 7 days") == (None, 7)


def test_a_document_allowance_counts_in_its_categorys_basis_and_its_category_is_stated(
        tmp_path: Path, committed: list[Committed]) -> None:
    """An allowance of 100.00 at S 20 % lowers the S basis to 2,081.00: a breakdown still stating 2,181.00 taxes
    what was not billed; a charge taxed at a category the breakdown does not state is in no total."""
    allowance = [(D("-100.00"), "Rabatt", "S", D("20.00"))]
    genuine = Invoice(example_lines(), allowances=allowance)
    assert {f.code for f in _found(tmp_path, genuine, committed)} == {"total-differs"}  # 2081.00 billed
    stale = Invoice(example_lines(), allowances=allowance,
                    header_taxes=[("S", D("20.00"), D("2181.00"), D("436.20"))])
    (basis,) = [f for f in _found(tmp_path, stale, committed) if f.code == "tax-basis-inconsistent"]
    assert (basis.billed, basis.committed) == ("2181.00", "2081.00") and "allowances (100.00)" in basis.message
    charge = Invoice(example_lines(), allowances=[(D("50.00"), "Express", "S", D("7.00"))],
                     header_taxes=[("S", D("20.00"), D("2181.00"), D("436.20"))])
    (unstated,) = [f for f in _found(tmp_path, charge, committed) if f.code == "line-tax-category"]
    assert unstated.line is None and unstated.billed == "S at 7.00 %", unstated
