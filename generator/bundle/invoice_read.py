"""A provider's Factur-X / ZUGFeRD invoice, read in a bounded child: its XML by the factur-x library, the CII by lxml.

A hostile invoice (entities, a huge or deeply nested XML, a PDF with many or enormous attachments) must cost
bounded memory and time and never reach the network: the child runs under a processor-time and an
address-space ceiling, the XML is parsed with entity resolution, DTD loading and network access off and
refused when it declares a DTD, and the factur-x library gets the parsed tree, never the bytes.
The child is `python -m generator.bundle.invoice_read`: one JSON request on stdin, one JSON answer on stdout.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from generator.core.errors import UnreadableInputError
from generator.core.limits import MiB
from generator.core.worker import child_env

MAX_INVOICE_BYTES = 64 * MiB  # a Factur-X PDF is a few hundred kilobytes
MAX_XML_BYTES = 8 * MiB
MAX_ATTACHMENTS = 64
MAX_LINES = 10_000
CPU_SECONDS = 30
MEMORY_CEILING = 512 * MiB  # address space of the child: a genuine invoice needs about 150 MiB
XML_NAMES = ("factur-x.xml", "zugferd-invoice.xml", "xrechnung.xml")
NS = {"rsm": "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100",
      "ram": "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"}


@dataclass(frozen=True)
class InvoiceLine:
    """One billed line as the CII states it: its position, the seller's item ID (the GPU slug), the package
    duration (item attribute `duration_days`), quantity and unit, net unit price and line total (net)."""

    position: int
    line_id: str
    gpu: str | None
    name: str
    days: int | None
    quantity: Decimal | None
    unit: str | None
    unit_price: Decimal | None
    total: Decimal | None


@dataclass(frozen=True)
class Invoice:
    """The invoice's number, currency, lines and totals (net, tax and gross kept apart)."""

    source: str
    number: str
    type_code: str | None  # UNTDID 1001: 380 a commercial invoice, 381 a credit note, ...
    currency: str | None
    lines: tuple[InvoiceLine, ...]
    net_total: Decimal | None
    tax_total: Decimal | None
    grand_total: Decimal | None
    prepaid: Decimal | None
    due: Decimal | None


def _refuse(message: str) -> dict[str, Any]:
    return {"error": message}


def _xml_of_pdf(data: bytes) -> tuple[str, bytes] | dict[str, Any]:
    """The Factur-X XML attachment of a PDF, after counting what the PDF attaches (pypdf caps each stream)."""
    import io

    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    names = list(reader.attachments)
    if len(names) > MAX_ATTACHMENTS:
        return _refuse(f"the PDF has {len(names)} attachments (at most {MAX_ATTACHMENTS} are read)")
    invoices = [name for name in names if name.lower() in XML_NAMES]
    if len(invoices) > 1:  # readers would disagree on which one is the invoice
        return _refuse(f"the PDF carries {len(invoices)} invoice XML attachments ({', '.join(invoices)}); "
                       "which one is the invoice is ambiguous")
    for name in invoices:
        contents = reader.attachments[name]
        if len(contents) != 1 or len(contents[0]) > MAX_XML_BYTES:
            return _refuse(f"its {name} is missing, repeated or larger than {MAX_XML_BYTES} bytes")
        return name, contents[0]
    return _refuse(f"the PDF has no Factur-X or ZUGFeRD XML attachment ({', '.join(XML_NAMES)})")


def _parse(xml: bytes) -> Any:
    """The CII tree, parsed with no entity resolution, no DTD and no network; anything else is refused."""
    from lxml import etree

    if b"<!DOCTYPE" in xml or b"<!ENTITY" in xml:  # refused unparsed: entity definitions are never read
        raise ValueError("it declares a DTD or entities, which a CII invoice never does")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False,
                             huge_tree=False, remove_pis=True)
    try:
        root = etree.fromstring(xml, parser)
    except etree.XMLSyntaxError as exc:
        raise ValueError(f"it is not well-formed XML ({exc})") from None
    if root.getroottree().docinfo.doctype:
        raise ValueError("it declares a DTD or entities, which a CII invoice never does")
    if root.tag != f"{{{NS['rsm']}}}CrossIndustryInvoice":
        raise ValueError(f"its root is {root.tag!r}, not a UN/CEFACT CII CrossIndustryInvoice")
    return root


