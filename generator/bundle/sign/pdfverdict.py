"""The PDF side of checking a note: pyHanko's full verdict on its certification signature, and its evidence.

`generator.bundle.sign.signing` re-exports these (`verify` imports them from there); this module needs nothing of it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import logging
import zlib
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from generator.bundle.sign.certchain import MAX_CHAIN, issued_by

# pyHanko logs what its difference analysis finds (a forged update) with a traceback; the verdict reaches the
# user through `problems()`, so the log stays out of the terminal unless an application configures logging.
for _name in ("pyhanko", "pyhanko_certvalidator"):
    logging.getLogger(_name).addHandler(logging.NullHandler())

@dataclass(frozen=True)
class PdfSignatureCheck:
    """pyHanko's full verdict on the PDF's one signature, with the signer's certificate as the only trust root.

    `modification` is pyHanko's ModificationLevel name (NONE, LTA_UPDATES, FORM_FILLING, ANNOTATIONS, OTHER)
    for what was added after the signed revision; `docmdp` the certification's MDPPerm name (NO_CHANGES ...).
    Times are ISO 8601 in UTC. `signing_time` is the timestamp's when there is one, else the signer's own claim.
    `timestamp_authority` is the TSA certificate's subject (RFC 4514), raw: escape it before printing.
    """

    present: bool
    intact: bool = False
    valid: bool = False
    entire_file: bool = False
    unmodified: bool = False
    modification: str | None = None
    docmdp_ok: bool = False
    certified: bool = False
    docmdp: str | None = None
    signer_fingerprint: str | None = None
    signer_subject: str | None = None
    signing_time: str | None = None
    certificate_not_before: str | None = None
    certificate_not_after: str | None = None
    timestamp: str | None = None
    timestamp_authority: str | None = None
    timestamp_ok: bool | None = None
    detail: str = ""
    unsigned_bytes: str | None = None  # what lies in the signature's unsigned part besides what the build writes

    @property
    def certificate_valid_at_signing(self) -> bool:
        return not any(code.startswith("certificate-") for code, _ in self._period_problems())

    def _period_problems(self) -> list[tuple[str, str]]:
        if self.signing_time is None or self.certificate_not_before is None or self.certificate_not_after is None:
            unknown = "the signing time or the certificate's validity period cannot be read"
            return [("certificate-period-unknown", unknown)] if self.present else []
        if self.signing_time > self.certificate_not_after:  # same format, UTC: the strings compare as times
            return [("certificate-expired", (f"the signer's certificate expired at {self.certificate_not_after}, "
                                             f"before the signing time {self.signing_time}"))]
        if self.signing_time < self.certificate_not_before:
            return [("certificate-not-yet-valid", (f"the signer's certificate is valid only from "
                                                   f"{self.certificate_not_before}, after the signing time "
                                                   f"{self.signing_time}"))]
        return []

    def problems(self) -> list[tuple[str, str]]:
        """(code, message) for every property that fails; empty when the signature holds entirely."""
        if not self.present:
            return [("bad-pdf-signature", self.detail or "the PDF carries no signature")]
        out: list[tuple[str, str]] = []
        if not self.intact:
            out.append(("bad-pdf-signature", "the PDF signature's digest does not match the signed bytes"))
        if self.unsigned_bytes is not None:
            out.append(("unsigned-bytes", f"the signature's unsigned part holds {self.unsigned_bytes}; a note as "
                                          "gpu-audit signs it holds only the signature, its certificate, a "
                                          "timestamp and zero padding"))
        if not self.valid:
            out.append(("bad-pdf-signature", ("the PDF signature value does not verify with the signer's key (the "
                                              "CMS signature is damaged or was not made by this certificate)")))
        if not self.unmodified:
            kind = "" if self.modification in (None, "NONE") else f" (pyHanko: {self.modification} changes)"
            out.append(("pdf-modified-after-signing", (f"the PDF was changed after it was signed{kind}: an "
                                                       "incremental update, so what a reader shows is not what "
                                                       "was signed")))
        elif not self.entire_file:
            out.append(("bad-pdf-signature", "the PDF signature does not cover the whole file"))
        if not self.certified:
            out.append(("pdf-not-certified", ("the PDF signature is not a certification with no changes permitted "
                                              f"(DocMDP {self.docmdp or 'absent'}): nothing forbids changes after "
                                              "it")))
        out.extend(self._period_problems())
        if self.timestamp_ok is False:
            out.append(("bad-timestamp", "the signature's RFC 3161 timestamp does not verify"))
        return out


def _iso(moment: dt.datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(dt.UTC).isoformat(timespec="seconds")


def check_pdf_signature(pdf: bytes, cert: x509.Certificate) -> PdfSignatureCheck:
    """Validate the PDF's single signature against `cert` as the only trust root, without any network.

    Never raises on a damaged file: what cannot be read is a failed check with the reason in `detail`.
    """
    from asn1crypto import x509 as asn1_x509
    from pyhanko.pdf_utils.reader import PdfFileReader
    from pyhanko.sign.fields import MDPPerm
    from pyhanko.sign.validation import read_certification_data, validate_pdf_signature
    from pyhanko.sign.validation.status import ModificationLevel, SignatureCoverageLevel
    from pyhanko_certvalidator import ValidationContext

    try:
        reader = PdfFileReader(io.BytesIO(pdf), strict=False)
        sigs = reader.embedded_signatures
    except Exception as exc:  # noqa: BLE001 - pyHanko raises many types on a damaged file
        return PdfSignatureCheck(present=False, detail=f"the PDF cannot be parsed: {type(exc).__name__}: {exc}")
    if len(sigs) != 1:
        return PdfSignatureCheck(present=False, detail=f"{len(sigs)} signatures found, expected 1")
    sig = sigs[0]
    root = asn1_x509.Certificate.load(cert.public_bytes(serialization.Encoding.DER))
    context = ValidationContext(trust_roots=[root], allow_fetching=False)
    try:
        # A signature that does not cover the whole file already means "changed after signing": pyHanko's
        # difference analysis of the update would only name the kind of change, and costs seconds of processor
        # time per object added, so a tampered note is judged before any limit on the parse can cut it short.
        whole = sig.evaluate_signature_coverage() == SignatureCoverageLevel.ENTIRE_FILE
        status = validate_pdf_signature(sig, context, context, skip_diff=not whole)
        certification = read_certification_data(reader)
        own_docmdp = sig.docmdp_level
        signer = x509.load_der_x509_certificate(status.signing_cert.dump())
        stamp = status.timestamp_validity
        tsa = None if stamp is None else x509.load_der_x509_certificate(stamp.signing_cert.dump())
    except Exception as exc:  # noqa: BLE001 - a damaged CMS structure or certificate, as pyHanko or cryptography finds it
        return PdfSignatureCheck(present=True, detail=f"validation failed: {type(exc).__name__}: {exc}")
    level = status.modification_level
    try:
        extra = unsigned_bytes(pdf, sig)
    except Exception as exc:  # noqa: BLE001 - asn1crypto raises many types on a damaged structure
        extra = f"a structure that cannot be read ({type(exc).__name__})"
    entire = status.coverage == SignatureCoverageLevel.ENTIRE_FILE
    docmdp = None if certification is None or certification.permission is None else certification.permission.name
    when = stamp.timestamp if stamp is not None else status.signer_reported_dt
    return PdfSignatureCheck(
        present=True, intact=bool(status.intact), valid=bool(status.valid), entire_file=entire,
        unmodified=entire and level == ModificationLevel.NONE and bool(status.docmdp_ok),
        modification=None if level is None else level.name, docmdp_ok=bool(status.docmdp_ok),
        certified=docmdp == MDPPerm.NO_CHANGES.name and own_docmdp == MDPPerm.NO_CHANGES, docmdp=docmdp,
        signer_fingerprint=hashlib.sha256(status.signing_cert.dump()).hexdigest(),
        signer_subject=signer.subject.rfc4514_string(), signing_time=_iso(when),
        certificate_not_before=_iso(signer.not_valid_before_utc),
        certificate_not_after=_iso(signer.not_valid_after_utc),
        timestamp=None if stamp is None else _iso(stamp.timestamp),
        timestamp_authority=None if tsa is None else tsa.subject.rfc4514_string(),
        timestamp_ok=None if stamp is None else bool(stamp.intact and stamp.valid), detail=status.summary(),
        unsigned_bytes=extra)


_UNSIGNED_ATTRS = frozenset({"signature_time_stamp_token"})  # --tsa's RFC 3161 token


def _is_chain(signer: bytes, certs: list[bytes]) -> bool:
    """Whether `certs` (DER) are the signer's certificate and the CA certificates that issued it, each
    issued by the next: what `build --cert` writes for a chain file. Any other certificate is unsigned data."""
    current, left = x509.load_der_x509_certificate(signer), [c for c in certs if c != signer]
    if len(left) >= MAX_CHAIN:  # each costs signature checks
        return False
    while left:
        for der in left:
            issuer = x509.load_der_x509_certificate(der)
            if not issued_by(current, issuer):
                continue
            current = issuer
            left.remove(der)
            break
        else:
            return False
    return True


def unsigned_bytes(pdf: bytes, sig: Any) -> str | None:
    """What the signature's unsigned part (the /Contents string, outside the signed byte range) holds beyond the
    CMS the build writes: other hex than the CMS's DER and zero padding, certificates other than the signer's chain,
    revocation lists, unsigned attributes other than a timestamp. None when it holds nothing else."""
    from asn1crypto import cms

    start, end = sig.byte_range[1], sig.byte_range[2]
    contents = bytes(sig.pkcs7_content)
    if pdf[start:end] not in (b"<" + contents.hex().encode() + b">", b"<" + contents.hex().upper().encode() + b">"):
        return "other bytes than one hexadecimal string"
    der = cms.ContentInfo({"content_type": "signed_data", "content": sig.signed_data}).dump()
    if not contents.startswith(der) or contents[len(der):].strip(b"\0"):
        return "bytes after the CMS signature that are not zero padding"
    if not _is_chain(sig.signer_cert.dump(), [c.chosen.dump() for c in sig.signed_data["certificates"] or []]):
        return "a certificate other than the signer's and the chain that issued it"
    if sig.signed_data["crls"].native:
        return "revocation lists"
    attrs = sig.signer_info["unsigned_attrs"].native or []
    if any(a["type"] not in _UNSIGNED_ATTRS for a in attrs):
        return "an unsigned attribute other than a timestamp"
    return None


EMBEDDED_DECISION = "decision.json"
MAX_EMBEDDED_BYTES = 16 * 2**20  # far above any decision.json (the example's is 120 kB); parsing costs ~50x


def _stream_bytes(stream: Any, max_bytes: int) -> bytes:
    """An embedded file's bytes, inflated at most to max_bytes (a small PDF may carry a deflate bomb)."""
    filters = stream.get("/Filter")
    raw = stream.encoded_data
    if filters is None:
        data = raw
    elif str(filters) == "/FlateDecode" or (len(filters) == 1 and str(filters[0]) == "/FlateDecode"):
        inflate = zlib.decompressobj()
        data = inflate.decompress(raw, max_bytes + 1)
    else:
        raise ValueError(f"embedded file filter {filters} (WeasyPrint writes /FlateDecode)")
    if len(data) > max_bytes:
        raise ValueError(f"embedded file over {max_bytes} bytes")
    return data


