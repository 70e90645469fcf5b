"""Keys and signatures: one RSA identity certifies the PDF (PAdES, DocMDP) and signs MANIFEST.json."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import unicodedata
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import (
    dsa,
    ec,
    ed448,
    ed25519,
    padding,
    rsa,
)
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from generator.bundle.sign.certchain import MAX_CHAIN, MIN_RSA_BITS, hash_weakness, issued_by, key_weakness
from generator.bundle.sign.pdfverdict import (
    PdfSignatureCheck,
    check_pdf_signature,
    embedded_decision,
)
from generator.core.errors import OutputExistsError, UsageError
from generator.core.system.safefiles import read_key_file, write_new_files

__all__ = [  # the PDF checks live in generator.bundle.sign.pdfverdict; verify and the tests take them from here
    "CERT_NAME", "KEY_NAME", "KEY_PASSPHRASE_ENV", "PKCS12_PASSPHRASE_ENV", "SIGNATURE_FIELD", "Identity",
    "PdfSignatureCheck", "cert_fingerprint", "check_name", "check_pdf_signature", "check_signing_certificate",
    "check_signing_setup", "check_tsa_url", "cms_signer", "embedded_decision", "escaped", "keygen",
    "load_pem_identity", "load_pkcs12_identity", "load_signer", "sign_bytes", "sign_pdf", "timestamper",
    "verify_bytes",
]

KEY_NAME = "signer-key.pem"
CERT_NAME = "signer.pem"
KEY_PASSPHRASE_ENV = "GPU_AUDIT_KEY_PASSPHRASE"
PKCS12_PASSPHRASE_ENV = "GPU_AUDIT_PKCS12_PASSPHRASE"
SIGNATURE_FIELD = "GpuAuditSignature"


@dataclass(frozen=True)
class Identity:
    """A signing key with its certificate, and the intermediates that issued it (a chain file's, leaf first)."""

    key: rsa.RSAPrivateKey
    cert: x509.Certificate
    chain: tuple[x509.Certificate, ...] = ()

    @property
    def pem(self) -> bytes:
        """signer.pem: the certificate, then each intermediate up to the anchor."""
        return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in (self.cert, *self.chain))

    @property
    def fingerprint(self) -> str:
        return cert_fingerprint(self.cert)

    @property
    def subject(self) -> str:
        return self.cert.subject.rfc4514_string()


def cert_fingerprint(cert: x509.Certificate) -> str:
    """SHA-256 of the certificate's DER encoding, lower-case hex."""
    return hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).hexdigest()


# Unicode's control (Cc), format (Cf: bidirectional and zero-width) and line/paragraph separators: in a name
# they inject lines (bag-info.txt, the terminal) or make one name display as another.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def escaped(text: str) -> str:
    """The text with every control or invisible character written as \\xNN or \\uNNNN, for messages."""
    return "".join(ascii(c)[1:-1] if unicodedata.category(c) in _HIDDEN_CATEGORIES else c for c in text)


def check_name(name: str, what: str) -> str:
    """Refuse a name with control characters, newlines or invisible characters (see _HIDDEN_CATEGORIES)."""
    bad = sorted({f"U+{ord(c):04X}" for c in name if unicodedata.category(c) in _HIDDEN_CATEGORIES})
    if bad:
        raise UsageError(f"{what} '{escaped(name)}' contains control character(s) {', '.join(bad)} (newlines, "
                         "escapes, invisible or reordering characters); use plain text")
    return name


