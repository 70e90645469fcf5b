"""`invoice attach`: a verified bundle and its signed note, embedded into a copy of the invoice it reconciles with."""

from __future__ import annotations

import io
import logging
import os
import re
import stat
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography import x509

from generator.bundle.bundlelayout import PDF_NAME, PDF_PATH
from generator.bundle.verdict import Report, Trust
from generator.core.errors import (
    InvoiceBundleNotVerifiedError,
    InvoiceRefusedError,
    OutputExistsError,
    UnreadableInputError,
    UsageError,
)
from generator.core.limits import Limits, limit_message, resolve
from generator.invoice.document import Invoice
from generator.invoice.read import InvoiceUnreadableError, read_invoice

if TYPE_CHECKING:
    from generator.invoice.check import InvoiceCheck

__all__ = ["FALLBACK_ZIP_NAME", "NOTE_ATTACHMENT", "Attached", "attach_bundle"]

FALLBACK_ZIP_NAME = "gpu-audit-bundle.zip"  # when the verified bundle has no ID of the usual form
NOTE_ATTACHMENT = PDF_NAME
_BUNDLE_ID = re.compile(r"GA-[0-9A-F]{16}")
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip entry can carry: the same bytes on every run
_INVOICE_FLAVORS = ("factur-x", "zugferd")
_SIGNED = ("{path}: the invoice carries a signature ({what}); a signed invoice is never modified, since any change "
           "would break or void its signature: keep the invoice as it is and send the bundle beside it")
_SHOWN_PROBLEMS = 5


@contextmanager
def _quiet_facturx() -> Iterator[None]:
    """Keep the factur-x library's log lines (warnings about each attachment it skips) off the terminal."""
    logger = logging.getLogger("factur-x")
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        logger.setLevel(level)


