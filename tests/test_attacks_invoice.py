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
from conftest import gpu_audit
from invoices import Invoice, cii_xml, example_lines, facturx_pdf

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
