"""Invoices as received (issue #50): read wherever the factur-x library reads them, refused in sentences for finance.

The PDFs are made by real tools in the providers' shapes: the factur-x library's own (its /EF direct), pikepdf's
with the /EF made indirect, and Mustang's (PDFBox's) layout: the file specification in the name tree and in the
catalog's /AF, /AFRelationship /Alternative or /Data, an indirect /EF whose /F and /UF name one stream. Each is
read in this process (the reader's `_answer`, the child's work, without a child per invoice) and reconciled.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import replace
from datetime import date
from decimal import Decimal
from pathlib import Path

import facturx
import pikepdf
import pytest
from drafthorse.models.document import Document
from invoices import Invoice, cii_xml, example_lines, facturx_pdf, visible_pdf
from lxml import etree

from generator.invoice import read as invoice_read
from generator.invoice.check import Committed, committed_packages, reconcile
from generator.invoice.embedded import xml_of_pdf

# what is made of a verified bundle and an invoice read is what these tests are about, not the readers' limits
pytestmark = pytest.mark.usefixtures("note_parsed_here", "invoice_read_here")

RAM = "{urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100}"


@pytest.fixture(scope="module")
def committed(signed: tuple[Path, Path]) -> list[Committed]:
    return committed_packages(json.loads((signed[0] / "data" / "decision.json").read_text(encoding="utf-8")))


def _saved(pdf: pikepdf.Pdf) -> bytes:
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


def pikepdf_indirect_ef(xml: bytes) -> bytes:
    """pikepdf's attachment (its /EF direct, as pikepdf writes it), the /EF then made an indirect object."""
    pdf = pikepdf.open(io.BytesIO(visible_pdf(Invoice(example_lines()))))
    pdf.attachments["factur-x.xml"] = pikepdf.AttachedFileSpec(pdf, xml, mime_type="text/xml")
    spec = pdf.Root.Names.EmbeddedFiles.Names[1]
    assert not spec.EF.is_indirect  # pikepdf writes it direct
    spec.EF = pdf.make_indirect(spec.EF)
    return _saved(pdf)


def mustang_pdf(xml: bytes, relationship: str = "/Alternative", kids: bool = False) -> bytes:
    """The layout Mustang (PDFBox) writes, made with pikepdf: one file specification, indirect, in the name tree
    (under one level of /Kids when `kids`) and in the catalog's /AF, with /AFRelationship; its /EF an indirect
    dictionary whose /F and /UF are one stream of /Subtype text/xml with its /Params."""
    pdf = pikepdf.open(io.BytesIO(visible_pdf(Invoice(example_lines()))))
    stream = pdf.make_stream(xml, Type=pikepdf.Name.EmbeddedFile, Subtype=pikepdf.Name("/text/xml"),
                             Params=pikepdf.Dictionary(Size=len(xml), ModDate="D:20261010120000+02'00'"))
    ef = pdf.make_indirect(pikepdf.Dictionary(F=stream, UF=stream))
    spec = pdf.make_indirect(pikepdf.Dictionary(
        Type=pikepdf.Name.Filespec, F="factur-x.xml", UF="factur-x.xml", EF=ef,
        Desc="Invoice metadata conforming to ZUGFeRD standard", AFRelationship=pikepdf.Name(relationship)))
    leaf = pikepdf.Dictionary(Names=pikepdf.Array([pikepdf.String("factur-x.xml"), spec]))
    if kids:
        leaf.Limits = pikepdf.Array([pikepdf.String("factur-x.xml")] * 2)
        leaf = pikepdf.Dictionary(Kids=[pdf.make_indirect(leaf)])
    pdf.Root.Names = pikepdf.Dictionary(EmbeddedFiles=pdf.make_indirect(leaf))
    pdf.Root.AF = pdf.make_indirect(pikepdf.Array([spec]))
    return _saved(pdf)


