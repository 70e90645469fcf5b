"""Invoices as providers write them (issue #35): lines named, not coded; article IDs; the EN 16931 examples' shapes;
another currency; other formats. Each invoice is made by drafthorse (and the factur-x library), not by gpu-audit."""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pikepdf
import pytest
from invoices import (
    ARTICLES,
    Invoice,
    Line,
    cii_xml,
    en16931_invoice,
    en16931_lines,
    example_lines,
    invoice_check,
    named_lines,
    visible_pdf,
)

from generator.invoice.check import Committed, InvoiceFinding, committed_packages, reconcile
from generator.invoice.read import read_invoice

# what is made of a verified bundle and an invoice read is what these tests are about, not the readers' limits
pytestmark = pytest.mark.usefixtures("note_parsed_here", "invoice_read_here")

D = Decimal
EXAMPLE = Path(__file__).resolve().parent.parent / "inputs" / "example"




@pytest.fixture(scope="module")
def committed(signed: tuple[Path, Path]) -> list[Committed]:
    return committed_packages(json.loads((signed[0] / "data" / "decision.json").read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def registered(committed: list[Committed]) -> list[Committed]:
    """The same packages with the provider's article IDs registered (the protocol's rental.article_ids)."""
    return [replace(c, article_ids=(ARTICLES[c.gpu],)) for c in committed]


def _findings(tmp_path: Path, invoice: Invoice, committed: list[Committed]) -> list[InvoiceFinding]:
    path = tmp_path / "invoice.xml"
    path.write_bytes(cii_xml(invoice))
    return reconcile(read_invoice(path), committed)


# ------------------------------------------------------------------------------------------ lines named, not coded

def test_the_drafthorse_invoice_naming_its_packages_reconciles_and_shows_what_matched_what(
        tmp_path: Path, signed: tuple[Path, Path]) -> None:
    """The issue's example: "rtx-4090 package 7 days" 110.00 and "b200 package 7 days" 2,071.00 USD, no seller item
    ID, no attribute, XSD-valid and embedded in a PDF/A-3 by the factur-x library."""
    r = invoice_check(tmp_path, signed, Invoice(named_lines()))
    assert r.returncode == 0, r.stdout + r.stderr
    rows = r.stdout.splitlines()
    assert ('billed line 1: "rtx-4090 package 7 days" (no item ID): quantity 1 C62 (one), unit price 110.00, amount '
            "110.00 USD -> rtx-4090, 7-day package (rtx4090-batch), identified by its name") in rows, r.stdout
    assert ('billed line 2: "b200 package 7 days" (no item ID): quantity 1 C62 (one), unit price 2071.00, amount '
            "2071.00 USD -> b200, 7-day package (b200-batch), identified by its name") in rows, r.stdout
    assert "net total 2181.00 USD; tax 436.20 USD (shown apart, not compared); gross 2617.20 USD" in rows
    assert rows[-1] == ("OK: invoice ITG-2026-0042 bills exactly the committed packages: 2181.00 USD net of tax "
                        "billed, 2181.00 USD committed"), r.stdout
    result = json.loads(invoice_check(tmp_path, signed, Invoice(named_lines()), "--json").stdout)
    lines = result["invoice"]["lines"]
    assert [(x["number"], x["name"], x["quantity"], x["unit"], x["unit_price"], x["total"]) for x in lines] == [
        (1, "rtx-4090 package 7 days", "1", "C62", "110.00", "110.00"),
        (2, "b200 package 7 days", "1", "C62", "2071.00", "2071.00")]
    assert [x["package"] for x in lines] == [{"gpu": "rtx-4090", "days": 7, "experiments": ["rtx4090-batch"]},
                                             {"gpu": "b200", "days": 7, "experiments": ["b200-batch"]}]
    assert [x["identified_by"] for x in lines] == [["name"], ["name"]] and result["ok"] is True


@pytest.mark.parametrize("rtx", [
    "GeForce RTX 4090 - Mietpaket 7 Tage",  # the tariffs' model name, German
    "RTX-4090 (7-Tage-Paket)",
    "rtx 4090, forfait 7 jours",  # French
    "RTX4090 租用 7 天",  # Chinese
    "RTX 4090 7天",
    "NVIDIA GeForce RTX 4090, 7-day package",
])
def test_a_line_naming_the_gpu_and_the_duration_in_any_of_the_four_languages_is_identified(
        rtx: str, tmp_path: Path, committed: list[Committed]) -> None:
    assert _findings(tmp_path, Invoice(named_lines(rtx=rtx)), committed) == []


@pytest.mark.parametrize("name,why", [
    ("Rechenleistung Oktober", "its name and description name no committed GPU (slug or model name) and no package "
                               "duration"),
    ("RTX 4090 package", "its name and description name rtx-4090 and no package duration"),
    ("GPU package 7 days", "its name and description name no committed GPU (slug or model name) and 7 days"),
    ("RTX 4090 package 7 days + 3 days", "several durations (3, 7 days)"),
    ("GB200 package 7 days", "name no committed GPU"),  # b200 inside a longer word is no b200
])
def test_a_line_that_names_no_package_is_one_finding_quoting_it_with_the_fix(
        name: str, why: str, tmp_path: Path, committed: list[Committed]) -> None:
    lines = named_lines(rtx=name)
    lines[0].buyer_id = "PO-7"
    found = _findings(tmp_path, Invoice(lines), committed)
    (line,) = [f for f in found if f.code == "line-not-identified"]
    assert line.line == 1 and why in line.message, line.message
    assert f'invoice line 1 "{name}" (buyer\'s item ID PO-7; amount 110.00)' in line.message, line.message
    assert "register the provider's article ID of the package in the protocol (experiments[].rental.article_ids)" \
        in line.message
    assert [f.code for f in found] == ["line-not-identified", "committed-not-billed"]  # the rtx-4090 package


# ------------------------------------------------------------------------------------------ article IDs

def test_the_providers_article_id_identifies_a_line_whatever_its_name(tmp_path: Path,
                                                                    registered: list[Committed]) -> None:
    lines = en16931_lines(rtx="Rechenleistung, Paket A", b200="Rechenleistung, Paket B")
    assert _findings(tmp_path, en16931_invoice(lines), registered) == []


def test_a_line_its_article_id_and_its_name_identify_differently_is_a_finding(tmp_path: Path,
                                                                             registered: list[Committed]) -> None:
    lines = en16931_lines(rtx="B200 (lot de 2 GPU), forfait 7 jours")  # the rtx-4090 article, named b200
    (found,) = [f for f in _findings(tmp_path, en16931_invoice(lines), registered)]
    assert found.code == "line-identification-conflict" and found.line == 1, found
    assert "its article ID IGPU-4090-7D tells rtx-4090, 7 days; its name or description names b200" in found.message
    days = en16931_lines(rtx="GeForce RTX 4090, Mietpaket 3 Tage")
    assert [f.code for f in _findings(tmp_path, en16931_invoice(days), registered)] == ["line-identification-conflict"]


@pytest.fixture(scope="module")
def article_bundle(tmp_path_factory: pytest.TempPathFactory, example_keys: tuple[Path, Path]) -> Path:
    """A signed bundle of inputs/example whose protocol registers the provider's article IDs."""
    import shutil

    from generator.cli.main import main

    work = tmp_path_factory.mktemp("articles")
    shutil.copytree(EXAMPLE, work / "campaign")
    protocol = work / "campaign" / "protocol.json"
    doc = json.loads(protocol.read_text(encoding="utf-8"))
    for experiment in doc["experiments"]:
        experiment["rental"]["article_ids"] = [ARTICLES[experiment["rental"]["gpu"]]]
    protocol.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    key, cert = example_keys
    assert main(["build", str(work / "campaign"), "-o", str(work / "bundle"), "--key", str(key), "--cert", str(cert),
                 "--quiet"]) == 0
    return work / "bundle"


def test_article_ids_registered_in_the_protocol_reach_the_invoice_check(
        tmp_path: Path, article_bundle: Path, signed: tuple[Path, Path]) -> None:
    decision = json.loads((article_bundle / "data" / "decision.json").read_text(encoding="utf-8"))
    assert [e["package"]["article_ids"] for e in decision["experiments"]] == [["IGPU-4090-7D"], ["IGPU-B200-7D"]]
    invoice = en16931_invoice(en16931_lines(rtx="Rechenleistung, Paket A", b200="Rechenleistung, Paket B"))
    r = invoice_check(tmp_path, (article_bundle, signed[1]), invoice)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "-> rtx-4090, 7-day package (rtx4090-batch), identified by its article ID" in r.stdout, r.stdout
    assert "; article ID IGPU-4090-7D" in r.stdout
    r = invoice_check(tmp_path, signed, invoice)  # the same invoice against a bundle that registers none
    assert r.returncode == 1 and r.stdout.count(": line-not-identified: ") == 2, r.stdout


def test_article_ids_are_one_per_package(campaign: Path, run_cli) -> None:
    protocol = campaign / "protocol.json"
    doc = json.loads(protocol.read_text(encoding="utf-8"))
    doc["experiments"][0]["rental"]["article_ids"] = ["IGPU-4090-7D", "IGPU-4090-3D"]
    protocol.write_text(json.dumps(doc), encoding="utf-8")
    r = run_cli("validate", str(campaign))
    assert r.code == 1 and "rental-article-ids-mismatch" in r.out, r.out
    assert "rents 1 package(s) (7 days) but lists 2 article ID(s)" in r.out


# ------------------------------------------------------------------------------------------ the EN 16931 shapes

def test_an_invoice_in_the_en16931_examples_shapes_reconciles(tmp_path: Path, committed: list[Committed],
                                                              registered: list[Committed]) -> None:
    """The seller's item ID and a name, buyer-assigned IDs, a GTIN, notes on the document and its lines, two tax
    categories (19 % and reverse charge): identified by name without registered articles, and by article ID."""
    assert _findings(tmp_path, en16931_invoice(), committed) == []
    assert _findings(tmp_path, en16931_invoice(), registered) == []


def test_an_allowance_on_a_line_is_named_not_taken_for_pro_rating(tmp_path: Path,
                                                                  registered: list[Committed]) -> None:
    lines = en16931_lines()
    lines[1].allowance = (D("71.00"), "Treuerabatt")
    found = _findings(tmp_path, en16931_invoice(lines), registered)
    assert [f.code for f in found] == ["line-allowance-charge", "total-differs"], found
    assert "an allowance of 71.00 (Treuerabatt) on the line brings it to 2000.00" in found[0].message


def test_document_allowances_and_charges_are_shown_in_the_total_finding(tmp_path: Path,
                                                                        registered: list[Committed]) -> None:
    invoice = en16931_invoice(allowances=[(D("-50.00"), "Rabatt", "S", D("19.00")),
                                          (D("5.00"), "Bereitstellung", "S", D("19.00"))])
    found = _findings(tmp_path, invoice, registered)
    assert [f.code for f in found] == ["total-differs"], found
    assert ("is 2136.00 USD (its lines' 2181.00 less the document's allowances 50.00 plus its charges 5.00)"
            in found[0].message), found[0].message


def test_the_sub_lines_of_an_extended_invoice_are_shown_and_not_counted(tmp_path: Path,
                                                                        signed: tuple[Path, Path]) -> None:
    """Factur-X EXTENDED: a GROUP line bills the b200 package, its two DETAIL lines (one per GPU of the lot) are
    part of it and in no total (the totals leave them out, as the profile says)."""
    details = [Line("b200", 7, D("1"), D("1035.50"), name=f"B200 GPU {n} of the lot, 7 days", seller_id=None,
                    attribute=False, status="DETAIL") for n in (1, 2)]
    lines = named_lines()
    lines[1].status = "GROUP"
    r = invoice_check(tmp_path, signed, Invoice(lines + details, extended=True))
    assert r.returncode == 0, r.stdout + r.stderr
    assert 'billed line 3: "B200 GPU 1 of the lot, 7 days"' in r.stdout
    assert "-> a DETAIL line, which bills nothing of its own (not compared)" in r.stdout, r.stdout


# ------------------------------------------------------------------------------------------ currency, sums

def test_an_invoice_in_another_currency_is_one_finding_and_no_amount_is_compared(tmp_path: Path,
                                                                                 signed: tuple[Path, Path]) -> None:
    lines = named_lines()
    lines[1].unit_price = D("1900.00")  # would differ from the tariff, were it compared
    r = invoice_check(tmp_path, signed, Invoice(lines, currency="EUR"))
    assert r.returncode == 1, r.stdout + r.stderr
    findings = [row for row in r.stdout.splitlines() if row.startswith(("invoice: ", "invoice line "))]
    assert len(findings) == 1 and findings[0].startswith("invoice: currency: the invoice is in EUR"), r.stdout
    assert "no amount was compared" in findings[0]
    assert r.stdout.splitlines()[-1] == ("FAILED: 1 finding: the invoice is not in the decision's currency, so "
                                         "nothing was compared (billed 2010.00 EUR net of tax, committed 2181.00 USD)")


@pytest.mark.parametrize("net", [D("2181.01"), D("2180.99")])
def test_a_net_total_one_cent_off_is_a_finding(net: Decimal, tmp_path: Path, committed: list[Committed]) -> None:
    found = _findings(tmp_path, Invoice(named_lines(), extra_totals={"tax_basis_total": net}), committed)
    assert "total-differs" in [f.code for f in found], found


def test_a_package_billed_on_two_lines_under_the_committed_total_is_a_finding(tmp_path: Path,
                                                                             committed: list[Committed]) -> None:
    """The stated net total is the committed one; the lines bill the b200 package twice."""
    lines = named_lines() + [Line("b200", 7, D("1"), D("2071.00"), name="b200 package 7 days", seller_id=None,
                                  attribute=False)]
    found = _findings(tmp_path, Invoice(lines, extra_totals={"tax_basis_total": D("2181.00")}), committed)
    (twice,) = [f for f in found if f.code == "billed-twice"]
    assert twice.line == 3 and "a package another line bills already" in twice.message, twice
    assert "total-differs" not in [f.code for f in found]  # the stated total is the committed one


# ------------------------------------------------------------------------------------------ other formats

ZUGFERD_1 = (b'<?xml version="1.0" encoding="UTF-8"?>\n'
             b'<rsm:CrossIndustryDocument xmlns:rsm="urn:ferd:CrossIndustryDocument:invoice:1p0" '
             b'xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:12">'
             b"<rsm:HeaderExchangedDocument><ram:ID>471102</ram:ID><ram:TypeCode>380</ram:TypeCode>"
             b"</rsm:HeaderExchangedDocument></rsm:CrossIndustryDocument>")
UBL = (b'<?xml version="1.0" encoding="UTF-8"?>\n'
       b'<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"'
       b' xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"><cbc:ID>RR123456</cbc:ID>'
       b"</Invoice>")


def _zugferd_1_pdf() -> bytes:
    """A PDF carrying a ZUGFeRD 1.0 XML under its usual name, as pikepdf attaches it."""
    import io

    pdf = pikepdf.open(io.BytesIO(visible_pdf(Invoice(example_lines()))))
    pdf.attachments["ZUGFeRD-invoice.xml"] = pikepdf.AttachedFileSpec(pdf, ZUGFERD_1, mime_type="text/xml")
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


@pytest.mark.parametrize("case", ["zugferd-1-xml", "zugferd-1-pdf", "ubl"])
def test_a_zugferd_1_without_profile_and_a_ubl_invoice_say_what_they_are_and_what_to_do(
        case: str, tmp_path: Path, signed: tuple[Path, Path]) -> None:
    """A ZUGFeRD 1.0 XML declaring no profile cannot be checked against its XSD (the factur-x library skips it
    too): exit 2 naming the standard; a UBL invoice, which the library reads, is one finding (exit 1)."""
    data = {"zugferd-1-xml": lambda: ZUGFERD_1, "zugferd-1-pdf": _zugferd_1_pdf, "ubl": lambda: UBL}[case]()
    r = invoice_check(tmp_path, signed, data, name="invoice.pdf" if case.endswith("pdf") else "invoice.xml")
    if case == "ubl":
        assert r.returncode == 1 and r.stderr == "", r.stdout + r.stderr
        assert "invoice-format: invoice.xml is a UBL 2.1 invoice" in r.stdout, r.stdout
        assert "ask the provider for the same invoice as Factur-X or ZUGFeRD" in r.stdout, r.stdout
        return
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stdout + r.stderr
    assert "declares no profile (BT-24" in r.stderr and "the ZUGFeRD 1.0 schema of its profile" in r.stderr, r.stderr
    assert "ask the provider for the invoice declaring its ZUGFeRD 1.0 profile" in r.stderr, r.stderr
