"""A provider's Factur-X / ZUGFeRD invoice, read in a bounded child: its XML by the factur-x library, the CII by lxml.

A hostile invoice (entities, a huge or deeply nested XML, a PDF with many or enormous attachments) must cost
bounded memory and time and never reach the network: the child runs under a processor-time and an
address-space ceiling, the XML is parsed with entity resolution, DTD loading and network access off and
refused when it declares a DTD, and the factur-x library gets the parsed tree, never the bytes. A PDF's
attachments are all looked through (qpdf walks what pypdf, the factur-x library's reader, does not): exactly
one may be an invoice XML, and it must be the one the factur-x library reads.
The child is `python -m generator.invoice.read`: one JSON request on stdin, one JSON answer on stdout.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from generator.core.errors import UnreadableInputError
from generator.core.limits import MiB
from generator.core.worker import child_env
from generator.invoice.breakdown import DocumentCharge, ForeignAmount, invoice_fields
from generator.invoice.cii import fields, parse
from generator.invoice.money import InvoiceTax

MAX_INVOICE_BYTES = 64 * MiB  # a Factur-X PDF is a few hundred kilobytes
MAX_XML_BYTES = 8 * MiB
MAX_ATTACHMENTS = 64
MAX_PAGES = 5_000  # an invoice has a few; every page's annotations and /AF are looked through
SNIFF_BYTES = 64 * 1024  # of an attachment, inflated to see whether it is an invoice XML whatever its name
CPU_SECONDS = 30
MEMORY_CEILING = 512 * MiB  # address space of the child: a genuine invoice needs about 150 MiB
XML_NAMES = ("factur-x.xml", "zugferd-invoice.xml", "xrechnung.xml")
INVOICE_ROOTS = ("CrossIndustryInvoice", "CrossIndustryDocument", "SCRDMCCBDACIOMessageStructure", "Invoice",
                 "CreditNote")  # the root tags the factur-x library's get_flavor takes for a document it reads


@dataclass(frozen=True)
class InvoiceLine:
    """One billed line as the CII states it: its position and line ID, the item's IDs (the seller's, the
    buyer's, a global one such as a GTIN), name and description, the item attribute `duration_days` (gpu-audit's
    own convention), quantity and unit, net unit price, line total (net) and the line's allowances and charges."""

    position: int
    line_id: str
    seller_id: str | None
    name: str
    days: int | None
    quantity: Decimal | None
    unit: str | None
    unit_price: Decimal | None
    total: Decimal | None
    buyer_id: str | None = None
    global_id: str | None = None
    global_scheme: str | None = None  # the GlobalID's schemeID (0160: a GTIN)
    description: str = ""
    allowances: Decimal | None = None
    charges: Decimal | None = None
    allowance_reasons: tuple[str, ...] = ()
    status: str | None = None  # LineStatusReasonCode (Factur-X EXTENDED): DETAIL and INFORMATION are not summed
    tax_category: str | None = None  # the line's tax category code and rate (BT-151, BT-152)
    tax_rate: Decimal | None = None

    @property
    def counted(self) -> bool:
        """Whether the line bills an amount of its own: not a sub-line (DETAIL) of a group line, nor a line for
        information (INFORMATION), which the EXTENDED profile leaves out of the totals."""
        return (self.status or "").upper() not in ("DETAIL", "INFORMATION")


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
    rounding: Decimal | None = None
    taxes: tuple[InvoiceTax, ...] = ()  # the header's tax categories
    line_total: Decimal | None = None  # the sum of the line totals as the header states it (BT-106)
    allowance_total: Decimal | None = None  # the document's allowances (BT-107) and charges (BT-108)
    charge_total: Decimal | None = None
    charges: tuple[DocumentCharge, ...] = ()  # the document's allowances and charges, with their tax categories
    foreign: tuple[ForeignAmount, ...] = ()  # amounts marked in another currency (the first few), and how many
    foreign_count: int = 0
    tax_currency: str | None = None  # TaxCurrencyCode (BT-6)