SHAPES = {
    "factur-x library": lambda xml: facturx.generate_from_binary(visible_pdf(Invoice(example_lines())), xml,
                                                                 flavor="factur-x", level="en16931"),
    "pikepdf, /EF indirect": pikepdf_indirect_ef,
    "Mustang, /Alternative": mustang_pdf,
    "Mustang, /Data": lambda xml: mustang_pdf(xml, "/Data"),
    "Mustang, under /Kids": lambda xml: mustang_pdf(xml, kids=True),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_providers_shape_is_read_as_the_factur_x_library_reads_it_and_reconciled(
        shape: str, tmp_path: Path, committed: list[Committed]) -> None:
    xml = cii_xml(Invoice(example_lines()))
    data = SHAPES[shape](xml)
    with pikepdf.open(io.BytesIO(data)) as pdf:  # the factur-x library writes /EF direct, the others not
        assert pdf.attachments["factur-x.xml"].obj.EF.is_indirect == (shape != "factur-x library")
    assert facturx.get_xml_from_pdf(data, check_xsd=True) == ("factur-x.xml", xml)
    assert xml_of_pdf(data) == ("factur-x.xml", xml)
    path = tmp_path / "invoice.pdf"
    path.write_bytes(data)
    invoice = invoice_read.invoice_of(path, invoice_read._answer({"path": str(path)}))
    assert invoice.source == "invoice.pdf (factur-x.xml)" and reconcile(invoice, committed) == []


def test_a_mustang_style_invoice_checks_out_on_the_command_line(tmp_path: Path, signed: tuple[Path, Path],
                                                               run_cli) -> None:
    path = tmp_path / "mustang.pdf"
    path.write_bytes(mustang_pdf(cii_xml(Invoice(example_lines()))))
    r = run_cli("invoice", "check", str(path), str(signed[0]), "--trust", str(signed[1]))
    assert r.code == 0 and r.out.splitlines()[-1].startswith("OK: invoice ITG-2026-0042"), r.out + r.err


# ------------------------------------------------------------------------------------------ ZUGFeRD 1.0

# A ZUGFeRD 1.0 COMFORT invoice as its specification lays it out (CII D12: HeaderExchangedDocument, the
# SpecifiedSupplyChainTrade* parts, ApplicablePercent); no tool writes ZUGFeRD 1.0 any more (the factur-x
# library refuses to), so it is written here and checked against the factur-x library's ZUGFeRD 1.0 XSD.
ZUGFERD1_HEAD = """<?xml version="1.0" encoding="UTF-8"?>
<rsm:CrossIndustryDocument xmlns:rsm="urn:ferd:CrossIndustryDocument:invoice:1p0"
    xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:12"
    xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:15">
  <rsm:SpecifiedExchangedDocumentContext>
    <ram:GuidelineSpecifiedDocumentContextParameter>
      <ram:ID>urn:ferd:CrossIndustryDocument:invoice:1p0:comfort</ram:ID>
    </ram:GuidelineSpecifiedDocumentContextParameter>
  </rsm:SpecifiedExchangedDocumentContext>
  <rsm:HeaderExchangedDocument>
    <ram:ID>{number}</ram:ID>
    <ram:Name>RECHNUNG</ram:Name>
    <ram:TypeCode>380</ram:TypeCode>
    <ram:IssueDateTime><udt:DateTimeString format="102">20261010</udt:DateTimeString></ram:IssueDateTime>
  </rsm:HeaderExchangedDocument>
  <rsm:SpecifiedSupplyChainTradeTransaction>
    <ram:ApplicableSupplyChainTradeAgreement>
      <ram:SellerTradeParty><ram:Name>IteraGPU (test fixture)</ram:Name></ram:SellerTradeParty>
      <ram:BuyerTradeParty><ram:Name>Example Org (test fixture)</ram:Name></ram:BuyerTradeParty>
    </ram:ApplicableSupplyChainTradeAgreement>
    <ram:ApplicableSupplyChainTradeDelivery/>
    <ram:ApplicableSupplyChainTradeSettlement>
      <ram:InvoiceCurrencyCode>USD</ram:InvoiceCurrencyCode>
      <ram:ApplicableTradeTax>
        <ram:CalculatedAmount currencyID="USD">{tax}</ram:CalculatedAmount>
        <ram:TypeCode>VAT</ram:TypeCode>
        <ram:BasisAmount currencyID="USD">{net}</ram:BasisAmount>
        <ram:CategoryCode>S</ram:CategoryCode>
        <ram:ApplicablePercent>20.00</ram:ApplicablePercent>
      </ram:ApplicableTradeTax>
      <ram:SpecifiedTradeSettlementMonetarySummation>
        <ram:LineTotalAmount currencyID="USD">{net}</ram:LineTotalAmount>
        <ram:TaxBasisTotalAmount currencyID="USD">{net}</ram:TaxBasisTotalAmount>
        <ram:TaxTotalAmount currencyID="USD">{tax}</ram:TaxTotalAmount>
        <ram:GrandTotalAmount currencyID="USD">{gross}</ram:GrandTotalAmount>
        <ram:DuePayableAmount currencyID="USD">{gross}</ram:DuePayableAmount>
      </ram:SpecifiedTradeSettlementMonetarySummation>
    </ram:ApplicableSupplyChainTradeSettlement>
"""
ZUGFERD1_LINE = """    <ram:IncludedSupplyChainTradeLineItem>
      <ram:AssociatedDocumentLineDocument><ram:LineID>{position}</ram:LineID></ram:AssociatedDocumentLineDocument>
      <ram:SpecifiedSupplyChainTradeAgreement>
        <ram:NetPriceProductTradePrice>
          <ram:ChargeAmount currencyID="USD">{price}</ram:ChargeAmount>
        </ram:NetPriceProductTradePrice>
      </ram:SpecifiedSupplyChainTradeAgreement>
      <ram:SpecifiedSupplyChainTradeDelivery>
        <ram:BilledQuantity unitCode="C62">{quantity}</ram:BilledQuantity>
      </ram:SpecifiedSupplyChainTradeDelivery>
      <ram:SpecifiedSupplyChainTradeSettlement>
        <ram:ApplicableTradeTax>
          <ram:TypeCode>VAT</ram:TypeCode>
          <ram:CategoryCode>S</ram:CategoryCode>
          <ram:ApplicablePercent>20.00</ram:ApplicablePercent>
        </ram:ApplicableTradeTax>
        <ram:SpecifiedTradeSettlementMonetarySummation>
          <ram:LineTotalAmount currencyID="USD">{total}</ram:LineTotalAmount>
        </ram:SpecifiedTradeSettlementMonetarySummation>
      </ram:SpecifiedSupplyChainTradeSettlement>
      <ram:SpecifiedTradeProduct>
        <ram:SellerAssignedID>{gpu}</ram:SellerAssignedID>
        <ram:Name>{name}</ram:Name>
        <ram:ApplicableProductCharacteristic>
          <ram:Description>duration_days</ram:Description>
          <ram:Value>{days}</ram:Value>
        </ram:ApplicableProductCharacteristic>
      </ram:SpecifiedTradeProduct>
    </ram:IncludedSupplyChainTradeLineItem>
"""


def zugferd1_xml(b200_price: str = "2071.00") -> bytes:
    """inputs/example's two packages as a ZUGFeRD 1.0 invoice, the B200 lot at `b200_price`, its sums added up."""
    prices = (Decimal("110.00"), Decimal(b200_price))
    net = sum(prices)
    tax = (net * Decimal("0.20")).quantize(Decimal("0.01"))
    xml = ZUGFERD1_HEAD.format(number="ITG-2026-0042", tax=tax, net=net, gross=net + tax)
    for position, (gpu, name, price) in enumerate(zip(("rtx-4090", "b200"), (
            "IteraGPU RTX 4090, 7-day package", "IteraGPU B200 (lot of 2 GPUs), 7-day package"), prices,
            strict=True), start=1):
        xml += ZUGFERD1_LINE.format(position=position, price=price, quantity="1", total=price, gpu=gpu, name=name,
                                    days=7)
    data = (xml + "  </rsm:SpecifiedSupplyChainTradeTransaction>\n</rsm:CrossIndustryDocument>\n").encode()
    assert facturx.xml_check_xsd(data, flavor="zugferd")  # valid against the ZUGFeRD 1.0 XSD the library ships
    return data


def zugferd1_pdf(xml: bytes) -> bytes:
    """A PDF carrying the ZUGFeRD 1.0 XML under the name ZUGFeRD 1.0 gives it, as pikepdf attaches it."""
    return _pdf_with(("ZUGFeRD-invoice.xml", xml))


def _read(tmp_path: Path, data: bytes, name: str) -> invoice_read.Invoice:
    """The file read in this process as the child reads it."""
    path = tmp_path / name
    path.write_bytes(data)
    return invoice_read.invoice_of(path, invoice_read._answer({"path": str(path)}))


def test_a_zugferd_1_invoice_reads_as_the_same_invoice_in_cii_and_reconciles(tmp_path: Path,
                                                                              committed: list[Committed]) -> None:
    """The same invoice in ZUGFeRD 1.0 (its XML, and a PDF the factur-x library reads it from) and in CII D16B
    reads into the same lines, tax categories (ApplicablePercent is the rate) and totals."""
    xml = zugferd1_xml()
    pdf = zugferd1_pdf(xml)
    assert facturx.get_xml_from_pdf(pdf, check_xsd=True) == ("ZUGFeRD-invoice.xml", xml)
    as_cii = _read(tmp_path, cii_xml(Invoice(example_lines())), "cii.xml")
    for data, name in ((xml, "invoice.xml"), (pdf, "invoice.pdf")):
        invoice = _read(tmp_path, data, name)
        assert invoice.document_format == "zugferd-1.0" and invoice.taxes[0].rate == Decimal("20.00")
        assert replace(invoice, source="cii.xml", document_format="cii") == as_cii
        assert reconcile(invoice, committed) == []


def test_a_wrong_zugferd_1_invoice_gives_findings(tmp_path: Path, committed: list[Committed]) -> None:
    invoice = _read(tmp_path, zugferd1_xml(b200_price="2171.00"), "invoice.xml")
    found = reconcile(invoice, committed)
    assert [(f.code, f.line, f.billed) for f in found] == [("unit-price-differs", 2, "2171.00"),
                                                           ("total-differs", None, "2281.00")], found


def test_a_zugferd_1_pdf_checks_out_on_the_command_line(tmp_path: Path, signed: tuple[Path, Path],
                                                        run_cli) -> None:
    path = tmp_path / "zugferd-1.pdf"
    path.write_bytes(zugferd1_pdf(zugferd1_xml()))
    r = run_cli("invoice", "check", str(path), str(signed[0]), "--trust", str(signed[1]))
    assert r.code == 0 and r.out.splitlines()[-1].startswith("OK: invoice ITG-2026-0042"), r.out + r.err
    assert "invoice ITG-2026-0042 (zugferd-1.pdf (ZUGFeRD-invoice.xml)): 2 lines in USD" in r.out, r.out


# ------------------------------------------------------------------------------------------ other formats

# A UBL 2.1 invoice as XRechnung writes it and an Order-X purchase order, each valid against the XSD the
# factur-x library ships: documents the library reads, which gpu-audit does not reconcile.
UBL_INVOICE = b'''<?xml version="1.0" encoding="UTF-8"?>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
    xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
    xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <cbc:CustomizationID>urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0</cbc:CustomizationID>
  <cbc:ID>ITG-2026-0042</cbc:ID>
  <cbc:IssueDate>2026-10-10</cbc:IssueDate>
  <cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>
  <cbc:DocumentCurrencyCode>USD</cbc:DocumentCurrencyCode>
  <cac:AccountingSupplierParty><cac:Party><cac:PartyName><cbc:Name>IteraGPU (test fixture)</cbc:Name></cac:PartyName>
  </cac:Party></cac:AccountingSupplierParty>
  <cac:AccountingCustomerParty><cac:Party><cac:PartyName><cbc:Name>Example Org (test fixture)</cbc:Name>
  </cac:PartyName></cac:Party></cac:AccountingCustomerParty>
  <cac:LegalMonetaryTotal>
    <cbc:LineExtensionAmount currencyID="USD">110.00</cbc:LineExtensionAmount>
    <cbc:PayableAmount currencyID="USD">132.00</cbc:PayableAmount>
  </cac:LegalMonetaryTotal>
  <cac:InvoiceLine>
    <cbc:ID>1</cbc:ID>
    <cbc:InvoicedQuantity unitCode="C62">1</cbc:InvoicedQuantity>
    <cbc:LineExtensionAmount currencyID="USD">110.00</cbc:LineExtensionAmount>
    <cac:Item><cbc:Name>IteraGPU RTX 4090, 7-day package</cbc:Name></cac:Item>
    <cac:Price><cbc:PriceAmount currencyID="USD">110.00</cbc:PriceAmount></cac:Price>
  </cac:InvoiceLine>
</Invoice>
'''
ORDER_X = b'''<?xml version="1.0" encoding="UTF-8"?>
<rsm:SCRDMCCBDACIOMessageStructure xmlns:rsm="urn:un:unece:uncefact:data:SCRDMCCBDACIOMessageStructure:100"
    xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:128"
    xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:128">
  <rsm:ExchangedDocumentContext>
    <ram:GuidelineSpecifiedDocumentContextParameter><ram:ID>urn:order-x.eu:1p0:basic</ram:ID>
    </ram:GuidelineSpecifiedDocumentContextParameter>
  </rsm:ExchangedDocumentContext>
  <rsm:ExchangedDocument>
    <ram:ID>PO-2026-118</ram:ID>
    <ram:TypeCode>220</ram:TypeCode>
    <ram:IssueDateTime><udt:DateTimeString format="102">20261001</udt:DateTimeString></ram:IssueDateTime>
  </rsm:ExchangedDocument>
  <rsm:SupplyChainTradeTransaction>
    <ram:IncludedSupplyChainTradeLineItem>
      <ram:AssociatedDocumentLineDocument><ram:LineID>1</ram:LineID></ram:AssociatedDocumentLineDocument>
      <ram:SpecifiedTradeProduct><ram:Name>IteraGPU RTX 4090, 7-day package</ram:Name></ram:SpecifiedTradeProduct>
      <ram:SpecifiedLineTradeAgreement>
        <ram:NetPriceProductTradePrice><ram:ChargeAmount>110.00</ram:ChargeAmount></ram:NetPriceProductTradePrice>
      </ram:SpecifiedLineTradeAgreement>
      <ram:SpecifiedLineTradeDelivery><ram:RequestedQuantity unitCode="C62">1</ram:RequestedQuantity>
      </ram:SpecifiedLineTradeDelivery>
      <ram:SpecifiedLineTradeSettlement><ram:SpecifiedTradeSettlementLineMonetarySummation>
        <ram:LineTotalAmount>110.00</ram:LineTotalAmount></ram:SpecifiedTradeSettlementLineMonetarySummation>
      </ram:SpecifiedLineTradeSettlement>
    </ram:IncludedSupplyChainTradeLineItem>
    <ram:ApplicableHeaderTradeAgreement>
      <ram:SellerTradeParty><ram:Name>IteraGPU (test fixture)</ram:Name></ram:SellerTradeParty>
      <ram:BuyerTradeParty><ram:Name>Example Org (test fixture)</ram:Name></ram:BuyerTradeParty>
    </ram:ApplicableHeaderTradeAgreement>
    <ram:ApplicableHeaderTradeDelivery/>
    <ram:ApplicableHeaderTradeSettlement>
      <ram:OrderCurrencyCode>USD</ram:OrderCurrencyCode>
      <ram:SpecifiedTradeSettlementHeaderMonetarySummation><ram:LineTotalAmount>110.00</ram:LineTotalAmount>
        <ram:TaxBasisTotalAmount>110.00</ram:TaxBasisTotalAmount>
      </ram:SpecifiedTradeSettlementHeaderMonetarySummation>
    </ram:ApplicableHeaderTradeSettlement>
  </rsm:SupplyChainTradeTransaction>
</rsm:SCRDMCCBDACIOMessageStructure>
'''
OTHERS = {  # name -> (the file's bytes, its file name, what the finding says the file is)
    "UBL invoice": (lambda: UBL_INVOICE, "invoice.xml", "invoice.xml is a UBL 2.1 invoice, as XRechnung and "
                                                        "Peppol BIS write them:"),
    "UBL invoice in a PDF": (lambda: _pdf_with(("xrechnung.xml", UBL_INVOICE)), "invoice.pdf",
                             "invoice.pdf (xrechnung.xml) is a UBL 2.1 invoice"),
    "Order-X order": (lambda: ORDER_X, "order.xml", "order.xml is an Order-X purchase order (or its change or "
                                                    "response), not an invoice:"),
    "Order-X PDF": (lambda: facturx.generate_from_binary(visible_pdf(Invoice(example_lines())), ORDER_X,
                                                         flavor="order-x", level="basic"), "order.pdf",
                    "order.pdf (order-x.xml) is an Order-X purchase order"),
}


def test_a_ubl_invoice_or_an_order_x_order_is_one_finding_saying_what_it_is_and_what_to_ask_for(
        tmp_path: Path, committed: list[Committed]) -> None:
    """Read in this process: the document is named, nothing compared, and the provider asked for the invoice."""
    for root, flavor in ((UBL_INVOICE, "ubl-2.1-invoice"), (ORDER_X, "order-x")):
        assert facturx.xml_check_xsd(root, flavor=flavor)  # documents the factur-x library reads
    assert facturx.get_xml_from_pdf(OTHERS["Order-X PDF"][0](), check_xsd=True)[0] == "order-x.xml"
    for case, (made, name, words) in OTHERS.items():
        folder = tmp_path / case.replace(" ", "-")
        folder.mkdir()
        invoice = _read(folder, made(), name)
        assert invoice.lines == () and invoice.other_format is not None
        (finding,) = reconcile(invoice, committed)
        assert finding.code == "invoice-format" and finding.message.startswith(words), (case, finding.message)
        _for_finance(finding.message)
        assert "gpu-audit reconciles Factur-X and ZUGFeRD invoices" in finding.message
        assert "nothing was compared" in finding.message, finding.message
    order = _read(tmp_path, ORDER_X, "order.xml")
    assert "ask the provider for the invoice of this order as Factur-X or ZUGFeRD" in reconcile(order, committed)[
        0].message


def test_a_ubl_invoice_is_exit_1_with_its_finding_and_json(tmp_path: Path, signed: tuple[Path, Path],
                                                           run_cli) -> None:
    path = tmp_path / "invoice.xml"
    path.write_bytes(UBL_INVOICE)
    trust = ("--trust", str(signed[1]))
    r = run_cli("invoice", "check", str(path), str(signed[0]), *trust)
    assert r.code == 1 and r.err == "", r.out + r.err
    assert r.out.splitlines()[-2].startswith("invoice: invoice-format: invoice.xml is a UBL 2.1 invoice"), r.out
    assert r.out.splitlines()[-1] == ("FAILED: 1 finding: invoice.xml is no Factur-X or ZUGFeRD invoice, so nothing "
                                      "was compared with the committed 2181.00 USD"), r.out
    r = run_cli("invoice", "check", str(path), str(signed[0]), *trust, "--json")
    assert r.code == 1 and r.err == "", r.out + r.err
    answer = json.loads(r.out)
    assert [f["code"] for f in answer["findings"]] == ["invoice-format"] and answer["ok"] is False
    assert answer["invoice"]["format"] == "ubl-2.1-invoice" and answer["invoice"]["lines"] == []
    assert "None" not in r.out.replace("null", "")


# ------------------------------------------------------------------------------------------ refusals for finance

def minimum_credit_note() -> bytes:
    """A credit note in the Factur-X MINIMUM profile naming the invoice it corrects (InvoiceReferencedDocument,
    which that profile does not hold), as drafthorse writes it when not asked to validate."""
    doc = Document()
    doc.context.guideline_parameter.id = "urn:factur-x.eu:1p0:minimum"
    doc.header.id = "ITG-2026-0043"
    doc.header.type_code = "381"
    doc.header.issue_date_time = date(2026, 10, 12)
    doc.trade.agreement.seller.name = "IteraGPU (test fixture)"
    doc.trade.agreement.seller.address.country_id = "FR"
    doc.trade.agreement.buyer.name = "Example Org (test fixture)"
    doc.trade.settlement.currency_code = "USD"
    doc.trade.settlement.invoice_referenced_document.issuer_assigned_id = "ITG-2026-0042"
    totals = doc.trade.settlement.monetary_summation
    totals.tax_basis_total = Decimal("110.00")
    totals.tax_total = (Decimal("22.00"), "USD")
    totals.grand_total = Decimal("132.00")
    totals.due_amount = Decimal("132.00")
    xml: bytes = doc.serialize(schema=None)
    return xml


def comma_amount() -> bytes:
    """The example invoice with a line amount written as a German page prints it, "2.071,00"."""
    root = etree.fromstring(cii_xml(Invoice(example_lines())))
    next(root.iter(f"{RAM}LineTotalAmount")).text = "2.071,00"
    return bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))


