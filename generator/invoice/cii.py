"""The CII XML of an invoice: parsed safely, other formats named, and its header and lines read as plain values.

Run in the reader's bounded child (generator.invoice.read): parsing has entity resolution, DTD loading and
network access off, and every value comes back as a string (amounts as exact decimal strings) or None. A
ZUGFeRD 1.0 invoice is CII of an earlier UN/CEFACT release (D12), element for element the same invoice: its
tree, once checked against the ZUGFeRD 1.0 XSD, is renamed to CII D16B's names and read as any other.
"""

from __future__ import annotations

from typing import Any

from generator.invoice.breakdown import read_charges, read_foreign
from generator.invoice.money import decimal_of, money_fields

NS = {"rsm": "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100",
      "ram": "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"}
MAX_LINES = 10_000
READS = ("gpu-audit reads Factur-X and ZUGFeRD invoices (UN/CEFACT CII, EN 16931): ask the provider for the "
         "invoice as Factur-X or ZUGFeRD, or for its CII XML")
ZUGFERD1 = {"urn:ferd:CrossIndustryDocument:invoice:1p0": NS["rsm"],  # ZUGFeRD 1.0's namespaces -> CII D16B's
            "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:12": NS["ram"],
            "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:15":
                "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100",
            "urn:un:unece:uncefact:data:standard:QualifiedDataType:12":
                "urn:un:unece:uncefact:data:standard:QualifiedDataType:100"}
ZUGFERD1_ROOT = ("urn:ferd:CrossIndustryDocument:invoice:1p0", "CrossIndustryDocument")
# ZUGFeRD 1.0's element names where CII D16B names the same element otherwise; the others are the same. A
# summation is the header's or a line's by where it stands (CII D16B names the two apart).
RENAMED = {"CrossIndustryDocument": "CrossIndustryInvoice", "SpecifiedExchangedDocumentContext":
           "ExchangedDocumentContext", "HeaderExchangedDocument": "ExchangedDocument",
           "SpecifiedSupplyChainTradeTransaction": "SupplyChainTradeTransaction",
           "ApplicableSupplyChainTradeAgreement": "ApplicableHeaderTradeAgreement",
           "ApplicableSupplyChainTradeDelivery": "ApplicableHeaderTradeDelivery",
           "ApplicableSupplyChainTradeSettlement": "ApplicableHeaderTradeSettlement",
           "SpecifiedSupplyChainTradeAgreement": "SpecifiedLineTradeAgreement",
           "SpecifiedSupplyChainTradeDelivery": "SpecifiedLineTradeDelivery",
           "SpecifiedSupplyChainTradeSettlement": "SpecifiedLineTradeSettlement",
           "ApplicablePercent": "RateApplicablePercent"}
SUMMATIONS = {"ApplicableSupplyChainTradeSettlement": "SpecifiedTradeSettlementHeaderMonetarySummation",
              "SpecifiedSupplyChainTradeSettlement": "SpecifiedTradeSettlementLineMonetarySummation"}
# Root elements of documents in other formats (UBL and Order-X the factur-x library also reads): (namespace, local
# name) -> (the format's token in --json, its name as a reader knows it).
OTHER_FORMATS = {
    ("urn:oasis:names:specification:ubl:schema:xsd:Invoice-2", "Invoice"):
        ("ubl-2.1-invoice", "a UBL 2.1 invoice, as XRechnung and Peppol BIS write them"),
    ("urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2", "CreditNote"):
        ("ubl-2.1-creditnote", "a UBL 2.1 credit note"),
    ("urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:2", "CrossIndustryInvoice"):
        ("cii-other", "a CII invoice of an older UN/CEFACT schema"),
    ("urn:un:unece:uncefact:data:SCRDMCCBDACIOMessageStructure:100", "SCRDMCCBDACIOMessageStructure"):
        ("order-x", "an Order-X purchase order (or its change or response), not an invoice"),
}
PRODUCT = "ram:SpecifiedTradeProduct"
LINE_TOTALS = "ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeSettlementLineMonetarySummation"


def _split(tag: str) -> tuple[str, str]:
    namespace, _, local = tag[1:].partition("}") if tag.startswith("{") else ("", "", tag)
    return namespace, local