def _refuse(message: str) -> dict[str, Any]:
    return {"error": message}


@dataclass
class Embedded:
    """One embedded file stream of the PDF, with every name and every place that leads to it."""

    stream: Any  # a pikepdf.Stream
    names: list[str]
    places: list[str]

    @property
    def name(self) -> str:
        return self.names[0] if self.names else "(no name)"

    def add(self, names: list[str], place: str) -> None:
        self.names = list(dict.fromkeys(self.names + [n for n in names if n]))
        self.places += [] if place in self.places else [place]


def embedded_files(pdf: Any) -> dict[tuple[int, int], Embedded]:
    """Every embedded file stream, as PDF readers other than pypdf find them: the whole /EmbeddedFiles name tree
    (pypdf, and so the factur-x library, reads one level of /Kids), the catalog's and the pages' /AF, and file
    attachment annotations. A stream reached twice (the name tree and /AF name one file) is one file."""
    import pikepdf

    found: dict[tuple[int, int], Embedded] = {}

    def add(spec: Any, key: Any, place: str) -> None:
        ef = spec.get("/EF") if isinstance(spec, pikepdf.Dictionary) else None
        if not isinstance(ef, pikepdf.Dictionary):
            return
        names = [str(n) for n in (key, spec.get("/UF"), spec.get("/F")) if isinstance(n, pikepdf.String)]
        for stream in ef.values():  # /F, /UF (and /DOS, /Mac, /Unix): readers take different ones
            if isinstance(stream, pikepdf.Stream):
                found.setdefault(stream.objgen, Embedded(stream, [], [])).add(names, place)
        if len(found) > MAX_ATTACHMENTS:
            raise ValueError(f"the PDF has more than {MAX_ATTACHMENTS} attachments (at most {MAX_ATTACHMENTS} are "
                             "read)")

    catalog_names = pdf.Root.get("/Names")
    tree = catalog_names.get("/EmbeddedFiles") if isinstance(catalog_names, pikepdf.Dictionary) else None
    stack, seen, entries = [(tree, 0)], set(), 0
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, pikepdf.Dictionary) or (node.is_indirect and node.objgen in seen):
            continue  # a /Kids loop is walked once
        seen.add(node.objgen)
        names, kids = node.get("/Names"), node.get("/Kids")
        pairs = list(zip(names[::2], names[1::2], strict=False)) if isinstance(names, pikepdf.Array) else []
        children = list(kids) if isinstance(kids, pikepdf.Array) else []
        entries += len(pairs) + len(children)
        if entries > 4 * MAX_ATTACHMENTS:
            raise ValueError(f"the PDF's name tree of attachments has more than {4 * MAX_ATTACHMENTS} entries")
        place = "the name tree" + (f", {depth} levels deep" if depth > 1 else "")
        for key, spec in pairs:
            add(spec, key, place)
        stack += [(kid, depth + 1) for kid in children]
    for spec in pdf.Root.get("/AF", []) if isinstance(pdf.Root.get("/AF"), pikepdf.Array) else []:
        add(spec, None, "the catalog's /AF")
    for number, page in enumerate(pdf.pages, start=1):
        if number > MAX_PAGES:
            raise ValueError(f"the PDF has more than {MAX_PAGES} pages to look for attachments in")
        annots = page.obj.get("/Annots")
        for annot in annots if isinstance(annots, pikepdf.Array) else []:
            if isinstance(annot, pikepdf.Dictionary) and annot.get("/Subtype") == "/FileAttachment":
                add(annot.get("/FS"), None, f"an annotation of page {number}")
        for spec in page.obj.get("/AF") if isinstance(page.obj.get("/AF"), pikepdf.Array) else []:
            add(spec, None, f"the /AF of page {number}")
    return found