def amount_of_33_digits() -> bytes:
    """The example invoice with a line amount of more digits than any invoice has (valid as an xs:decimal)."""
    root = etree.fromstring(cii_xml(Invoice(example_lines())))
    next(root.iter(f"{RAM}LineTotalAmount")).text = "1" * 31 + ".00"
    return bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))


def _pdf_with(*attachments: tuple[str, bytes]) -> bytes:
    pdf = pikepdf.open(io.BytesIO(visible_pdf(Invoice(example_lines()))))
    for name, content in attachments:
        pdf.attachments[name] = pikepdf.AttachedFileSpec(pdf, content, mime_type="text/xml")
    return _saved(pdf)


def _encrypted() -> bytes:
    pdf = pikepdf.open(io.BytesIO(facturx_pdf(Invoice(example_lines()))))
    out = io.BytesIO()
    pdf.save(out, encryption=pikepdf.Encryption(owner="o", user="secret"))
    return out.getvalue()


BAD = {  # name -> (the file's bytes, its file name, a words the sentence must hold)
    "truncated PDF": (lambda: facturx_pdf(Invoice(example_lines()))[:15], "invoice.pdf", "damaged or cut short"),
    "not a PDF": (lambda: b"\x89PNG\r\n\x1a\n" + bytes(64), "invoice.pdf", "neither a PDF nor an XML"),
    "a web page": (lambda: b"<!DOCTYPE html><html><body>Sign in</body></html>", "invoice.pdf", "web page"),
    "PDF without XML": (lambda: visible_pdf(Invoice(example_lines())), "invoice.pdf", "no Factur-X or ZUGFeRD XML"),
    "encrypted PDF": (_encrypted, "invoice.pdf", "password"),
    "an XML of no invoice format": (lambda: b'<?xml version="1.0"?>\n<Catalogue xmlns="urn:example:price-list"/>',
                                    "invoice.xml", "its root element Catalogue of namespace urn:example:price-list"),
    "schema error": (comma_amount, "invoice.xml", '(BT-131, element LineTotalAmount) of invoice line 1 holds '
                                                  '"2.071,00", which is not a number'),
    "an amount of 33 digits": (amount_of_33_digits, "invoice.xml", f"its LineTotalAmount {'1' * 31}.00 has more "
                                                                   "than 24 digits; ask the provider"),
    "credit note in MINIMUM": (minimum_credit_note, "invoice.xml", "the reference to the preceding invoice"),
    "credit note in MINIMUM, as PDF": (lambda: facturx.generate_from_binary(
        visible_pdf(Invoice(example_lines())), minimum_credit_note(), flavor="factur-x", level="minimum",
        check_xsd=False), "invoice.pdf", "not valid against the Factur-X MINIMUM profile"),
    "two XMLs": (lambda: _pdf_with(("factur-x.xml", cii_xml(Invoice(example_lines()))),
                                   ("Invoice.xml", cii_xml(Invoice(example_lines()[:1])))), "invoice.pdf",
                 "The factur-x library reads Invoice.xml"),
    "a look-alike": (lambda: _pdf_with(("factur-x.xml", b"%PDF-1.7 not the XML"),
                                       ("invoice.xml", cii_xml(Invoice(example_lines())))), "invoice.pdf",
                     "The factur-x library reads invoice.xml (it skips what is no invoice), while a reader that goes "
                     "by the file name takes factur-x.xml, which is no invoice"),
}
CLASS_PREFIX = re.compile(r"\b[A-Z][A-Za-z]*(Error|Exception|Invalid):")