def other_format(root: Any) -> dict[str, str] | None:
    """The document in another format (UBL and Order-X, which the factur-x library reads; a CII of an older
    schema): its format's token and name, its root element and namespace; None for a CII or ZUGFeRD 1.0 invoice."""
    namespace, local = _split(root.tag)
    known = OTHER_FORMATS.get((namespace, local))
    if known is None:
        return None
    return {"format": known[0], "name": known[1], "root": local, "namespace": namespace}


def is_zugferd1(root: Any) -> bool:
    """Whether the tree is a ZUGFeRD 1.0 invoice (CrossIndustryDocument of urn:ferd:...:invoice:1p0)."""
    return _split(root.tag) == ZUGFERD1_ROOT


def as_d16b(root: Any) -> Any:
    """A ZUGFeRD 1.0 tree (checked against its XSD) renamed in place to CII D16B's names and namespaces."""
    renamed = []
    for element in (e for e in root.iter() if isinstance(e.tag, str)):  # every name read before any is changed
        namespace, local = _split(element.tag)
        parent = element.getparent()
        if local == "SpecifiedTradeSettlementMonetarySummation" and parent is not None:
            local = SUMMATIONS.get(_split(parent.tag)[1], local)
        renamed.append((element, f"{{{ZUGFERD1.get(namespace, namespace)}}}{RENAMED.get(local, local)}"))
    for element, tag in renamed:
        element.tag = tag
    return root


def _root_refusal(tag: str) -> str | None:
    """The one-line refusal of an XML whose root `tag` is no invoice (or order) of a format readers know."""
    namespace, local = _split(tag)
    if (namespace, local) in ((NS["rsm"], "CrossIndustryInvoice"), ZUGFERD1_ROOT, *OTHER_FORMATS):
        return None
    where = f"root element {local}" + (f" of namespace {namespace}" if namespace else " of no namespace")
    return f"its {where} is not a UN/CEFACT CII CrossIndustryInvoice; {READS}"


def parse(xml: bytes) -> Any:
    """The XML's tree, parsed with no entity resolution, no DTD and no network: a CII or ZUGFeRD 1.0 invoice, or
    a document in another format the factur-x library reads (other_format); anything else is refused
    (ValueError, one line with what to ask the provider for; the parser's own words, where there are, as its
    second argument)."""
    from lxml import etree

    if b"<!DOCTYPE" in xml or b"<!ENTITY" in xml:  # refused unparsed: entity definitions are never read
        raise ValueError("it declares a DTD or entities, which a CII invoice never does")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False,
                             huge_tree=False, remove_pis=True)
    try:
        root = etree.fromstring(xml, parser)
    except etree.XMLSyntaxError as exc:
        raise ValueError("it is not well-formed XML: it is damaged, or no XML at all", str(exc)) from None
    if root.getroottree().docinfo.doctype:
        raise ValueError("it declares a DTD or entities, which a CII invoice never does")
    refusal = _root_refusal(root.tag) if isinstance(root.tag, str) else "its root is no element"
    if refusal is not None:
        raise ValueError(refusal)
    return root


def _text(node: Any, path: str) -> str | None:
    found = node.find(path, NS)
    return None if found is None or found.text is None or not found.text.strip() else found.text.strip()


def _amount(node: Any, path: str) -> str | None:
    value = decimal_of(_text(node, path), path.rsplit(":", 1)[-1])
    return None if value is None else str(value)


def _allowances(item: Any) -> dict[str, Any]:
    """The line's allowances and charges (EN 16931 BG-27, BG-28): their sums and reasons, as written."""
    sums: dict[str, str | None] = {"allowances": None, "charges": None}
    reasons = []
    for entry in item.findall("ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeAllowanceCharge", NS):
        charge = (_text(entry, "ram:ChargeIndicator/{*}Indicator") or "").lower() == "true"
        amount = decimal_of(_text(entry, "ram:ActualAmount"), "ActualAmount")
        key = "charges" if charge else "allowances"
        if amount is not None:
            sums[key] = str(amount + (decimal_of(sums[key], key) or 0))
        reason = _text(entry, "ram:Reason") or _text(entry, "ram:ReasonCode")
        if reason:
            reasons.append(reason)
    return {**sums, "allowance_reasons": reasons}