def _inflated(file: Embedded, limit: int) -> bytes:
    """At most `limit` bytes of the file's content, inflated here with that cap (never by a library, which
    would inflate it whole first): only a plain or a Flate-compressed stream, the kinds PDF writers embed."""
    import zlib

    import pikepdf

    stream = file.stream
    found = stream.get("/Filter")
    filters = [str(f) for f in found] if isinstance(found, pikepdf.Array) else [] if found is None else [str(found)]
    if filters not in ([], ["/FlateDecode"]) or stream.get("/DecodeParms") is not None:
        raise ValueError(f"its attachment {file.name} is encoded with "
                         f"{' '.join(filters)} and parameters; an attachment is read plain or Flate-compressed only")
    raw = stream.read_raw_bytes()
    try:
        return raw[:limit] if not filters else zlib.decompressobj().decompress(raw, limit)
    except zlib.error as exc:
        raise ValueError(f"its attachment {file.name} does not inflate ({exc})") from None


def _invoice_like(file: Embedded) -> bool:
    """An invoice XML to some reader: a Factur-X, ZUGFeRD or XRechnung name, or a root element the factur-x
    library takes for an invoice (its get_flavor: the tag ends so), whatever the name. The first SNIFF_BYTES
    decide; an XML whose root element they do not reach is refused rather than guessed."""
    from lxml import etree

    if any(name.lower() in XML_NAMES for name in file.names):
        return True
    head = _inflated(file, SNIFF_BYTES)
    parser = etree.XMLPullParser(events=("start",), resolve_entities=False, no_network=True, load_dtd=False)
    try:
        parser.feed(head)
    except etree.XMLSyntaxError:
        pass  # not XML, or the root element came before the error
    tags = [element.tag for _, element in parser.read_events() if isinstance(element.tag, str)]
    if not tags and len(head) == SNIFF_BYTES and head.lstrip()[:1] == b"<":
        raise ValueError(f"its attachment {file.name} starts like XML with no "
                         f"root element in its first {SNIFF_BYTES} bytes: whether it is an invoice is not known")
    return bool(tags) and tags[0].endswith(INVOICE_ROOTS)


def _what_facturx_reads(data: bytes) -> dict[tuple[int, int], tuple[str, Any]]:
    """The *.xml attachments the factur-x library's get_xml_from_pdf considers (pypdf's attachment list, each
    file's /EF /UF else /F, as pypdf reads it), by stream object: the library takes the first that is an invoice."""
    import io
    from fnmatch import fnmatch

    from pypdf import PdfReader
    from pypdf.generic import DictionaryObject, IndirectObject

    seen = {}
    for count, entry in enumerate(PdfReader(io.BytesIO(data)).attachment_list):
        if count > 4 * MAX_ATTACHMENTS:  # more than qpdf found: the two readers disagree on the PDF
            raise ValueError(f"the PDF has more than {4 * MAX_ATTACHMENTS} attachments to pypdf")
        ef = entry.pdf_object.get("/EF")
        ef = ef if isinstance(ef, DictionaryObject) else DictionaryObject()
        keys = [k for k in ("/UF", "/F") if k in ef][:1]
        ref = ef.raw_get(keys[0]) if keys else None
        if isinstance(ref, IndirectObject) and fnmatch(entry.name.lower(), "*.xml"):
            seen[(ref.idnum, ref.generation)] = (entry.name, entry)
    return seen


