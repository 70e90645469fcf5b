"""The signer's certificate as PKI judges it: its period, its key's strength, and under a CA its chain and usage."""

from __future__ import annotations

import datetime as dt
import hashlib

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import dsa, ec, padding, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID

from generator.bundle.verdict import Problem
from generator.core.termtext import quoted_words

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


# RSA below 2048 bits and elliptic curves below 256 are refused by ETSI TS 119 312 and NIST SP 800-131A for new
# signatures: `build` refuses such a signing key, and `verify` a chain holding one.
MIN_RSA_BITS = 2048
MIN_EC_BITS = 256
MAX_CHAIN = 10  # certificates from the signer's to the root: real PKIs have three or four
_WEAK_HASHES = {"sha1": "SHA-1", "md5": "MD5"}


def _fp(cert: x509.Certificate) -> str:
    return "SHA256:" + hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).hexdigest()


def issued_by(cert: x509.Certificate, issuer: x509.Certificate) -> bool:
    """Whether `issuer` issued `cert`: its name, and its key's signature over it. An RSA signature with a hash
    cryptography no longer takes for certificates (SHA-1) is checked by hand, so that such a chain is refused
    for that reason (`weakness_problem`), not as certificates out of order."""
    try:
        cert.verify_directly_issued_by(issuer)
        return True
    except Exception:  # noqa: BLE001 - ValueError, TypeError, InvalidSignature: not its issuer, whatever the reason
        pass
    key = issuer.public_key()
    if cert.issuer != issuer.subject or not isinstance(key, rsa.RSAPublicKey) or hash_weakness(cert) is None:
        return False
    try:
        algorithm = cert.signature_hash_algorithm
        if algorithm is None:
            return False
        key.verify(cert.signature, cert.tbs_certificate_bytes, padding.PKCS1v15(), algorithm)
    except Exception:  # noqa: BLE001 - InvalidSignature, UnsupportedAlgorithm, another padding: not its issuer
        return False
    return True


def in_order(certs: list[x509.Certificate]) -> bool:
    """Whether `certs` is a chain as signer.pem holds it: each certificate once, each issued by the next, at most
    MAX_CHAIN of them (each costs a signature check)."""
    ders = [c.public_bytes(serialization.Encoding.DER) for c in certs]
    pairs = zip(certs, certs[1:], strict=False)
    return len(ders) <= MAX_CHAIN and len(set(ders)) == len(ders) and all(issued_by(a, b) for a, b in pairs)


def key_weakness(key: object) -> str | None:
    """Why a public key is too weak to sign ("RSA key of 1024 bits, below 2048"), or None; the one rule of
    `build` and `verify`."""
    if isinstance(key, rsa.RSAPublicKey) and key.key_size < MIN_RSA_BITS:
        return f"RSA key of {key.key_size} bits, below {MIN_RSA_BITS}"
    if isinstance(key, ec.EllipticCurvePublicKey) and key.curve.key_size < MIN_EC_BITS:
        return f"EC key on {key.curve.name} of {key.curve.key_size} bits, below {MIN_EC_BITS}"
    if isinstance(key, dsa.DSAPublicKey):
        return "DSA key, which is refused"
    return None


def hash_weakness(cert: x509.Certificate) -> str | None:
    """Why the certificate's signature is too weak to rely on ("signed with SHA-1, which is refused"), or None."""
    try:
        algorithm = cert.signature_hash_algorithm
    except Exception:  # noqa: BLE001 - UnsupportedAlgorithm: an algorithm cryptography does not know
        return "signed with an algorithm cryptography does not know, which is refused"
    if algorithm is not None and algorithm.name in _WEAK_HASHES:
        return f"signed with {_WEAK_HASHES[algorithm.name]}, which is refused"
    return None


def weakness_problem(signer: x509.Certificate, intermediates: list[x509.Certificate], anchor: x509.Certificate | None,
                     file: str) -> Problem | None:
    """A key too weak (`key_weakness`) in the signer's certificate, an intermediate or the anchor, or, under an
    anchor, a certificate below it signed with SHA-1 or MD5 (a collision forges a certificate): `certificate-weak`.
    Without an anchor (the signer is the anchor) its own self-signature vouches for nothing and is not judged."""
    named = [("the signer's certificate", signer)] + [(f"intermediate {i} of signer.pem's chain", c)
                                                    for i, c in enumerate(intermediates, 1)]
    for what, cert in named + ([("the anchor", anchor)] if anchor is not None else []):
        weak = key_weakness(cert.public_key())
        if weak is None and anchor is not None and cert is not anchor:
            weak = hash_weakness(cert)
        if weak is not None:
            return Problem("certificate-weak", file, f"{what}: {weak} (a signature needs RSA of {MIN_RSA_BITS} bits "
                           f"or more, or EC of {MIN_EC_BITS}, and SHA-256 or stronger)")
    return None


