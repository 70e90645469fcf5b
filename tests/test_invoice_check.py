"""`gpu-audit invoice check`: generated Factur-X invoices against a verified bundle of inputs/example."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from decimal import Decimal
from pathlib import Path

import pytest
from conftest import gpu_audit
from invoices import Invoice, Line, cii_xml, example_lines, facturx_pdf, invoice_check, visible_pdf

from generator.invoice.check import Committed, InvoiceFinding, committed_packages, reconcile
from generator.invoice.read import read_invoice

# what is made of a verified bundle and an invoice read is what these tests are about, not the readers' limits
pytestmark = pytest.mark.usefixtures("note_parsed_here", "invoice_read_here")

D = Decimal



# A small Python process runs the command and reports the peak RSS of it and its children (KiB): measured in
# the test process, a child forked from it would count the test's own pages.
PEAK = ("import resource, subprocess, sys\n"
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "sys.stdout.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) + '\\n' + r.stderr)\n"
        "sys.exit(r.returncode)\n")


def _peak(*args: str) -> tuple[int, int, str]:
    """Exit status, peak RSS in KiB, and stderr of `gpu-audit ARGS`."""
    r = subprocess.run([sys.executable, "-c", PEAK, sys.executable, "-m", "generator", *args], capture_output=True,
                       text=True, timeout=300, check=False)
    peak, _, err = r.stdout.partition("\n")
    return r.returncode, int(peak), err



def test_the_matching_invoice_checks_out(tmp_path: Path, signed: tuple[Path, Path]) -> None:
    r = invoice_check(tmp_path, signed, Invoice(example_lines()))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OK: invoice ITG-2026-0042 bills exactly the committed packages: 2181.00 USD net of tax" in r.stdout
    assert "tax 436.20 USD (shown apart, not compared)" in r.stdout


def test_the_bare_cii_xml_and_a_zip_bundle_check_out_too(tmp_path: Path, signed: tuple[Path, Path]) -> None:
    bundle, cert = signed
    xml = tmp_path / "factur-x.xml"
    xml.write_bytes(cii_xml(Invoice(example_lines())))
    z = tmp_path / "bundle.zip"
    with zipfile.ZipFile(z, "w") as out:
        for path in sorted(bundle.rglob("*")):
            if path.is_file():
                out.write(path, Path("bundle") / path.relative_to(bundle))
    assert gpu_audit("invoice", "check", str(xml), str(z), "--trust", str(cert)).returncode == 0
    note = bundle / "data" / "decision-note.pdf"
    assert gpu_audit("invoice", "check", str(xml), str(note), "--trust", str(cert)).returncode == 0


def _lines(**changes: dict[str, object]) -> list[Line]:
    lines = example_lines()
    for index, change in changes.items():
        for key, value in change.items():
            setattr(lines[int(index[1:])], key, value)
    return lines


MISMATCHES = {
    "billed-not-committed": (example_lines() + [Line("h200", 7, D("1"), D("500.00"))], 3, "h200"),
    "committed-not-billed": (example_lines()[:1], None, "b200, 7-day package (b200-batch)"),
    "lots-differ": (_lines(l1={"quantity": D("2"), "total": None}), 2, "2 lot(s) billed, 1 committed"),
    "unit-price-differs": (_lines(l1={"unit_price": D("2171.00")}), 2, "the tariff's price per lot is 2071.00 USD"),
    "pro-rated": (_lines(l0={"quantity": D("96"), "unit": "HUR", "unit_price": D("0.65")}), 1,
                  "no hourly pro-rating"),
    "billed-per-gpu": (_lines(l1={"quantity": D("2"), "unit_price": D("1035.50")}), 2,
                       "a lot of 2 GPUs is one price, billed per lot: 1 x 2071.00 USD"),
}


@pytest.fixture(scope="module")
def committed(signed: tuple[Path, Path]) -> list[Committed]:
    """The packages the signed bundle's decision committed."""
    return committed_packages(json.loads((signed[0] / "data" / "decision.json").read_text(encoding="utf-8")))


def _findings(tmp_path: Path, invoice: Invoice, committed: list[Committed]) -> list[InvoiceFinding]:
    """The findings of the invoice's CII XML against the committed packages (the reader's child included; the
    CLI, which verifies the bundle first, is tested apart)."""
    path = tmp_path / "invoice.xml"
    path.write_bytes(cii_xml(invoice))
    return reconcile(read_invoice(path), committed)


@pytest.mark.parametrize("code", sorted(MISMATCHES))
def test_each_mismatch_names_the_invoice_line_and_the_decisions_figure(code: str, tmp_path: Path,
                                                                      committed: list[Committed]) -> None:
    lines, line, figure = MISMATCHES[code]
    found = [f for f in _findings(tmp_path, Invoice(lines), committed) if f.code == code]
    assert found and found[0].line == line, found
    assert figure in found[0].message, found[0]