def _xml_of_pdf(data: bytes) -> tuple[str, bytes] | dict[str, Any]:
    """The one invoice XML of a PDF, the very one the factur-x library reads; a PDF whose attachments hold
    more than one (anywhere: nested name trees, /AF, annotations, any name) is refused as ambiguous."""
    import io

    import pikepdf

    try:
        with pikepdf.open(io.BytesIO(data)) as pdf:
            files = embedded_files(pdf)
            invoices = [f for f in files.values() if _invoice_like(f)]
            if len(invoices) > 1:  # readers would disagree on which one is the invoice
                where = "; ".join(f"{', '.join(f.names) or '(no name)'} in {', '.join(f.places)}" for f in invoices)
                return _refuse(f"the PDF carries {len(invoices)} invoice XML attachments ({where}); which one is "
                               "the invoice is ambiguous")
            if not invoices:
                return _refuse(f"the PDF has no Factur-X or ZUGFeRD XML attachment ({', '.join(XML_NAMES)})")
            (file,) = invoices
            size = file.stream.get("/Params", {}).get("/Size") if isinstance(file.stream.get("/Params"),
                                                                              pikepdf.Dictionary) else None
            if isinstance(size, int) and size > MAX_XML_BYTES:  # declared: refused before inflating
                return _refuse(f"its {file.name} declares {size} bytes, more than {MAX_XML_BYTES}")
            xml = _inflated(file, MAX_XML_BYTES + 1)
            objgen = file.stream.objgen
        if len(xml) > MAX_XML_BYTES:
            return _refuse(f"its {file.name} is larger than {MAX_XML_BYTES} bytes")
        read = _what_facturx_reads(data).get(objgen)
    except ValueError as exc:
        return _refuse(str(exc))
    if read is None:
        return _refuse(f"its invoice XML {', '.join(file.names)} is in {', '.join(file.places)}, where the factur-x "
                       "library does not read it (it reads the *.xml names of the name tree and its first /Kids)")
    if read[1].content != xml:  # pypdf and qpdf read the stream's bytes differently: a damaged or crafted PDF
        return _refuse(f"its {read[0]} reads differently with pypdf (the factur-x library's reader) and qpdf")
    return read[0], xml


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
        root = parse(xml)
        facturx.xml_check_xsd(root, flavor="factur-x")  # the library's official XSD of the detected level
    except ValueError as exc:
        return _refuse(f"its XML {name} is refused: {exc}".replace("  ", " "))
    except Exception as exc:  # noqa: BLE001 - factur-x raises a bare Exception for an XSD failure
        return _refuse(f"its XML {name} is not valid against the Factur-X XSD: {exc}".replace("  ", " "))
    try:
        return {"xml_name": name, **fields(root)}
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
        proc = subprocess.run([sys.executable, "-m", "generator.invoice.read"], env=env, capture_output=True,
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
    lines = tuple(InvoiceLine(position=x["position"], line_id=x["line_id"], seller_id=x["seller_id"],
                              name=x["name"], days=x["days"], quantity=_decimal(x["quantity"]), unit=x["unit"],
                              unit_price=_decimal(x["unit_price"]), total=_decimal(x["total"]),
                              buyer_id=x["buyer_id"], global_id=x["global_id"], global_scheme=x["global_scheme"],
                              description=x["description"], allowances=_decimal(x["allowances"]),
                              charges=_decimal(x["charges"]), allowance_reasons=tuple(x["allowance_reasons"]),
                              status=x["status"], tax_category=x["tax_category"], tax_rate=_decimal(x["tax_rate"]))
                  for x in answer["lines"])
    source = f"{path.name} ({answer['xml_name']})" if answer["xml_name"] else path.name
    return Invoice(source=source, number=answer["number"], type_code=answer["type_code"], currency=answer["currency"],
                   lines=lines, net_total=_decimal(answer["net_total"]), tax_total=_decimal(answer["tax_total"]),
                   grand_total=_decimal(answer["grand_total"]), prepaid=_decimal(answer["prepaid"]),
                   due=_decimal(answer["due"]), rounding=_decimal(answer["rounding"]),
                   taxes=tuple(InvoiceTax(category=t["category"], rate=_decimal(t["rate"]), basis=_decimal(t["basis"]),
                                          amount=_decimal(t["amount"])) for t in answer["taxes"]),
                   line_total=_decimal(answer["line_total"]), allowance_total=_decimal(answer["allowance_total"]),
                   charge_total=_decimal(answer["charge_total"]), **invoice_fields(answer))

if __name__ == "__main__":
    main()