def _line(position: int, item: Any) -> dict[str, Any]:
    """One line as written: its IDs, name, description, the item attribute `duration_days`, quantity, unit, net
    unit price, line total and allowances."""
    days = None
    for characteristic in item.findall(f"{PRODUCT}/ram:ApplicableProductCharacteristic", NS):
        if (_text(characteristic, "ram:Description") or "").lower() == "duration_days":
            value = _text(characteristic, "ram:Value") or ""
            days = int(value) if value.isdigit() and len(value) < 6 else None
    quantity = item.find("ram:SpecifiedLineTradeDelivery/ram:BilledQuantity", NS)
    global_id = item.find(f"{PRODUCT}/ram:GlobalID", NS)
    document, tax = "ram:AssociatedDocumentLineDocument", "ram:SpecifiedLineTradeSettlement/ram:ApplicableTradeTax"
    return {"position": position, "line_id": _text(item, f"{document}/ram:LineID") or "",
            "status": _text(item, f"{document}/ram:LineStatusReasonCode"),
            "seller_id": _text(item, f"{PRODUCT}/ram:SellerAssignedID"),
            "buyer_id": _text(item, f"{PRODUCT}/ram:BuyerAssignedID"),
            "global_id": _text(item, f"{PRODUCT}/ram:GlobalID"),
            "global_scheme": None if global_id is None else global_id.get("schemeID"),
            "name": _text(item, f"{PRODUCT}/ram:Name") or "",
            "description": _text(item, f"{PRODUCT}/ram:Description") or "",
            "days": days, "quantity": _amount(item, "ram:SpecifiedLineTradeDelivery/ram:BilledQuantity"),
            "unit": None if quantity is None else quantity.get("unitCode"),
            "unit_price": _amount(item, "ram:SpecifiedLineTradeAgreement/ram:NetPriceProductTradePrice/"
                                        "ram:ChargeAmount"),
            "total": _amount(item, f"{LINE_TOTALS}/ram:LineTotalAmount"), **_allowances(item),
            "tax_category": _text(item, f"{tax}/ram:CategoryCode"),
            "tax_rate": _amount(item, f"{tax}/ram:RateApplicablePercent")}


def fields(root: Any) -> dict[str, Any]:
    """The invoice's number, type, currency, lines and totals, as strings (None where the XML gives nothing)."""
    trade = "rsm:SupplyChainTradeTransaction"
    totals = f"{trade}/ram:ApplicableHeaderTradeSettlement/ram:SpecifiedTradeSettlementHeaderMonetarySummation"
    items = root.findall(f"{trade}/ram:IncludedSupplyChainTradeLineItem", NS)
    if len(items) > MAX_LINES:
        raise ValueError(f"it has {len(items)} lines (at most {MAX_LINES} are read)")
    currency = _text(root, f"{trade}/ram:ApplicableHeaderTradeSettlement/ram:InvoiceCurrencyCode")
    settlement = root.find(f"{trade}/ram:ApplicableHeaderTradeSettlement", NS)
    money = {"rounding": None, "taxes": [], "tax_total": None} if settlement is None else \
        money_fields(settlement, NS, currency)
    tax_currency = None if settlement is None else _text(settlement, "ram:TaxCurrencyCode")
    return {**money, "charges": [] if settlement is None else read_charges(settlement, NS),
            **read_foreign(root, items, currency, tax_currency), "tax_currency": tax_currency,
            "number": _text(root, "rsm:ExchangedDocument/ram:ID") or "",
            "type_code": _text(root, "rsm:ExchangedDocument/ram:TypeCode"),
            "prepaid": _amount(root, f"{totals}/ram:TotalPrepaidAmount"),
            "due": _amount(root, f"{totals}/ram:DuePayableAmount"),
            "currency": currency,
            "lines": [_line(i, item) for i, item in enumerate(items, start=1)],
            "line_total": _amount(root, f"{totals}/ram:LineTotalAmount"),
            "allowance_total": _amount(root, f"{totals}/ram:AllowanceTotalAmount"),
            "charge_total": _amount(root, f"{totals}/ram:ChargeTotalAmount"),
            "net_total": _amount(root, f"{totals}/ram:TaxBasisTotalAmount") or _amount(root,
                                                                                       f"{totals}/ram:LineTotalAmount"),
            "grand_total": _amount(root, f"{totals}/ram:GrandTotalAmount")}