def check_signing_certificate(cert: x509.Certificate, now: dt.datetime | None = None) -> None:
    """A certificate signs only within its validity period, and only with a subject free of control characters."""
    for attribute in cert.subject:
        value = attribute.value if isinstance(attribute.value, str) else attribute.value.decode("latin-1")
        check_name(value, "the signing certificate's subject")
    subject = cert.subject.rfc4514_string()
    now = now or dt.datetime.now(dt.UTC)
    if now > cert.not_valid_after_utc:
        raise UsageError(f"the signing certificate ({subject}) expired on {cert.not_valid_after_utc.isoformat()}: a "
                         "note signed now would not verify; renew it, or make a new key with `gpu-audit keygen DIR`")
    if now < cert.not_valid_before_utc:
        raise UsageError(f"the signing certificate ({subject}) is not valid before "
                         f"{cert.not_valid_before_utc.isoformat()} (now {now.isoformat(timespec='seconds')}); sign "
                         "once it is valid, or check this machine's clock")


KEYGEN_RSA_BITS = 3072  # NIST SP 800-57's 128-bit security level, the level of the SHA-256 digest it signs


def _key_kind(key: Any) -> str:
    """What the key is, in words, for the message that refuses it."""
    if isinstance(key, rsa.RSAPrivateKey):
        return f"RSA of {key.key_size} bits"
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return f"ECDSA on {key.curve.name}"
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return "Ed25519"
    if isinstance(key, ed448.Ed448PrivateKey):
        return "Ed448"
    if isinstance(key, dsa.DSAPrivateKey):
        return "DSA"
    return type(key).__name__


def _check_chain(certs: list[x509.Certificate], source: str) -> tuple[x509.Certificate, ...]:
    """A chain file's intermediates (after the signer's certificate), each issuing the one before it, none of
    them with a key or a signature `verify` refuses (certchain's rules)."""
    if len(certs) > MAX_CHAIN:
        raise UsageError(f"{source}: {len(certs)} certificates; a chain has at most {MAX_CHAIN}")
    for i, cert in enumerate(certs, 1):
        issuer = certs[i] if i < len(certs) else None
        if issuer is not None and (not issued_by(cert, issuer) or issuer in certs[:i]):
            raise UsageError(f"{source}: certificate {i + 1} did not issue certificate {i}: give the chain leaf first, "
                             "the signer's certificate, then each intermediate up to the CA, each once")
        weak = key_weakness(cert.public_key()) or (hash_weakness(cert) if issuer is not None else None)
        if weak is not None:
            raise UsageError(f"{source}: certificate {i} of the chain: {weak}; `verify` would refuse it")
    return tuple(certs[1:])


def _pkcs12_chain(cert: x509.Certificate, others: list[x509.Certificate]) -> list[x509.Certificate]:
    """A PKCS#12 file's other certificates (in no set order) as a chain from `cert`: each the issuer of the last."""
    chain, left = [cert], [c for c in others if c != cert]
    while left and len(chain) <= MAX_CHAIN:
        issuer = next((c for c in left if issued_by(chain[-1], c)), None)
        if issuer is None or issuer == chain[-1]:
            break
        chain.append(issuer)
        left.remove(issuer)
    return chain


def _check_key(key: Any, cert: x509.Certificate, source: str) -> Identity:
    check_signing_certificate(cert)
    # The note is PDF/A-3, defined on PDF 1.7 (ISO 32000-1), whose signatures are RSA or DSA; ECDSA and EdDSA
    # come with the ISO/TS 32002 extension of PDF 2.0, which pyHanko declares for them and which lifts the
    # file's version to 2.0. RSA with SHA-256 stays on 1.7, and pdfsig and Adobe Reader verify it.
    if not isinstance(key, rsa.RSAPrivateKey) or key_weakness(key.public_key()) is not None:
        raise UsageError(f"{source}: the key must be RSA of at least {MIN_RSA_BITS} bits, not {_key_kind(key)}: the "
                         "note stays PDF 1.7 (PDF/A-3), and ECDSA or EdDSA in a PDF signature needs the ISO/TS 32002 "
                         "extension of PDF 2.0; make an RSA key with `gpu-audit keygen DIR`, or give a PKCS#12 "
                         "file holding an RSA key with --pkcs12")
    public = cert.public_key()
    if not isinstance(public, rsa.RSAPublicKey) or public.public_numbers() != key.public_key().public_numbers():
        raise UsageError(f"{source}: the certificate does not belong to the key; give the matching pair")
    return Identity(key=key, cert=cert)