def _text(node: Any, path: str) -> str | None:
    found = node.find(path, NS)
    return None if found is None or found.text is None else found.text.strip()


MAX_DIGITS = 24  # of an amount or a quantity: more is no invoice (and would overflow decimal arithmetic)


def _amount(node: Any, path: str) -> str | None:
    text = _text(node, path)
    if text is None:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    if not value.is_finite() or len(value.as_tuple().digits) > MAX_DIGITS:
        raise ValueError(f"its {path.rsplit(':', 1)[-1]} {text[:40]!r} has more than {MAX_DIGITS} digits")
    return str(value)


def _line(position: int, item: Any) -> dict[str, Any]:
    product = "ram:SpecifiedTradeProduct"
    days = None
    for characteristic in item.findall(f"{product}/ram:ApplicableProductCharacteristic", NS):
        if (_text(characteristic, "ram:Description") or "").lower() == "duration_days":
            value = _text(characteristic, "ram:Value") or ""
            days = int(value) if value.isdigit() else None
    quantity = item.find("ram:SpecifiedLineTradeDelivery/ram:BilledQuantity", NS)
    return {"position": position, "line_id": _text(item, "ram:AssociatedDocumentLineDocument/ram:LineID") or "",
            "gpu": _text(item, f"{product}/ram:SellerAssignedID"), "name": _text(item, f"{product}/ram:Name") or "",
            "days": days, "quantity": _amount(item, "ram:SpecifiedLineTradeDelivery/ram:BilledQuantity"),
            "unit": None if quantity is None else quantity.get("unitCode"),
            "unit_price": _amount(item, "ram:SpecifiedLineTradeAgreement/ram:NetPriceProductTradePrice/"
                                        "ram:ChargeAmount"),
            "total": _amount(item, "ram:SpecifiedLineTradeSettlement/"
                                   "ram:SpecifiedTradeSettlementLineMonetarySummation/ram:LineTotalAmount")}


def _fields(root: Any) -> dict[str, Any]:
    trade = "rsm:SupplyChainTradeTransaction"
    totals = f"{trade}/ram:ApplicableHeaderTradeSettlement/ram:SpecifiedTradeSettlementHeaderMonetarySummation"
    items = root.findall(f"{trade}/ram:IncludedSupplyChainTradeLineItem", NS)
    if len(items) > MAX_LINES:
        raise ValueError(f"it has {len(items)} lines (at most {MAX_LINES} are read)")
    return {"number": _text(root, "rsm:ExchangedDocument/ram:ID") or "",
            "type_code": _text(root, "rsm:ExchangedDocument/ram:TypeCode"),
            "prepaid": _amount(root, f"{totals}/ram:TotalPrepaidAmount"),
            "due": _amount(root, f"{totals}/ram:DuePayableAmount"),
            "currency": _text(root, f"{trade}/ram:ApplicableHeaderTradeSettlement/ram:InvoiceCurrencyCode"),
            "lines": [_line(i, item) for i, item in enumerate(items, start=1)],
            "net_total": _amount(root, f"{totals}/ram:TaxBasisTotalAmount") or _amount(root,
                                                                                       f"{totals}/ram:LineTotalAmount"),
            "tax_total": _amount(root, f"{totals}/ram:TaxTotalAmount"),
            "grand_total": _amount(root, f"{totals}/ram:GrandTotalAmount")}