def embedded_decision(pdf: bytes, max_bytes: int = MAX_EMBEDDED_BYTES) -> bytes | None:
    """The bytes of the PDF's one embedded `decision.json` (its EmbeddedFiles name tree, latest revision; a
    later revision is what `check_pdf_signature` reports as a modification).

    None when the PDF cannot be read, has no such attachment, more than one (which would count?), or one that
    inflates beyond `max_bytes`.
    """
    from pyhanko.pdf_utils import generic
    from pyhanko.pdf_utils.reader import PdfFileReader

    found: list[bytes] = []
    visits = [0]

    def walk(node: Any, depth: int) -> None:
        visits[0] += 1
        if depth > 32 or visits[0] > 10_000:  # a hostile name tree may loop, or share nodes without end
            raise ValueError("name tree too deep, too large or cyclic")
        names = node.get("/Names", generic.ArrayObject())
        for i in range(0, len(names) - 1, 2):
            if str(names[i]) == EMBEDDED_DECISION:
                found.append(_stream_bytes(names[i + 1].get_object()["/EF"]["/F"].get_object(), max_bytes))
        for kid in node.get("/Kids", generic.ArrayObject()):
            walk(kid.get_object(), depth + 1)

    try:
        walk(PdfFileReader(io.BytesIO(pdf), strict=False).root["/Names"]["/EmbeddedFiles"], 0)
    except Exception:  # noqa: BLE001 - a damaged PDF or attachment: there is no decision to compare
        return None
    return found[0] if len(found) == 1 else None