def test_the_cli_shows_each_finding_with_its_line_and_exits_1(tmp_path: Path, signed: tuple[Path, Path]) -> None:
    lines, line, figure = MISMATCHES["lots-differ"]
    r = invoice_check(tmp_path, signed, Invoice(lines))
    assert r.returncode == 1, r.stdout + r.stderr
    shown = [row for row in r.stdout.splitlines() if ": lots-differ:" in row]
    assert shown and shown[0].startswith(f"invoice line {line}: lots-differ: ") and figure in shown[0], r.stdout
    assert "[billed 2; committed 1]" in shown[0]
    assert r.stdout.splitlines()[-1].startswith("FAILED: 2 findings")  # the line and the total


@pytest.mark.parametrize("invoice,code", [
    (Invoice(example_lines(), type_code="381"), "document-type"),  # a credit note is no bill
    (Invoice(example_lines(), extra_totals={"grand_total": D("9999.00"), "due_amount": D("9999.00")}),
     "gross-inconsistent"),
    (Invoice(example_lines(), extra_totals={"due_amount": D("9999.00")}), "due-inconsistent"),
    (Invoice(_lines(l0={"unit": "ANN"})), "pro-rated"),  # billed by the year
    (Invoice(_lines(l0={"unit": "KGM"})), "unit"),
    (Invoice(_lines(l0={"unit_price": D("110.004"), "total": D("110.00")})), "unit-price-differs"),  # not rounded
], ids=["credit-note", "gross", "due", "years", "kilograms", "sub-cent"])
def test_what_an_invoice_must_hold_besides_its_lines(invoice: Invoice, code: str, tmp_path: Path,
                                                    committed: list[Committed]) -> None:
    assert code in {f.code for f in _findings(tmp_path, invoice, committed)}


def test_an_amount_too_long_for_any_invoice_is_exit_2(tmp_path: Path, signed: tuple[Path, Path]) -> None:
    xml = cii_xml(Invoice(example_lines())).replace(b"<ram:ChargeAmount>110.00</ram:ChargeAmount>",
                                                    b"<ram:ChargeAmount>1" + b"0" * 40 + b".00</ram:ChargeAmount>")
    r = invoice_check(tmp_path, signed, xml, name="long.xml")
    assert r.returncode == 2 and "more than 24 digits" in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_another_currency_is_a_finding(tmp_path: Path, committed: list[Committed]) -> None:
    (found,) = [f for f in _findings(tmp_path, Invoice(example_lines(), currency="EUR"), committed)
                if f.code == "currency"]
    assert found.line is None and found.message.startswith("the invoice is in EUR")


def test_the_total_net_of_tax_is_compared_and_tax_never(tmp_path: Path, committed: list[Committed]) -> None:
    assert _findings(tmp_path, Invoice(example_lines(), vat_percent=D("0.00")), committed) == []  # tax: not compared
    found = _findings(tmp_path, Invoice(example_lines(), extra_totals={"tax_basis_total": D("2281.00")}), committed)
    # a net total that is not the sum of the lines (EN 16931 BR-CO-13) is one finding, its gross another
    assert [f.code for f in found] == ["net-inconsistent", "gross-inconsistent", "total-differs"]
    assert "the campaign's committed total is 2181.00 USD" in found[2].message


def test_json_gives_the_same_result(tmp_path: Path, signed: tuple[Path, Path]) -> None:
    result = json.loads(invoice_check(tmp_path, signed, Invoice(example_lines()), "--json").stdout)
    assert result["ok"] is True and result["findings"] == [] and result["committed_total_usd_minor"] == 218100
    assert result["invoice"]["tax_total"] == "436.20" and result["bundle"]["verified"] is True


def test_a_bundle_that_does_not_verify_is_not_reconciled(tmp_path: Path, signed: tuple[Path, Path]) -> None:
    bundle, cert = signed
    invoice = tmp_path / "invoice.pdf"
    invoice.write_bytes(facturx_pdf(Invoice(example_lines())))
    r = gpu_audit("invoice", "check", str(invoice), str(bundle))  # no trust anchor: verify never says OK
    assert r.returncode == 1 and "the bundle does not verify" in r.stdout


def test_an_unreadable_invoice_is_exit_2(tmp_path: Path, signed: tuple[Path, Path]) -> None:
    r = invoice_check(tmp_path, signed, visible_pdf(Invoice(example_lines())))
    assert r.returncode == 2 and "no Factur-X or ZUGFeRD XML attachment" in r.stderr
    assert r.stderr.count("\n") == 1


# ------------------------------------------------------------------------------------------ hostile invoices

