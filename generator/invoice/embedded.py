"""A PDF invoice's attachments as PDF readers find them, and the one invoice XML the factur-x library reads of them.

qpdf (pikepdf) walks every place an attachment can be (the whole name tree, the catalog's and the pages' /AF,
file attachment annotations); pypdf, the factur-x library's reader, reads the name tree and its first /Kids,
resolving an indirect /EF as any reader does (Mustang and other PDFBox writers make it indirect). Exactly one
attachment may be an invoice XML, and it must be the one the factur-x library reads: where the two readings
disagree, the refusal says which attachment each takes and why. Runs in the reader's bounded child.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from generator.core.limits import MiB
from generator.invoice.refusal import ASK_AGAIN, ASK_ONE, refused

MAX_XML_BYTES = 8 * MiB
MAX_ATTACHMENTS = 64
MAX_PAGES = 5_000  # an invoice has a few; every page's annotations and /AF are looked through
SNIFF_BYTES = 64 * 1024  # of an attachment, inflated to see whether it is an invoice XML whatever its name
XML_NAMES = ("factur-x.xml", "zugferd-invoice.xml", "xrechnung.xml")
INVOICE_ROOTS = ("CrossIndustryInvoice", "CrossIndustryDocument", "SCRDMCCBDACIOMessageStructure", "Invoice",
                 "CreditNote")  # the root tags the factur-x library's get_flavor takes for a document it reads
TOO_MANY = f"; an invoice carries a few at most: {ASK_AGAIN}"


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

    def where(self) -> str:
        return f"{', '.join(self.names) or '(no name)'} (in {', '.join(self.places)})"


def embedded_files(pdf: Any) -> dict[tuple[int, int], Embedded]:
    """Every embedded file stream, as PDF readers other than pypdf find them: the whole /EmbeddedFiles name tree
    (pypdf, and so the factur-x library, reads one level of /Kids), the catalog's and the pages' /AF, and file
    attachment annotations. A stream reached twice (the name tree and /AF name one file) is one file."""
    import pikepdf

    found: dict[tuple[int, int], Embedded] = {}

    def add(spec: Any, key: Any, place: str) -> None:
        ef = spec.get("/EF") if isinstance(spec, pikepdf.Dictionary) else None  # pikepdf resolves an indirect /EF
        if not isinstance(ef, pikepdf.Dictionary):
            return
        names = [str(n) for n in (key, spec.get("/UF"), spec.get("/F")) if isinstance(n, pikepdf.String)]
        for stream in ef.values():  # /F, /UF (and /DOS, /Mac, /Unix): readers take different ones
            if isinstance(stream, pikepdf.Stream):
                found.setdefault(stream.objgen, Embedded(stream, [], [])).add(names, place)
        if len(found) > MAX_ATTACHMENTS:
            raise ValueError(f"the PDF carries more than {MAX_ATTACHMENTS} attachments{TOO_MANY}")

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
            raise ValueError(f"the PDF's list of attachments has more than {4 * MAX_ATTACHMENTS} entries{TOO_MANY}")
        place = "the name tree" + (f", {depth} levels deep" if depth > 1 else "")
        for key, spec in pairs:
            add(spec, key, place)
        stack += [(kid, depth + 1) for kid in children]
    for spec in pdf.Root.get("/AF", []) if isinstance(pdf.Root.get("/AF"), pikepdf.Array) else []:
        add(spec, None, "the catalog's /AF")
    for number, page in enumerate(pdf.pages, start=1):
        if number > MAX_PAGES:
            raise ValueError(f"the PDF has more than {MAX_PAGES} pages, far more than an invoice; {ASK_AGAIN}")
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
        raise ValueError(f"its attachment {file.name} is compressed as {' '.join(filters) or 'plain'} with "
                         "parameters, which invoice writers do not use (an attachment is read plain or "
                         f"Flate-compressed only); {ASK_AGAIN}")
    raw = stream.read_raw_bytes()
    try:
        return raw[:limit] if not filters else zlib.decompressobj().decompress(raw, limit)
    except zlib.error:
        raise ValueError(f"its attachment {file.name} is damaged: its compressed content cannot be unpacked; "
                         f"{ASK_AGAIN}") from None


def _root(file: Embedded) -> str | None:
    """The local name of the attachment's root element as its first SNIFF_BYTES show it, None when it is not
    XML; an XML whose root element they do not reach is refused rather than guessed."""
    from lxml import etree

    head = _inflated(file, SNIFF_BYTES)
    parser = etree.XMLPullParser(events=("start",), resolve_entities=False, no_network=True, load_dtd=False)
    try:
        parser.feed(head)
    except etree.XMLSyntaxError:
        pass  # not XML, or the root element came before the error
    tags = [element.tag for _, element in parser.read_events() if isinstance(element.tag, str)]
    if not tags and len(head) == SNIFF_BYTES and head.lstrip()[:1] == b"<":
        raise ValueError(f"its attachment {file.name} starts like XML but names no root element in its first "
                         f"{SNIFF_BYTES} bytes, so whether it is a second invoice is not known; {ASK_ONE}")
    return tags[0].rpartition("}")[2] if tags else None


def _invoice_like(file: Embedded) -> bool:
    """An invoice XML to some reader: a Factur-X, ZUGFeRD or XRechnung name, or a root element the factur-x
    library takes for an invoice (its get_flavor: the tag ends so), whatever the name."""
    if any(name.lower() in XML_NAMES for name in file.names):
        return True
    root = _root(file)
    return root is not None and root.endswith(INVOICE_ROOTS)


def what_facturx_reads(data: bytes) -> dict[tuple[int, int], tuple[str, Any]]:
    """The *.xml attachments the factur-x library's get_xml_from_pdf considers, in its order (pypdf's attachment
    list; each file's /EF, indirect or not, resolved as pypdf resolves it; its /UF else /F), by stream object:
    the library takes the first that is an invoice valid against its XSD."""
    from fnmatch import fnmatch

    from pypdf import PdfReader
    from pypdf.generic import DictionaryObject

    seen: dict[tuple[int, int], tuple[str, Any]] = {}
    for count, entry in enumerate(PdfReader(io.BytesIO(data)).attachment_list):
        if count > 4 * MAX_ATTACHMENTS:  # more than qpdf found: the two readers disagree on the PDF
            raise ValueError(f"the PDF carries more than {4 * MAX_ATTACHMENTS} attachments to pypdf{TOO_MANY}")
        spec = entry.pdf_object
        ef = spec["/EF"] if "/EF" in spec else None  # indexing resolves an indirect /EF, as the library's reading
        keys = [k for k in ("/UF", "/F") if k in ef][:1] if isinstance(ef, DictionaryObject) else []
        stream = ef[keys[0]] if keys and isinstance(ef, DictionaryObject) else None
        ref = getattr(stream, "indirect_reference", None)
        if ref is not None and fnmatch(entry.name.lower(), "*.xml"):
            seen.setdefault((ref.idnum, ref.generation), (entry.name, entry))
    return seen


def _look_alike(root: str | None) -> str:
    return ", named as an invoice XML but " + ("not XML" if root is None else f"an XML of root {root}, no invoice")


def _two(invoices: list[Embedded], order: list[tuple[int, int]]) -> dict[str, str]:
    """The refusal of a PDF with more than one invoice XML, naming the one the factur-x library reads and the
    look-alikes (an invoice's file name on something that is no invoice, which that library skips)."""
    roots = {f.stream.objgen: _root(f) for f in invoices}
    genuine = {objgen for objgen, root in roots.items() if root is not None and root.endswith(INVOICE_ROOTS)}
    read = next((f for objgen in order for f in invoices if f.stream.objgen == objgen and objgen in genuine), None)
    listed = "; ".join(f.where() + ("" if f.stream.objgen in genuine else _look_alike(roots[f.stream.objgen]))
                       for f in invoices)
    alike = [f.name for f in invoices if f.stream.objgen not in genuine]
    if read is None:
        which = ("The factur-x library reads none of them (it reads the invoice XMLs of the PDF's list of "
                 "attachments), while other readers take one")
    elif alike and len(genuine) == 1:
        which = (f"The factur-x library reads {read.name} (it skips what is no invoice), while a reader that goes by "
                 f"the file name takes {', '.join(alike)}, which is no invoice: readers disagree on the invoice")
    else:
        which = (f"The factur-x library reads {read.name}, the first invoice in its list of attachments, while a "
                 "reader that goes by the other names or places may take another")
    return refused(f"it is a PDF carrying {len(invoices)} attachments readers take for its invoice XML: {listed}. "
                   f"{which}, so which amounts are the invoice's is ambiguous; {ASK_ONE}")


def xml_of_pdf(data: bytes) -> tuple[str, bytes] | dict[str, str]:
    """The one invoice XML of a PDF, the very one the factur-x library reads; a PDF whose attachments hold
    more than one (anywhere: nested name trees, /AF, annotations, any name) is refused as ambiguous."""
    import pikepdf

    from generator.invoice.refusal import no_invoice_xml, unreadable_pdf

    try:
        pdf = pikepdf.open(io.BytesIO(data))
    except (pikepdf.PdfError, pikepdf.PasswordError) as exc:
        return unreadable_pdf(exc)
    try:
        with pdf:
            files = embedded_files(pdf)
            invoices = [f for f in files.values() if _invoice_like(f)]
            if len(invoices) > 1:  # readers would disagree on which one is the invoice
                return _two(invoices, list(what_facturx_reads(data)))
            if not invoices:
                return no_invoice_xml([f.name for f in files.values()])
            (file,) = invoices
            params = file.stream.get("/Params")
            size = params.get("/Size") if isinstance(params, pikepdf.Dictionary) else None
            if isinstance(size, int) and size > MAX_XML_BYTES:  # declared: refused before inflating
                return refused(f"its invoice XML {file.name} declares {size} bytes, more than the {MAX_XML_BYTES} "
                               f"any invoice needs; {ASK_AGAIN}")
            xml = _inflated(file, MAX_XML_BYTES + 1)
            objgen = file.stream.objgen
        if len(xml) > MAX_XML_BYTES:
            return refused(f"its invoice XML {file.name} is larger than the {MAX_XML_BYTES} bytes any invoice "
                           f"needs; {ASK_AGAIN}")
        read = what_facturx_reads(data).get(objgen)
    except ValueError as exc:
        return refused(str(exc))
    if read is None:
        return refused(f"its invoice XML {file.where()} is where the factur-x library does not read it (it reads "
                       "the *.xml files of the PDF's list of attachments and its first level of /Kids), so readers "
                       f"disagree on whether this PDF is an electronic invoice at all; {ASK_ONE}")
    if read[1].content != xml:  # pypdf and qpdf read the stream's bytes differently: a damaged or crafted PDF
        return refused(f"its invoice XML {read[0]} reads differently in two PDF readers (pypdf, the factur-x "
                       f"library's, and qpdf): the PDF is damaged or crafted; {ASK_AGAIN}")
    return read[0], xml