def load_pem_identity(key_path: Path, cert_path: Path, passphrase: bytes | None = None, *,
                      allow_readable_key: bool = False) -> Identity:
    """Load a PEM private key and its PEM certificate (each a small regular file: see generator.core.system.safefiles).

    A key that group or others can read is refused (ReadableKeyError) unless `allow_readable_key`.
    """
    key_file = read_key_file(key_path, "private key file")
    cert_data = read_key_file(cert_path, "certificate file").data
    key_data = key_file.data
    encrypted = b"ENCRYPTED" in key_data or b"Proc-Type: 4,ENCRYPTED" in key_data
    try:
        key = serialization.load_pem_private_key(key_data, password=passphrase)
    except TypeError:
        if passphrase is None:
            raise UsageError(f"{key_path} is encrypted: give its passphrase in ${KEY_PASSPHRASE_ENV}") from None
        raise UsageError(f"{key_path} is not encrypted, but a passphrase was given: unset ${KEY_PASSPHRASE_ENV}"
                         ) from None
    except ValueError:
        if encrypted and passphrase is not None:
            raise UsageError(f"{key_path}: wrong passphrase (from ${KEY_PASSPHRASE_ENV}) for this encrypted key"
                             ) from None
        raise UsageError(f"{key_path}: not a PEM private key (or a damaged one); give the key `gpu-audit keygen` "
                         "wrote, or its PKCS#12 file with --pkcs12") from None
    except Exception as exc:  # noqa: BLE001 - cryptography raises other types on some malformed or unsupported keys
        raise UsageError(f"{key_path}: cannot be loaded as a PEM private key ({type(exc).__name__})") from None
    try:
        certs = x509.load_pem_x509_certificates(cert_data)  # the signer's, then its intermediates
    except ValueError:
        raise UsageError(f"{cert_path}: not a PEM certificate") from None
    if not allow_readable_key:  # after parsing: only a file that really holds a key is a secret to protect
        key_file.refuse_if_readable("private key file")
    return replace(_check_key(key, certs[0], str(key_path)), chain=_check_chain(certs, str(cert_path)))


def load_pkcs12_identity(path: Path, passphrase: bytes | None, *, allow_readable_key: bool = False) -> Identity:
    """Load the key and certificate of a PKCS#12 file (the certificate a company already has).

    The file holds the private key: group- or other-readable, it is refused unless `allow_readable_key`.
    """
    p12_file = read_key_file(path, "PKCS#12 file")
    data = p12_file.data
    try:
        key, cert, others = pkcs12.load_key_and_certificates(data, passphrase)
    except ValueError:
        source = f"from ${PKCS12_PASSPHRASE_ENV} or the prompt" if passphrase is not None else \
            f"none given: set ${PKCS12_PASSPHRASE_ENV}"
        raise UsageError(f"{path}: wrong passphrase ({source}), or not a PKCS#12 file") from None
    except Exception as exc:  # noqa: BLE001 - cryptography raises many types on malformed or unsupported PKCS#12
        raise UsageError(f"{path}: cannot be loaded as PKCS#12 ({type(exc).__name__})") from None
    if key is None or cert is None:
        raise UsageError(f"{path} holds no private key with its certificate")
    if not allow_readable_key:
        p12_file.refuse_if_readable("PKCS#12 file (it holds the private key)")
    identity = _check_key(key, cert, str(path))  # with the CA certificates it holds, as a chain from the signer's
    return replace(identity, chain=_check_chain(_pkcs12_chain(cert, others), str(path)))