XML_HEAD = b'<?xml version="1.0"?>\n'
CII = b'<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100">'
HOSTILE = {
    "billion-laughs": XML_HEAD + b'<!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
    + b"".join(b'<!ENTITY %c "&%c;&%c;&%c;&%c;&%c;&%c;&%c;&%c;&%c;&%c;">' % ((c,) + (c - 1,) * 10)
               for c in range(ord("b"), ord("k"))) + b"]>" + CII + b"&j;</rsm:CrossIndustryInvoice>",
    "external-entity": XML_HEAD + b'<!DOCTYPE x [<!ENTITY e SYSTEM "http://169.254.169.254/latest/meta-data/">]>'
    + CII + b"&e;</rsm:CrossIndustryInvoice>",
    "deep": XML_HEAD + CII + b"<a>" * 5000 + b"</a>" * 5000 + b"</rsm:CrossIndustryInvoice>",
    "huge": XML_HEAD + CII + b"<a>" + b"x" * (20 * 2**20) + b"</a></rsm:CrossIndustryInvoice>",
    "not-cii": XML_HEAD + b"<Catalogue xmlns='urn:example:price-list'/>",  # no format the factur-x library reads
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_xml_is_exit_2_bounded_and_offline(case: str, tmp_path: Path, signed: tuple[Path, Path]) -> None:
    path = tmp_path / "hostile.xml"
    path.write_bytes(HOSTILE[case])
    bundle, cert = signed
    code, peak, err = _peak("invoice", "check", str(path), str(bundle), "--trust", str(cert))
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert peak < 400 * 1024, peak  # KiB: the reader's child is capped at 512 MiB of address space


def test_a_pdf_with_many_or_enormous_attachments_is_exit_2(tmp_path: Path, signed: tuple[Path, Path]) -> None:
    import pikepdf

    base = tmp_path / "base.pdf"
    base.write_bytes(facturx_pdf(Invoice(example_lines())))
    with pikepdf.open(base) as pdf:
        for n in range(80):
            pdf.attachments[f"extra-{n}.txt"] = pikepdf.AttachedFileSpec(pdf, b"x")
        pdf.save(tmp_path / "many.pdf")
    bundle, cert = signed
    r = gpu_audit("invoice", "check", str(tmp_path / "many.pdf"), str(bundle), "--trust", str(cert))
    assert r.returncode == 2 and "80" in r.stderr or "attachments" in r.stderr, r.stderr
    # a factur-x.xml that inflates to 200 MB, made in a child process: a child forked from a big test process
    # would count the test's own pages in its peak RSS
    bomb = ("import pikepdf, sys\nwith pikepdf.open(sys.argv[1]) as pdf:\n"
            "    pdf.attachments['factur-x.xml'].obj.EF.F.write(b'<' + b' ' * (200 * 2**20) + b'/>')\n"
            "    pdf.save(sys.argv[2])\n")
    subprocess.run([sys.executable, "-c", bomb, str(base), str(tmp_path / "bomb.pdf")], check=True, timeout=120)
    assert (tmp_path / "bomb.pdf").stat().st_size < 2**20  # compressed: the inflation is the reader's
    code, peak, err = _peak("invoice", "check", str(tmp_path / "bomb.pdf"), str(bundle), "--trust", str(cert))
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert peak < 400 * 1024, peak  # KiB


def test_two_invoice_xmls_in_one_pdf_are_refused(tmp_path: Path, signed: tuple[Path, Path]) -> None:
    import pikepdf

    base = tmp_path / "base.pdf"
    base.write_bytes(facturx_pdf(Invoice(example_lines())))
    with pikepdf.open(base) as pdf:
        other = cii_xml(Invoice(example_lines()[:1]))
        pdf.attachments["zugferd-invoice.xml"] = pikepdf.AttachedFileSpec(pdf, other, mime_type="text/xml")
        pdf.save(tmp_path / "two.pdf")
    bundle, cert = signed
    r = gpu_audit("invoice", "check", str(tmp_path / "two.pdf"), str(bundle), "--trust", str(cert))
    assert r.returncode == 2 and "ambiguous" in r.stderr, r.stderr


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_the_reader_refuses_each_hostile_xml_with_sockets_disabled(case: str, tmp_path: Path) -> None:
    """The reader itself, in this process with pytest-socket refusing every socket: a request would fail the
    test with SocketBlockedError instead of the refusal."""
    from pytest_socket import disable_socket, enable_socket

    from generator.invoice import read as invoice_read

    path = tmp_path / "x.xml"
    path.write_bytes(HOSTILE[case])
    disable_socket()
    try:
        answer = invoice_read._answer({"path": str(path)})
    finally:
        enable_socket()
    assert "error" in answer and set(answer) <= {"error", "detail"}, answer  # detail: the parser's own words
    expected = {"billion-laughs": "DTD or entities", "external-entity": "DTD or entities", "deep": "well-formed",
                "huge": "larger than", "not-cii": "not a UN/CEFACT CII"}[case]
    assert expected in answer["error"], answer
