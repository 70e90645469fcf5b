"""A provider's Factur-X / ZUGFeRD invoice, read in a bounded child: its XML by the factur-x library, the CII by lxml.

A hostile invoice (entities, a huge or deeply nested XML, a PDF with many or enormous attachments) must cost
bounded memory and time and never reach the network: the child runs under a processor-time and an
address-space ceiling, the XML is parsed with entity resolution, DTD loading and network access off and
refused when it declares a DTD, and the factur-x library gets the parsed tree, never the bytes. A PDF's one
invoice XML is the one the factur-x library reads (generator.invoice.embedded); an invoice that cannot be read
is refused with a sentence for finance, the reader's own words kept apart (generator.invoice.refusal).
The child is `python -m generator.invoice.read`: one JSON request on stdin, one JSON answer on stdout.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

from generator.core.errors import UnreadableInputError
from generator.core.limits import MiB
from generator.core.system.worker import child_env
from generator.invoice.breakdown import invoice_fields
from generator.invoice.cii import as_d16b, fields, is_zugferd1, other_format, parse
from generator.invoice.document import Invoice, InvoiceLine, InvoiceTax, OtherFormat
from generator.invoice.embedded import MAX_XML_BYTES, xml_of_pdf
from generator.invoice.refusal import ASK_AGAIN, not_an_invoice_file, plain, profile_refusal, refused, schema_refusal

MAX_INVOICE_BYTES = 64 * MiB  # a Factur-X PDF is a few hundred kilobytes
CPU_SECONDS = 30
MEMORY_CEILING = 512 * MiB  # address space of the child: a genuine invoice needs about 150 MiB
PDF_HEADER_WITHIN = 1024  # where PDF readers look for %PDF-


class InvoiceUnreadableError(UnreadableInputError):
    """An invoice that cannot be read: the message is a sentence for finance; `detail` holds the reader's own
    words (the schema validator's, the PDF reader's), which `--verbose` prints for the provider."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail


def _checked(xml: bytes, name: str) -> dict[str, Any]:
    """The XML parsed, checked against the factur-x library's XSD of the profile it declares, and read."""
    import facturx

    what = f"its invoice XML {name}" if name else "this invoice XML"
    try:
        root = parse(xml)
    except ValueError as exc:
        reason, detail = exc.args[0], "".join(exc.args[1:2])
        return refused(f"{what} is refused: {reason}" + ("" if "ask the provider" in reason else f"; {ASK_AGAIN}"),
                       detail)
    other = other_format(root)
    if other is not None:  # the factur-x library reads it, gpu-audit does not reconcile it: a finding, not exit 2
        return {"xml_name": name, "other_format": other}
    flavor = "zugferd" if is_zugferd1(root) else "factur-x"  # the factur-x library's names: ZUGFeRD 1.0, CII D16B
    try:
        level = facturx.get_level(root, flavor)
    except ValueError as exc:
        return profile_refusal(exc, what, flavor)
    try:
        facturx.xml_check_xsd(root, flavor=flavor, level=level)  # the library's official XSD of that profile
    except Exception as exc:  # noqa: BLE001 - factur-x raises a bare Exception for an XSD failure
        return schema_refusal(exc, what, level, flavor)
    try:
        read = fields(as_d16b(root) if flavor == "zugferd" else root)
        return {"xml_name": name, "document_format": "zugferd-1.0" if flavor == "zugferd" else "cii", **read}
    except ValueError as exc:
        return refused(f"{what} is refused: {exc}; ask the provider for the invoice corrected")


def _answer(request: dict[str, Any]) -> dict[str, Any]:
    """In the child: the invoice's XML (its own file, or a PDF's attachment), checked against the XSD, read."""
    data = Path(request["path"]).read_bytes()
    if b"%PDF-" in data[:PDF_HEADER_WITHIN]:
        found = xml_of_pdf(data)
        if isinstance(found, dict):
            return found
        return _checked(found[1], found[0])
    if len(data) > MAX_XML_BYTES:
        return refused(f"it is not a PDF, and as an XML it is larger than the {MAX_XML_BYTES} bytes any invoice "
                       f"needs; {ASK_AGAIN}")
    return not_an_invoice_file(data) or _checked(data, "")