def keygen(directory: Path, name: str, now: dt.datetime | None = None) -> tuple[Path, Path]:
    """Write a new RSA 3072-bit key (PKCS#8 PEM, mode 0600) and a self-signed certificate; existing files are
    refused. RSA because the note stays PDF 1.7 (PDF/A-3): see `_check_key`."""
    check_name(name, "--name")
    if not 1 <= len(name) <= 64:  # the upper bound of X.520 for CN and O
        raise UsageError(f"--name must have 1 to 64 characters (got {len(name)})")
    key_path, cert_path = directory / KEY_NAME, directory / CERT_NAME
    for p in (key_path, cert_path):
        if p.exists() or p.is_symlink():
            raise OutputExistsError(f"{p} already exists; keys are never overwritten (choose another folder)")
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory} is a file, not a folder; give a folder for the key and certificate")
    now = now or dt.datetime.now(dt.UTC)
    key = rsa.generate_private_key(public_exponent=65537, key_size=KEYGEN_RSA_BITS)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name),
                         x509.NameAttribute(NameOID.ORGANIZATION_NAME, name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject).issuer_name(subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=True, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                     crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    try:
        write_new_files(directory, {KEY_NAME: (key_pem, 0o600),
                                    CERT_NAME: (cert.public_bytes(serialization.Encoding.PEM), 0o644)},
                        what="key or certificate")
    except OutputExistsError:
        raise OutputExistsError(f"{key_path} or {cert_path} appeared meanwhile; keys are never overwritten (choose "
                                "another folder)") from None
    return key_path, cert_path


def sign_bytes(identity: Identity, data: bytes) -> bytes:
    """Detached RSA PKCS#1 v1.5 signature over SHA-256 (what `openssl dgst -sha256 -verify` checks by default)."""
    return identity.key.sign(data, padding.PKCS1v15(), hashes.SHA256())


def verify_bytes(cert: x509.Certificate, data: bytes, signature: bytes) -> bool:
    """Whether `signature` is the certificate key's RSA PKCS#1 v1.5 / SHA-256 signature of `data`."""
    public = cert.public_key()
    if not isinstance(public, rsa.RSAPublicKey):
        return False
    try:
        public.verify(signature, data, padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        return False
    return True


_PKCS1_DIGESTS: dict[str, type[hashes.HashAlgorithm]] = {"sha256": hashes.SHA256, "sha384": hashes.SHA384,
                                                          "sha512": hashes.SHA512}


def load_signer() -> None:
    """Import pyHanko's signing modules now (half a second), so that `sign_pdf` finds them loaded."""
    from pyhanko.pdf_utils import incremental_writer  # noqa: F401
    from pyhanko.sign import fields, signers  # noqa: F401


def cms_signer(identity: Identity) -> Any:
    """pyHanko's CMS signer of the identity: the note's certification, and the registration's seal."""
    from asn1crypto import keys as asn1_keys
    from asn1crypto import x509 as asn1_x509
    from pyhanko.sign import signers
    from pyhanko_certvalidator.registry import SimpleCertificateStore

    class LoadedKeySigner(signers.SimpleSigner):
        """pyHanko's SimpleSigner, signing RSA PKCS#1 v1.5 with the key already loaded.

        SimpleSigner.sign_raw parses the key again for each signature (two per certified note), and
        cryptography checks an RSA key whenever it parses one, which is slow for a 3072-bit key.
        """

        def sign_raw(self, data: bytes, digest_algorithm: str) -> bytes:
            try:
                mechanism = self.get_signature_mechanism_for_digest(digest_algorithm).signature_algo
            except ValueError:
                mechanism = None
            digest = _PKCS1_DIGESTS.get(digest_algorithm)
            if isinstance(identity.key, rsa.RSAPrivateKey) and mechanism == "rsassa_pkcs1v15" and digest:
                return identity.key.sign(data, padding.PKCS1v15(), digest())
            return super().sign_raw(data, digest_algorithm)

    cert = asn1_x509.Certificate.load(identity.cert.public_bytes(serialization.Encoding.DER))
    key = asn1_keys.PrivateKeyInfo.load(identity.key.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    chain = [asn1_x509.Certificate.load(c.public_bytes(serialization.Encoding.DER)) for c in identity.chain]
    # The CMS carries the signing certificate, and the intermediates of the registry: a certificate of the chain
    # there too would be carried twice; a self-signed one (a root, the keygen certificate) is left out.
    registry = SimpleCertificateStore.from_certs(chain or [cert])
    return LoadedKeySigner(signing_cert=cert, signing_key=key, cert_registry=registry)


def check_tsa_url(url: str) -> str:
    """An RFC 3161 time-stamping authority is reached over http or https only (never file: or others)."""
    if not url.lower().startswith(("http://", "https://")) or any(c.isspace() or ord(c) < 0x20 for c in url):
        raise UsageError(f"--tsa {escaped(url)}: give the http:// or https:// URL of an RFC 3161 time-stamping "
                         "authority")
    return url


def timestamper(tsa_url: str) -> Any:
    """pyHanko's RFC 3161 client of the authority at `tsa_url` (http or https only: check_tsa_url)."""
    url = check_tsa_url(tsa_url)  # before the HTTP client is imported: a refused URL loads nothing
    from pyhanko.sign.timestamps.requests_client import HTTPTimeStamper

    return HTTPTimeStamper(url, https=url.lower().startswith("https://"))


def check_signing_setup(identity: Identity | None, tsa_url: str | None) -> None:
    """What `sign_pdf` would refuse, refused before a build does any work."""
    if identity is not None:
        check_signing_certificate(identity.cert)
    if tsa_url is not None:
        if identity is None:
            raise UsageError("--tsa timestamps the note's signature: it needs a key, not --unsigned")
        check_tsa_url(tsa_url)


def sign_pdf(identity: Identity, pdf: bytes, *, tsa_url: str | None = None, now: dt.datetime | None = None) -> bytes:
    """Certify the PDF: PAdES (ETSI.CAdES.detached, SHA-256), DocMDP with no changes permitted, an invisible
    field; with `tsa_url`, an RFC 3161 signature timestamp from that authority (PAdES B-T).

    The result stays PDF/A-3 on PDF 1.7, its document info and XMP agreeing: with an RSA key and SHA-256,
    pyHanko declares only the ESIC extension (PAdES on PDF 1.7), no extension of PDF 2.0.
    """
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.sign import fields, signers

    check_signing_certificate(identity.cert, now)
    stamper = None if tsa_url is None else timestamper(tsa_url)
    meta = signers.PdfSignatureMetadata(field_name=SIGNATURE_FIELD, subfilter=fields.SigSeedSubFilter.PADES,
                                        md_algorithm="sha256", certify=True,
                                        docmdp_permissions=fields.MDPPerm.NO_CHANGES)
    writer = IncrementalPdfFileWriter(io.BytesIO(pdf))
    # pyHanko's XMP names itself alone as pdf:Producer, while it appends itself to the info dictionary's
    # ("WeasyPrint 70.0; pyHanko ..."): without the renderer's entry both read the same, as PDF/A requires.
    info_ref = writer.prev.trailer_view.raw_get("/Info") if "/Info" in writer.prev.trailer_view else None
    if info_ref is not None and "/Producer" in info_ref.get_object():
        del info_ref.get_object()["/Producer"]
        writer.mark_update(info_ref)
    try:
        out = signers.sign_pdf(writer, meta, signer=cms_signer(identity), timestamper=stamper,
                               new_field_spec=fields.SigFieldSpec(SIGNATURE_FIELD))
    except Exception as exc:
        if stamper is None:
            raise
        # an unreachable, refusing or malformed authority is the environment's problem, not a crash
        raise UsageError(f"--tsa {escaped(tsa_url or '')}: no timestamp from the authority "
                         f"({type(exc).__name__}: {escaped(str(exc))[:300]}); check the URL or build without --tsa"
                         ) from None
    return bytes(out.getbuffer())