def _read_regular(path: Path, what: str, max_bytes: int, limits: Limits) -> bytes:
    """The bytes of `path`, a regular file of at most `max_bytes`, within --max-pdf-bytes: the invoice copy, a PDF
    held in memory, carries it."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise UnreadableInputError(f"{path}: the {what} does not exist") from None
    except OSError as exc:
        raise UnreadableInputError(f"{path}: the {what} cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"{path}: the {what} is not a regular file; give the file itself")
    name = "max_pdf_bytes"
    if info.st_size > max_bytes:
        raise UsageError(f"{path}: " + limit_message(name, limits, f"its size, {info.st_size} bytes,"))
    try:
        with path.open("rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise UnreadableInputError(f"{path}: the {what} cannot be read ({exc.strerror})") from None
    if len(data) > max_bytes:  # it grew while being read
        raise UsageError(f"{path}: " + limit_message(name, limits, "its size"))
    return data


def _invoice_xml(path: Path, data: bytes) -> Invoice:
    """The invoice read as `invoice check` reads it, refused with its sentence for finance when it cannot be (or
    when it is no PDF); then the factur-x library must find an invoice XML valid against its XSD in it too."""
    import facturx
    from lxml import etree

    from generator.invoice.refusal import ASK_AGAIN, ASK_EINVOICE, plain

    if b"%PDF-" not in data[:1024]:  # where PDF readers look for the header
        raise InvoiceRefusedError(f"{path}: it is not a PDF file, so no invoice to attach a bundle to; give the "
                                  f"Factur-X or ZUGFeRD invoice PDF, else {ASK_EINVOICE}")
    read = _read_copy(path, data)
    try:
        with _quiet_facturx():
            _, xml = facturx.get_xml_from_pdf(data, check_xsd=True)
    except Exception as exc:  # noqa: BLE001 - pypdf and lxml raise many types on a damaged file
        raise InvoiceUnreadableError(f"{path}: the factur-x library cannot open the PDF that gpu-audit's reader "
                                     f"read, so it is damaged or crafted; {ASK_AGAIN}",
                                     plain(f"{type(exc).__name__}: {exc}")) from None
    flavor = None
    if xml:
        try:
            flavor = facturx.get_flavor(etree.fromstring(xml))
        except Exception:  # noqa: BLE001 - a flavor the library cannot name is no invoice
            flavor = None
    if flavor not in _INVOICE_FLAVORS and read.other_format is None:  # another format: its finding says so
        raise InvoiceRefusedError(f"{path}: the factur-x library finds no Factur-X or ZUGFeRD invoice XML valid "
                                  "against its XSD in the PDF, where gpu-audit's reader read one; attach bundles to "
                                  f"an electronic invoice only: {ASK_AGAIN}")
    return read


def _read_copy(invoice: Path, data: bytes) -> Invoice:
    """The invoice's very bytes read in the bounded child, as `invoice check` reads them (the file may change
    after it was read into memory)."""
    with tempfile.TemporaryDirectory(prefix="gpu-audit-attach-") as tmp:
        copy = Path(tmp) / invoice.name
        copy.write_bytes(data)
        try:
            return read_invoice(copy)
        except InvoiceUnreadableError as exc:
            raise InvoiceUnreadableError(f"{invoice}: the invoice cannot be read, so the bundle was not attached: "
                                         f"{str(exc).partition(': ')[2]}", exc.detail) from None


def _sig_fields(fields: Any, depth: int = 0) -> bool:
    """Whether the AcroForm field list (or a field's /Kids) holds a signature field, at any depth."""
    import pikepdf

    if depth > 32 or not isinstance(fields, pikepdf.Array):
        return False
    for field in fields:
        if not isinstance(field, pikepdf.Dictionary):
            continue
        if field.get("/FT") == pikepdf.Name.Sig or _sig_fields(field.get("/Kids"), depth + 1):
            return True
    return False


def _signature(pdf: Any, data: bytes) -> str | None:
    """What shows that the PDF is signed (a /Sig field, /SigFlags, /Perms, a /ByteRange), or None."""
    import pikepdf

    form = pdf.Root.get("/AcroForm")
    if isinstance(form, pikepdf.Dictionary):
        if _sig_fields(form.get("/Fields")):
            return "a /Sig field in its form"
        if "/SigFlags" in form:
            return "/SigFlags in its form"
    if "/Perms" in pdf.Root:
        return "/Perms in its catalog"
    if b"/ByteRange" in data:
        return "a /ByteRange in the file"
    for obj in pdf.objects:  # a signature dictionary inside a compressed object stream
        if isinstance(obj, pikepdf.Dictionary) and "/ByteRange" in obj:
            return "a /ByteRange in the file"
    return None


def _zip_folder(root: Path, limits: Limits) -> bytes:
    """The bundle folder as a zip made in memory: entries sorted, fixed times and modes, nothing but plain files.

    A link, pipe or device inside the folder means that the bundle does not verify (`verify` names those too).
    """
    from generator.bundle.bundlelayout import MAX_DEPTH, walk_bundle

    files, _, odd, deep = walk_bundle(root)
    if odd:
        raise InvoiceBundleNotVerifiedError(f"{root}: the bundle does not verify: {odd[0]} is not a plain file "
                                            "(a link, pipe or device); nothing was written")
    if deep:
        raise InvoiceBundleNotVerifiedError(f"{root}: the bundle does not verify: {deep[0][:80]}... is more than "
                                            f"{MAX_DEPTH} folders deep; nothing was written")
    entries = [(rel, root / rel) for rel in sorted(files)]
    buffer = io.BytesIO()
    total = 0
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for rel, p in entries:
            data = _read_regular(p, "bundle file", limits.max_pdf_bytes - total, limits)
            total += len(data)
            info = zipfile.ZipInfo(rel, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            info.create_system = 3  # Unix, so that the mode above is read as one
            zf.writestr(info, data)
    return buffer.getvalue()


def _bundle_zip(bundle: Path, limits: Limits) -> bytes:
    """The bytes to embed: a .zip bundle as it is, a folder zipped; a decision note alone is refused."""
    if not bundle.exists() and not bundle.is_symlink():
        raise UsageError(f"{bundle} does not exist; give a bundle folder or a .zip made by `gpu-audit build`")
    if bundle.is_dir():
        return _zip_folder(bundle, limits)
    data = _read_regular(bundle, "bundle", limits.max_pdf_bytes, limits)  # it goes into a PDF, held in memory
    if data[:5] == b"%PDF-":
        raise UsageError(f"{bundle}: a decision note on its own; attach needs the whole bundle (the folder or .zip "
                         "made by `gpu-audit build`), which carries the evidence the note was computed from")
    return data


def _verified(bundle: Path, zipped: bytes, trust: Trust | x509.Certificate | None, allow_unsigned: bool,
              limits: Limits) -> Report:
    """Verify the very bytes to embed, as `gpu-audit verify` would; a bundle that does not verify is refused."""
    from generator.bundle.verify.verify import verify_bundle
    from generator.core.termtext import escape_terminal

    with tempfile.TemporaryDirectory(prefix="gpu-audit-attach-") as tmp:
        copy = Path(tmp) / "bundle.zip"
        copy.write_bytes(zipped)
        report = verify_bundle(copy, trust=trust, allow_unsigned=allow_unsigned, limits=limits)
    if report.ok:
        return report
    shown = "; ".join(escape_terminal(str(p)) for p in report.problems[:_SHOWN_PROBLEMS])
    more = len(report.problems) - _SHOWN_PROBLEMS
    if more > 0:
        shown += f"; and {more} more"
    if not shown:
        shown = ("no trust anchor given, so who signed it is not checked: give --trust CERT.pem or "
                 "--trust-fingerprint SHA256:HEX")
    raise InvoiceBundleNotVerifiedError(f"{bundle}: the bundle does not verify ({shown}); run `gpu-audit verify` "
                                        "on it for the details; nothing was written")


def _zip_name(report: Report) -> str:
    """`<bundle-id>.zip` for an ID of the form gpu-audit writes, else the fixed fallback name."""
    bid = report.bundle_id
    return f"{bid}.zip" if isinstance(bid, str) and _BUNDLE_ID.fullmatch(bid) else FALLBACK_ZIP_NAME


def _folded(name: str) -> str:
    """A file name as a reader would take it: its last path component, Unicode-normalised, dashes as "-",
    case folded."""
    import unicodedata

    base = re.split(r"[\\/:]", unicodedata.normalize("NFKC", name))[-1]
    return re.sub(r"[\u2010-\u2015\u2212]", "-", base).strip().casefold()


def _names_taken(path: Path, pdf: Any, ours: tuple[str, ...]) -> None:
    """Refuse an invoice already carrying an attachment (anywhere: the name tree, /AF, an annotation) whose file
    name is ours or could be taken for ours: `pdfdetach -savefile decision-note.pdf` would extract theirs."""
    from generator.core.codes.registry import TABLES
    from generator.invoice.embedded import embedded_files
    from generator.invoice.money import InvoiceFinding

    try:
        files = embedded_files(pdf)
    except ValueError as exc:
        raise InvoiceRefusedError(f"{path}: {exc}; attach to the invoice as the provider sent it") from None
    prefixes = tuple(dict.fromkeys(_folded(n).rsplit(".", 1)[0] for n in ours)) + ("gpu-audit",)
    for file in files.values():
        for written in file.names:
            folded = _folded(written)
            if not (folded in map(_folded, ours) or folded.startswith(prefixes) or
                    _BUNDLE_ID.match(folded.upper())):
                continue
            code = "attachment-name-taken"
            row = TABLES["invoice finding"][code]
            finding = InvoiceFinding(code, None, "/EmbeddedFiles /F, /UF", written, " or ".join(ours),
                                     f"the invoice already carries an attachment named \"{written}\" (in "
                                     f"{', '.join(file.places)}), which could be taken for the "
                                     f"{' or '.join(ours)} `invoice attach` adds: a reader extracting ours by its "
                                     f"name would get it. Rule: {row.rule}. Fix: {row.fix}. Nothing was written",
                                     "allowed")
            raise InvoiceRefusedError(f"{path}: {finding.code}: {finding.message}")


def _embed(path: Path, pdf: Any, files: list[tuple[str, bytes, str, str]]) -> None:
    """Add each (name, bytes, MIME type, description) as an embedded, associated file (/Supplement) to /AF."""
    import pikepdf

    af = pdf.Root.get("/AF")
    if af is None:
        af = pdf.make_indirect(pikepdf.Array())
        pdf.Root.AF = af
    elif not isinstance(af, pikepdf.Array):
        raise InvoiceRefusedError(f"{path}: the invoice's catalog has an /AF entry that is not an array; it is "
                                  "not a valid PDF/A-3 invoice")
    for name, data, mime, description in files:
        spec = pikepdf.AttachedFileSpec(pdf, data, filename=name, mime_type=mime, description=description,
                                        relationship=pikepdf.Name.Supplement)
        pdf.attachments[name] = spec
        added = pdf.attachments[name].obj
        af = pdf.Root.AF  # pikepdf may list the new spec there itself (and so replace the array object)
        if not any(entry.objgen == added.objgen for entry in af):
            af.append(added)


@dataclass(frozen=True)
class Attached:
    """What `invoice attach` did: the copy written (None when the invoice contradicts the bundle and it was not
    told to attach anyway), and the invoice reconciled with the bundle, its findings included."""

    written: Path | None
    check: InvoiceCheck


def _reconciled(invoice: Path, read: Invoice, report: Report) -> InvoiceCheck:
    """The invoice read (its very bytes, in the bounded child) reconciled with the decision the bundle's
    verification read."""
    import json

    from generator.invoice.check import InvoiceCheck, reconciled

    if report.decision is None:
        raise InvoiceBundleNotVerifiedError(f"{invoice}: the verified bundle holds no readable decision.json; "
                                            "nothing was written")
    return reconciled(InvoiceCheck(report=report, invoice=read), json.loads(report.decision))


def _descriptions(report: Report, check: InvoiceCheck, zip_name: str) -> tuple[str, str]:
    """The attachments' descriptions: the bundle's says whether the invoice was reconciled with it, and, when it
    is attached anyway, every finding; the note's points there."""
    bid = report.bundle_id or "(no ID)"
    number = (check.invoice.number or check.invoice.source) if check.invoice is not None else ""
    bundle = f"gpu-audit audit bundle {bid}: the signed evidence and decision behind this invoice's acceptance"
    note = f"gpu-audit signed decision note of bundle {bid}"
    if not check.findings:
        return f"{bundle}; invoice {number} reconciled with it: no finding", note
    listed = " | ".join(f"{'line ' + str(f.line) if f.line is not None else 'invoice'}: {f.code}: {f.message}"
                        for f in check.findings)
    listed = "".join(c if c.isprintable() else " " for c in listed)  # the invoice's own words, kept to one line
    warning = (f"ATTACHED ANYWAY (--attach-anyway): invoice {number} contradicts bundle {bid}: "
               f"{len(check.findings)} finding(s) of `gpu-audit invoice check`")
    return (f"{warning}: {listed}. gpu-audit audit bundle {bid}: the signed evidence and decision the invoice was "
            "checked against", f"{note}; {warning}, listed in {zip_name}'s description")


def attach_bundle(invoice: Path, bundle: Path, out: Path, *, trust: Trust | x509.Certificate | None = None,
                  allow_unsigned: bool = False, limits: Limits | None = None, attach_anyway: bool = False) -> Attached:
    """Write OUT: a copy of the Factur-X invoice with the verified bundle (as a zip) and its signed note attached,
    once the invoice is reconciled with the bundle.

    The bundle is verified first as `gpu-audit verify` would, with the same trust rules: one that does not
    verify raises InvoiceBundleNotVerifiedError (exit 1). An invoice that is not a PDF or is signed raises
    InvoiceRefusedError; one the invoice reader cannot read (no Factur-X or ZUGFeRD XML), InvoiceUnreadableError.
    The invoice is then reconciled with the bundle's decision as `invoice check` does: with findings nothing is
    written (Attached.written is None) unless `attach_anyway`, and then every finding goes into the bundle
    attachment's description. Both files are attached as associated files (/AFRelationship /Supplement); the
    XMP metadata, the invoice XML and its relationship are left as they are, and the input is never changed.
    OUT is written whole or not at all, never over an existing file.
    """
    import pikepdf

    if out.exists() or out.is_symlink():
        raise OutputExistsError(f"{out} already exists; an invoice copy is never overwritten: give a new path")
    lim = resolve(limits)
    data = _read_regular(invoice, "invoice", lim.max_pdf_bytes, lim)
    read = _invoice_xml(invoice, data)
    try:
        pdf = pikepdf.open(io.BytesIO(data))
    except pikepdf.PasswordError:
        raise InvoiceRefusedError(f"{invoice}: the PDF is encrypted; give the invoice without a password") from None
    except pikepdf.PdfError as exc:
        raise InvoiceUnreadableError(f"{invoice}: the PDF cannot be opened to attach the bundle: it is damaged; "
                                     "ask the provider to send the invoice again", str(exc)) from None
    with pdf:
        what = _signature(pdf, data)
        if what is not None:
            raise InvoiceRefusedError(_SIGNED.format(path=invoice, what=what))
        zipped = _bundle_zip(bundle, lim)
        report = _verified(bundle, zipped, trust, allow_unsigned, lim)
        _names_taken(invoice, pdf, (NOTE_ATTACHMENT, _zip_name(report)))
        note = report.note  # the note's bytes as verification read them, never read again from the zip
        if note is None:
            raise InvoiceBundleNotVerifiedError(f"{bundle}: the verified bundle holds no {PDF_PATH}; nothing was "
                                                "written")
        check = _reconciled(invoice, read, report)
        if check.findings and not attach_anyway:
            return Attached(None, check)
        zip_description, note_description = _descriptions(report, check, _zip_name(report))
        _embed(invoice, pdf, [(_zip_name(report), zipped, "application/zip", zip_description),
                              (NOTE_ATTACHMENT, note, "application/pdf", note_description)])
        buffer = io.BytesIO()
        # Nothing the invoice holds is rewritten: streams kept as they are, the XMP (and its version) untouched.
        pdf.save(buffer, fix_metadata_version=False, stream_decode_level=pikepdf.StreamDecodeLevel.none,
                 object_stream_mode=pikepdf.ObjectStreamMode.preserve)
    return Attached(_write(out, buffer.getvalue()), check)


def _write(out: Path, data: bytes) -> Path:
    """Write the new invoice copy, whole or not at all; an OUT that appeared meanwhile is still never replaced."""
    from generator.core.system.safefiles import write_new_file

    return write_new_file(out, data, what="copy of the invoice")