def _issuer_missing(signer: x509.Certificate, intermediates: list[x509.Certificate], anchor: x509.Certificate,
                    carrier: str) -> str:
    """Which certificate the path lacks: the issuer of the last certificate the carried ones chain to."""
    current, what, left = signer, "the signer's certificate", list(intermediates)
    while True:
        nxt = next((c for c in left if c.subject == current.issuer), None)
        if nxt is None or current.issuer == anchor.subject:
            break
        left.remove(nxt)
        current, what = nxt, "intermediate " + quoted_words(nxt.subject.rfc4514_string(), 40)[0]
    if current.issuer == current.subject:
        return f"{what} is self-signed, and not the anchor"
    if current.issuer == anchor.subject:
        return f"{what} names the anchor as its issuer, but the anchor's key did not sign it"
    try:
        key_id = current.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value.key_identifier
    except x509.ExtensionNotFound:
        key_id = None
    shown = "" if key_id is None else f", key identifier {key_id.hex(':')}"
    return (f"the intermediate that issued {what}, {quoted_words(current.issuer.rfc4514_string(), 40)[0]}{shown}, is "
            f"neither the anchor nor in {carrier} (give `build --cert` a chain file: the signer's certificate, then "
            "each intermediate up to the anchor)")


def _validate(signer: x509.Certificate, intermediates: list[x509.Certificate], anchor: x509.Certificate,
              moment: dt.datetime) -> Exception | None:
    """pyHanko's validator on the path signer -> intermediates -> anchor at `moment`; the error, or None."""
    import asyncio

    from asn1crypto import x509 as asn1_x509
    from pyhanko_certvalidator import CertificateValidator, ValidationContext
    from pyhanko_certvalidator.authority import CertTrustAnchor
    from pyhanko_certvalidator.errors import PathBuildingError, ValidationError

    def der(cert: x509.Certificate) -> asn1_x509.Certificate:
        return asn1_x509.Certificate.load(cert.public_bytes(serialization.Encoding.DER))

    # The anchor's own name constraints (and path length) bind the path: RFC 5280 leaves it to the relying
    # party, OpenSSL applies them, and so does pyHanko once told to derive them from the certificate.
    root = CertTrustAnchor(der(anchor), derive_default_quals_from_cert=True)
    context = ValidationContext(trust_roots=[root], other_certs=[der(c) for c in intermediates], moment=moment,
                                allow_fetching=False, revocation_mode="soft-fail")
    try:
        asyncio.run(CertificateValidator(der(signer), validation_context=context).async_validate_path())
    except (PathBuildingError, ValidationError) as exc:
        return exc
    return None


def chain_problem(signer: x509.Certificate, intermediates: list[x509.Certificate], anchor: x509.Certificate,
                  moments: list[tuple[str, dt.datetime]], file: str) -> Problem | None:
    """The path from the signer through the intermediates signer.pem carries to the anchor, by pyHanko's
    certificate validator at each moment: its signatures, every CA's basic constraints and keyCertSign, the
    anchor's and the intermediates' name constraints, every period and the critical extensions; before it, the
    keys and hashes (`weakness_problem`); after it, the signer's usage (`usage_problem`).

    Revocation is not checked ("soft-fail", nothing fetched): verify runs without network, and a bundle carries
    no CRL or OCSP response; that no certificate of the path was revoked is left to the reader's CA.
    """
    from pyhanko_certvalidator.errors import DisallowedAlgorithmError, PathBuildingError

    weak = weakness_problem(signer, intermediates, anchor, file)
    if weak is not None:
        return weak
    errors = [(what, _validate(signer, intermediates, anchor, moment)) for what, moment in moments]
    self_signed = signer.issuer == signer.subject  # and not the anchor: no path can lead from it
    if self_signed or any(isinstance(exc, PathBuildingError) for _, exc in errors):  # no path, whatever the time
        carrier = "signer.pem" if file == "signer.pem" else "the note's signature"
        missing = _issuer_missing(signer, intermediates, anchor, carrier)
        return Problem("untrusted-signer", file, "the signer is not the trusted certificate nor issued by it, "
                       f"directly or through the intermediates {carrier} carries: {missing}", _fp(anchor), _fp(signer))
    period = validity_problem(signer, moments, file)
    if period is not None:
        return period
    for what, exc in errors:
        if exc is None:
            continue
        if "namespace" in str(exc):  # pyHanko's PathValidationError on RFC 5280 6.1.3 (b) and (c)
            return Problem("certificate-names", file, "the name constraints of the anchor (or of an intermediate) "
                           "exclude the signer's name or an intermediate's: the anchor vouches for other names "
                           f"only (pyHanko: {exc})")
        code = "certificate-weak" if isinstance(exc, DisallowedAlgorithmError) else "certificate-chain"
        return Problem(code, file, f"the path from the signer's certificate to the anchor does not validate at "
                       f"{what} (pyHanko: {exc})")
    return usage_problem(signer, file)