def _for_finance(sentence: str) -> None:
    assert "object at 0x" not in sentence and not CLASS_PREFIX.search(sentence), sentence
    assert "{urn:" not in sentence and "Here is the error" not in sentence, sentence
    assert "ask the provider" in sentence, sentence


def test_every_bad_invoice_is_refused_in_a_sentence_for_finance(tmp_path: Path) -> None:
    """All of them read in this process, as the child reads them: one sentence each naming what is wrong and
    what to ask the provider for, no Python repr, no class name, no raw schema text."""
    for case, (made, name, words) in BAD.items():
        path = tmp_path / case.replace(" ", "-").replace(",", "") / name
        path.parent.mkdir()
        path.write_bytes(made())
        answer = invoice_read._answer({"path": str(path)})
        assert "error" in answer, case
        _for_finance(answer["error"])
        assert words in answer["error"], (case, answer["error"])


def test_the_minimum_credit_note_names_the_field_and_keeps_the_schema_text_for_verbose(
        tmp_path: Path, signed: tuple[Path, Path], run_cli) -> None:
    path = tmp_path / "credit-note.xml"
    path.write_bytes(minimum_credit_note())
    assert facturx.get_xml_from_pdf(SHAPES["factur-x library"](cii_xml(Invoice(example_lines()))))[0]
    r = run_cli("invoice", "check", str(path), str(signed[0]), "--trust", str(signed[1]))
    assert r.code == 2 and r.out == "" and r.err.count("\n") == 1, r.out + r.err
    _for_finance(r.err)
    assert ("this invoice XML is not valid against the Factur-X MINIMUM profile it declares: on its line 36, the "
            "reference to the preceding invoice, which a credit note names (BG-3, element InvoiceReferencedDocument) "
            "is not allowed in this profile at that place") in r.err, r.err
    assert "--verbose adds the reader's own words" in r.err
    r = run_cli("invoice", "check", str(path), str(signed[0]), "--trust", str(signed[1]), "--verbose")
    assert r.code == 2 and "{urn:" in r.err and "InvoiceReferencedDocument" in r.err.splitlines()[1], r.err


