"""Keys and signatures: one ECDSA P-256 identity signs the PDF (PAdES B-B) and MANIFEST.json (detached DER)."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from generator.errors import OutputExistsError, UsageError

KEY_NAME = "signer-key.pem"
CERT_NAME = "signer.pem"
KEY_PASSPHRASE_ENV = "GPU_AUDIT_KEY_PASSPHRASE"
PKCS12_PASSPHRASE_ENV = "GPU_AUDIT_PKCS12_PASSPHRASE"
SIGNATURE_FIELD = "GpuAuditSignature"


@dataclass(frozen=True)
class Identity:
    """A signing key with its certificate."""

    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate

    @property
    def fingerprint(self) -> str:
        return cert_fingerprint(self.cert)

    @property
    def subject(self) -> str:
        return self.cert.subject.rfc4514_string()


def cert_fingerprint(cert: x509.Certificate) -> str:
    """SHA-256 of the certificate's DER encoding, lower-case hex."""
    return hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).hexdigest()


def _check_key(key: Any, cert: x509.Certificate, source: str) -> Identity:
    if not isinstance(key, ec.EllipticCurvePrivateKey) or not isinstance(key.curve, ec.SECP256R1):
        raise UsageError(f"{source}: the key must be ECDSA P-256 (pdfsig and Adobe Reader verify it; Ed25519 fails "
                         "in pdfsig); make one with `gpu-audit keygen DIR`")
    if cert.public_key().public_numbers() != key.public_key().public_numbers():
        raise UsageError(f"{source}: the certificate does not belong to the key; give the matching pair")
    return Identity(key=key, cert=cert)


def load_pem_identity(key_path: Path, cert_path: Path, passphrase: bytes | None = None) -> Identity:
    """Load a PEM private key and its PEM certificate."""
    try:
        key_data, cert_data = key_path.read_bytes(), cert_path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read the signing key or certificate: {exc.filename}: {exc.strerror}") from None
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
    except Exception as exc:  # cryptography raises other types on some malformed keys (e.g. unsupported ones)
        raise UsageError(f"{key_path}: cannot be loaded as a PEM private key ({type(exc).__name__})") from None
    try:
        cert = x509.load_pem_x509_certificate(cert_data)
    except ValueError:
        raise UsageError(f"{cert_path}: not a PEM certificate") from None
    return _check_key(key, cert, str(key_path))


def load_pkcs12_identity(path: Path, passphrase: bytes | None) -> Identity:
    """Load the key and certificate of a PKCS#12 file (the certificate a company already has)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    try:
        key, cert, _ = pkcs12.load_key_and_certificates(data, passphrase)
    except ValueError:
        source = f"from ${PKCS12_PASSPHRASE_ENV} or the prompt" if passphrase is not None else \
            f"none given: set ${PKCS12_PASSPHRASE_ENV}"
        raise UsageError(f"{path}: wrong passphrase ({source}), or not a PKCS#12 file") from None
    except Exception as exc:  # malformed or unsupported PKCS#12 content
        raise UsageError(f"{path}: cannot be loaded as PKCS#12 ({type(exc).__name__})") from None
    if key is None or cert is None:
        raise UsageError(f"{path} holds no private key with its certificate")
    return _check_key(key, cert, str(path))


def _write_exclusive(path: Path, data: bytes, mode: int) -> None:
    """Create `path` with `mode` from the start (never a window with wider rights); an existing name, even a
    dangling symbolic link, is refused."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
    except FileExistsError:
        raise OutputExistsError(f"{path} already exists; keys are never overwritten (choose another folder)") from None
    except OSError as exc:
        raise UsageError(f"cannot write {path} ({exc.strerror})") from None
    with os.fdopen(fd, "wb") as fh:
        os.fchmod(fh.fileno(), mode)  # whatever the umask
        fh.write(data)


def keygen(directory: Path, name: str, now: dt.datetime | None = None) -> tuple[Path, Path]:
    """Write a new P-256 key (mode 0600) and a self-signed certificate; existing files are refused."""
    key_path, cert_path = directory / KEY_NAME, directory / CERT_NAME
    for p in (key_path, cert_path):
        if p.exists() or p.is_symlink():
            raise OutputExistsError(f"{p} already exists; keys are never overwritten (choose another folder)")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create the folder {directory} ({exc.strerror})") from None
    now = now or dt.datetime.now(dt.timezone.utc)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name), x509.NameAttribute(NameOID.ORGANIZATION_NAME, name)])
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
    _write_exclusive(key_path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                 serialization.NoEncryption()), 0o600)
    os.chmod(key_path, 0o600)  # whatever the umask
    _write_exclusive(cert_path, cert.public_bytes(serialization.Encoding.PEM), 0o644)
    return key_path, cert_path