def _answer(request: dict[str, Any]) -> dict[str, Any]:
    """In the child: the invoice's XML (its own file, or a PDF's attachment), checked against the XSD, read."""
    import facturx

    data = Path(request["path"]).read_bytes()
    if data.startswith(b"%PDF-"):
        found = _xml_of_pdf(data)
        if isinstance(found, dict):
            return found
        name, xml = found
    elif len(data) > MAX_XML_BYTES:
        return _refuse(f"the XML is larger than {MAX_XML_BYTES} bytes")
    else:
        name, xml = "", data
    try:
        root = _parse(xml)
        facturx.xml_check_xsd(root, flavor="factur-x")  # the library's official XSD of the detected level
    except ValueError as exc:
        return _refuse(f"its XML {name} is refused: {exc}".replace("  ", " "))
    except Exception as exc:  # noqa: BLE001 - factur-x raises a bare Exception for an XSD failure
        return _refuse(f"its XML {name} is not valid against the Factur-X XSD: {exc}".replace("  ", " "))
    try:
        return {"xml_name": name, **_fields(root)}
    except ValueError as exc:
        return _refuse(f"its XML {name} is refused: {exc}".replace("  ", " "))


def main() -> None:
    try:
        import resource

        request = json.loads(sys.stdin.read())
        resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 1))
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CEILING, MEMORY_CEILING))
        answer = _answer(request)
    except MemoryError:
        answer = {"error": f"reading it needs more than {MEMORY_CEILING} bytes of memory"}
    except Exception as exc:  # noqa: BLE001 - reported to the parent as one line, never a traceback
        answer = {"error": f"it cannot be read: {type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(answer))


def _decimal(value: Any) -> Decimal | None:
    return None if value is None else Decimal(value)


def read_invoice(path: Path) -> Invoice:
    """The invoice at `path` (a Factur-X/ZUGFeRD PDF or its CII XML), read in the bounded child; an invoice
    that cannot be read, or costs too much, is an UnreadableInputError naming why."""
    if not path.is_file():
        raise UnreadableInputError(f"{path} is not a file; give the provider's Factur-X PDF or its CII XML")
    if path.stat().st_size > MAX_INVOICE_BYTES:
        raise UnreadableInputError(f"{path} is larger than {MAX_INVOICE_BYTES} bytes; an invoice is not")
    env = child_env()  # the child imports this very package
    try:
        proc = subprocess.run([sys.executable, "-m", "generator.bundle.invoice_read"], env=env, capture_output=True,
                              input=json.dumps({"path": str(path.resolve())}), text=True, timeout=2 * CPU_SECONDS)
    except subprocess.TimeoutExpired:
        raise UnreadableInputError(f"{path}: reading the invoice took longer than {2 * CPU_SECONDS} s") from None
    try:
        answer = json.loads(proc.stdout)
    except ValueError:
        answer = {"error": f"reading it stopped (exit {proc.returncode}): more than {CPU_SECONDS} s of processor "
                           "time, or a crash"}
    if "error" in answer:
        raise UnreadableInputError(f"{path}: {answer['error']}")
    lines = tuple(InvoiceLine(position=x["position"], line_id=x["line_id"], gpu=x["gpu"], name=x["name"],
                              days=x["days"], quantity=_decimal(x["quantity"]), unit=x["unit"],
                              unit_price=_decimal(x["unit_price"]), total=_decimal(x["total"]))
                  for x in answer["lines"])
    source = f"{path.name} ({answer['xml_name']})" if answer["xml_name"] else path.name
    return Invoice(source=source, number=answer["number"], type_code=answer["type_code"], currency=answer["currency"],
                   lines=lines, net_total=_decimal(answer["net_total"]), tax_total=_decimal(answer["tax_total"]),
                   grand_total=_decimal(answer["grand_total"]), prepaid=_decimal(answer["prepaid"]),
                   due=_decimal(answer["due"]))


if __name__ == "__main__":
    main()