def test_invoice_attach_refuses_a_truncated_pdf_in_the_same_words(tmp_path: Path, signed: tuple[Path, Path],
                                                                   run_cli) -> None:
    path = tmp_path / "invoice.pdf"
    path.write_bytes(facturx_pdf(Invoice(example_lines()))[:15])
    r = run_cli("invoice", "attach", str(path), str(signed[0]), "-o", str(tmp_path / "out.pdf"), "--trust",
                str(signed[1]))
    assert r.code == 2 and r.err.count("\n") == 1 and not (tmp_path / "out.pdf").exists(), r.err
    _for_finance(r.err)
    assert "the bundle was not attached: it starts as a PDF but cannot be opened" in r.err, r.err
    r = run_cli("invoice", "attach", str(path), str(signed[0]), "-o", str(tmp_path / "out.pdf"), "--verbose")
    assert r.code == 2 and "unable to find trailer" in r.err and "object at 0x" not in r.err, r.err


def test_invoice_attach_of_an_order_x_pdf_is_its_finding_and_writes_nothing(tmp_path: Path,
                                                                            signed: tuple[Path, Path],
                                                                            run_cli) -> None:
    path, out = tmp_path / "order.pdf", tmp_path / "out.pdf"
    path.write_bytes(OTHERS["Order-X PDF"][0]())
    r = run_cli("invoice", "attach", str(path), str(signed[0]), "-o", str(out), "--trust", str(signed[1]))
    assert r.code == 1 and r.err == "" and not out.exists(), r.out + r.err
    assert "invoice: invoice-format: order.pdf (order-x.xml) is an Order-X purchase order" in r.out, r.out
    assert r.out.splitlines()[-1].startswith("FAILED: 1 finding: order.pdf (order-x.xml) is no Factur-X or ZUGFeRD "
                                             "invoice, so the bundle was not attached"), r.out