def sign_bytes(identity: Identity, data: bytes) -> bytes:
    """Detached ECDSA/SHA-256 signature, DER-encoded (what `openssl dgst -sha256 -verify` reads)."""
    return identity.key.sign(data, ec.ECDSA(hashes.SHA256()))


def verify_bytes(cert: x509.Certificate, data: bytes, signature: bytes) -> bool:
    """Whether `signature` is the certificate key's ECDSA/SHA-256 signature of `data`."""
    public = cert.public_key()
    if not isinstance(public, ec.EllipticCurvePublicKey):
        return False
    try:
        public.verify(signature, data, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return False
    return True


def _pyhanko_signer(identity: Identity) -> Any:
    from asn1crypto import keys as asn1_keys
    from asn1crypto import x509 as asn1_x509
    from pyhanko.sign import signers
    from pyhanko_certvalidator.registry import SimpleCertificateStore

    cert = asn1_x509.Certificate.load(identity.cert.public_bytes(serialization.Encoding.DER))
    key = asn1_keys.PrivateKeyInfo.load(identity.key.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return signers.SimpleSigner(signing_cert=cert, signing_key=key, cert_registry=SimpleCertificateStore.from_certs([cert]))


def sign_pdf(identity: Identity, pdf: bytes) -> bytes:
    """Sign the PDF as PAdES B-B (ETSI.CAdES.detached, SHA-256) with an invisible signature field."""
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.sign import fields, signers

    meta = signers.PdfSignatureMetadata(field_name=SIGNATURE_FIELD, subfilter=fields.SigSeedSubFilter.PADES,
                                        md_algorithm="sha256")
    writer = IncrementalPdfFileWriter(io.BytesIO(pdf))
    out = signers.sign_pdf(writer, meta, signer=_pyhanko_signer(identity),
                           new_field_spec=fields.SigFieldSpec(SIGNATURE_FIELD))
    return bytes(out.getbuffer())


@dataclass(frozen=True)
class PdfSignatureCheck:
    """What the PDF's signature says: present, intact, covering the whole file, and by whom."""

    present: bool
    intact: bool = False
    valid: bool = False
    entire_file: bool = False
    signer_fingerprint: str | None = None
    detail: str = ""


def check_pdf_signature(pdf: bytes, cert: x509.Certificate) -> PdfSignatureCheck:
    """Validate the PDF's single signature against `cert` as the only trust root, without any network."""
    from asn1crypto import x509 as asn1_x509
    from pyhanko.pdf_utils.reader import PdfFileReader
    from pyhanko.sign.validation import validate_pdf_signature
    from pyhanko.sign.validation.status import SignatureCoverageLevel
    from pyhanko_certvalidator import ValidationContext

    try:
        reader = PdfFileReader(io.BytesIO(pdf), strict=False)
        sigs = reader.embedded_signatures
    except Exception as exc:  # pyHanko raises many types on a damaged file
        return PdfSignatureCheck(present=False, detail=f"the PDF cannot be parsed: {type(exc).__name__}: {exc}")
    if len(sigs) != 1:
        return PdfSignatureCheck(present=False, detail=f"{len(sigs)} signatures found, expected 1")
    root = asn1_x509.Certificate.load(cert.public_bytes(serialization.Encoding.DER))
    context = ValidationContext(trust_roots=[root], allow_fetching=False)
    try:
        status = validate_pdf_signature(sigs[0], context)
    except Exception as exc:
        return PdfSignatureCheck(present=True, detail=f"validation failed: {type(exc).__name__}: {exc}")
    fingerprint = hashlib.sha256(status.signing_cert.dump()).hexdigest()
    return PdfSignatureCheck(present=True, intact=bool(status.intact), valid=bool(status.valid),
                             entire_file=status.coverage == SignatureCoverageLevel.ENTIRE_FILE,
                             signer_fingerprint=fingerprint, detail=status.summary())
