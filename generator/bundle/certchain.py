"""The signer's certificate judged as PKI means it: its validity period, and under a CA anchor its chain and usage."""

from __future__ import annotations

import datetime as dt

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import ExtendedKeyUsageOID

from generator.bundle.verdict import Problem

# The extended key usages that let a certificate sign a document, when the certificate has that extension at
# all (RFC 5280 4.2.1.12: without it, or with anyExtendedKeyUsage, any purpose is allowed): e-mail protection
# (S/MIME, the purpose of most personal signing certificates), document signing (RFC 9336), Adobe's and
# Microsoft's document signing, and code signing (Adobe Reader accepts it for PDF signatures). A TLS server or
# client certificate alone (serverAuth, clientAuth), a time-stamping or OCSP one is refused: its CA vouched
# for a web server or a login, not for a signature on a decision.
SIGNING_EKUS = frozenset({
    ExtendedKeyUsageOID.EMAIL_PROTECTION.dotted_string,
    "1.3.6.1.5.5.7.3.36",  # id-kp-documentSigning, RFC 9336
    "1.2.840.113583.1.1.5",  # Adobe Authentic Documents Trust
    "1.3.6.1.4.1.311.10.3.12",  # Microsoft document signing
    ExtendedKeyUsageOID.CODE_SIGNING.dotted_string,
    ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE.dotted_string,
})
_EKU_NAMES = {ExtendedKeyUsageOID.SERVER_AUTH.dotted_string: "serverAuth",
              ExtendedKeyUsageOID.CLIENT_AUTH.dotted_string: "clientAuth",
              ExtendedKeyUsageOID.TIME_STAMPING.dotted_string: "timeStamping",
              ExtendedKeyUsageOID.OCSP_SIGNING.dotted_string: "OCSPSigning"}


def parse_time(text: str | None) -> dt.datetime | None:
    """An ISO 8601 time (MANIFEST.json's `created`, the note's signing time) in UTC; None when absent or unreadable."""
    if not text:
        return None
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)


def _when(moment: dt.datetime) -> str:
    return moment.isoformat(timespec="seconds")


def validity_problem(cert: x509.Certificate, moments: list[tuple[str, dt.datetime]], file: str) -> Problem | None:
    """The first of `moments` ((what, when): the signing time, then now) outside the certificate's period."""
    start, end = cert.not_valid_before_utc, cert.not_valid_after_utc
    period = f"valid from {_when(start)} to {_when(end)}"
    for what, moment in moments:
        if moment > end:
            return Problem("certificate-expired", file, f"the signer's certificate expired on {_when(end)}, before "
                           f"{what}: a signature needs a certificate valid when it was made and when it is relied on",
                           period, f"{what}: {_when(moment)}")
        if moment < start:
            return Problem("certificate-not-yet-valid", file, f"the signer's certificate is valid only from "
                           f"{_when(start)}, after {what}", period, f"{what}: {_when(moment)}")
    return None


def usage_problem(cert: x509.Certificate, file: str) -> Problem | None:
    """Whether the certificate's key usage allows signing (digitalSignature or nonRepudiation, and the extension
    must be there: pyHanko's signer policy, which reads a certificate without it as one issued for nothing in
    particular) and its extended key usage, if any, names a signing purpose (SIGNING_EKUS)."""
    try:
        usage = cert.extensions.get_extension_for_class(x509.KeyUsage).value
        signs = usage.digital_signature or usage.content_commitment
        shown = "keyUsage " + ", ".join(n for n in ("digital_signature", "content_commitment", "key_encipherment",
                                                   "data_encipherment", "key_agreement", "key_cert_sign", "crl_sign")
                                         if getattr(usage, n))
    except x509.ExtensionNotFound:
        signs, shown = False, "no keyUsage extension"
    if not signs:
        return Problem("certificate-usage", file, "the key usage of the signer's certificate does not allow signing: "
                       "the anchor issued it for another use", "keyUsage digitalSignature or nonRepudiation", shown)
    try:
        purposes = {oid.dotted_string for oid in cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value}
    except x509.ExtensionNotFound:
        return None
    if purposes & SIGNING_EKUS:
        return None
    names = ", ".join(sorted(_EKU_NAMES.get(oid, oid) for oid in purposes))
    return Problem("certificate-usage", file, "the extended key usage of the signer's certificate names no signing "
                   "purpose: the anchor issued it for another use (a TLS server certificate, say)",
                   "emailProtection, documentSigning, codeSigning or anyExtendedKeyUsage", names)


def chain_problem(signer: x509.Certificate, anchor: x509.Certificate, moments: list[tuple[str, dt.datetime]],
                  file: str) -> Problem | None:
    """pyHanko's certificate validator on the path signer -> anchor, at each moment: the signatures, the anchor's
    basic constraints (a CA) and key usage (keyCertSign), both periods and the critical extensions.

    Revocation is not checked ("soft-fail", nothing fetched): verify runs without network, and a bundle carries
    no CRL or OCSP response; that the signer's certificate was not revoked is left to the reader's CA.
    """
    import asyncio

    from asn1crypto import x509 as asn1_x509
    from pyhanko_certvalidator import CertificateValidator, ValidationContext
    from pyhanko_certvalidator.errors import PathBuildingError, ValidationError

    def der(cert: x509.Certificate) -> asn1_x509.Certificate:
        return asn1_x509.Certificate.load(cert.public_bytes(serialization.Encoding.DER))

    for what, moment in moments:
        context = ValidationContext(trust_roots=[der(anchor)], moment=moment, allow_fetching=False,
                                    revocation_mode="soft-fail")
        validator = CertificateValidator(der(signer), validation_context=context)
        try:
            asyncio.run(validator.async_validate_path())
        except (PathBuildingError, ValidationError) as exc:
            return Problem("certificate-chain", file, f"the path from the signer's certificate to the anchor does "
                           f"not validate at {what} (pyHanko: {exc})")
    return None