def reply(request_of: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The reader's answer to the request `request_of` gives (in the child: read from stdin once its limits are
    set), whatever stopped it a refusal."""
    try:
        return _answer(request_of())
    except MemoryError:
        return refused(f"reading it needs more than the {MEMORY_CEILING} bytes of memory any invoice needs, so it "
                       f"is damaged or crafted; {ASK_AGAIN}")
    except Exception as exc:  # noqa: BLE001 - reported to the parent as a sentence, never a traceback
        return refused(f"it cannot be read: the reader stopped on something unexpected in the file, which is "
                       f"damaged or not an invoice; {ASK_AGAIN}", f"{type(exc).__name__}: {exc}")


def _bounded_request() -> dict[str, Any]:
    import resource

    request: dict[str, Any] = json.loads(sys.stdin.read())
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 1))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CEILING, MEMORY_CEILING))
    return request


def main() -> None:
    sys.stdout.write(json.dumps(reply(_bounded_request)))


def ask_reader(path: Path) -> dict[str, Any]:
    """The bounded child's answer for the invoice at `path` (`python -m generator.invoice.read`, under
    CPU_SECONDS of processor time and MEMORY_CEILING); what stopped it a refusal."""
    env = child_env()  # the child imports this very package
    try:
        proc = subprocess.run([sys.executable, "-m", "generator.invoice.read"], env=env, capture_output=True,
                              input=json.dumps({"path": str(path.resolve())}), text=True, timeout=2 * CPU_SECONDS)
    except subprocess.TimeoutExpired:
        raise InvoiceUnreadableError(f"{path}: reading it took longer than {2 * CPU_SECONDS} s, far longer than "
                                     f"any invoice needs, so it is damaged or crafted; {ASK_AGAIN}") from None
    try:
        answer: dict[str, Any] = json.loads(proc.stdout)
    except ValueError:
        answer = refused(f"reading it stopped (more than {CPU_SECONDS} s of processor time, or a crash), so it is "
                         f"damaged or crafted; {ASK_AGAIN}", f"exit status {proc.returncode}: {proc.stderr[-300:]}")
    return answer


def _decimal(value: Any) -> Decimal | None:
    return None if value is None else Decimal(value)


def read_invoice(path: Path) -> Invoice:
    """The invoice at `path` (a Factur-X/ZUGFeRD PDF or its CII XML), read in the bounded child; an invoice
    that cannot be read, or costs too much, is an InvoiceUnreadableError naming why and what to ask for."""
    if not path.is_file():
        raise UnreadableInputError(f"{path} is not a file; give the provider's Factur-X PDF or its CII XML")
    if path.stat().st_size > MAX_INVOICE_BYTES:
        raise InvoiceUnreadableError(f"{path}: it is larger than the {MAX_INVOICE_BYTES} bytes any invoice needs; "
                                     f"{ASK_AGAIN}")
    return invoice_of(path, ask_reader(path))


def invoice_of(path: Path, answer: dict[str, Any]) -> Invoice:
    """The invoice the reader's answer describes; a refusal is an InvoiceUnreadableError."""
    if "error" in answer:
        raise InvoiceUnreadableError(f"{path}: {answer['error']}", plain(answer.get("detail", "")))
    source = f"{path.name} ({answer['xml_name']})" if answer["xml_name"] else path.name
    if "other_format" in answer:
        other = OtherFormat(**answer["other_format"])
        return Invoice(source=source, number="", type_code=None, currency=None, lines=(), net_total=None,
                       tax_total=None, grand_total=None, prepaid=None, due=None, document_format=other.format,
                       other_format=other)
    lines = tuple(InvoiceLine(position=x["position"], line_id=x["line_id"], seller_id=x["seller_id"],
                              name=x["name"], days=x["days"], quantity=_decimal(x["quantity"]), unit=x["unit"],
                              unit_price=_decimal(x["unit_price"]), total=_decimal(x["total"]),
                              buyer_id=x["buyer_id"], global_id=x["global_id"], global_scheme=x["global_scheme"],
                              description=x["description"], allowances=_decimal(x["allowances"]),
                              charges=_decimal(x["charges"]), allowance_reasons=tuple(x["allowance_reasons"]),
                              status=x["status"], tax_category=x["tax_category"], tax_rate=_decimal(x["tax_rate"]))
                  for x in answer["lines"])
    return Invoice(source=source, document_format=answer["document_format"], number=answer["number"],
                   type_code=answer["type_code"], currency=answer["currency"],
                   lines=lines, net_total=_decimal(answer["net_total"]), tax_total=_decimal(answer["tax_total"]),
                   grand_total=_decimal(answer["grand_total"]), prepaid=_decimal(answer["prepaid"]),
                   due=_decimal(answer["due"]), rounding=_decimal(answer["rounding"]),
                   taxes=tuple(InvoiceTax(category=t["category"], rate=_decimal(t["rate"]), basis=_decimal(t["basis"]),
                                          amount=_decimal(t["amount"])) for t in answer["taxes"]),
                   line_total=_decimal(answer["line_total"]), allowance_total=_decimal(answer["allowance_total"]),
                   charge_total=_decimal(answer["charge_total"]), **invoice_fields(answer))

if __name__ == "__main__":
    main()
