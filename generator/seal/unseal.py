"""Reading a seal, offline: registration.json, its CMS signature and its RFC 3161 token verified, or what fails."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from generator.core.system.safefiles import open_regular
from generator.seal.record import (
    MAX_REGISTRATION_BYTES,
    REGISTRATION_FILE,
    SIGNATURE_FILE,
    TOKEN_FILE,
    Registration,
    Signer,
)

MAX_SEAL_PART_BYTES = 1 << 20  # a signature or a token with its certificates is a few kilobytes

# pyHanko logs a token whose imprint differs as a warning of its own; the reading says it as a problem instead.
logging.getLogger("pyhanko.sign.validation.generic_cms").setLevel(logging.ERROR)


@dataclass(frozen=True)
class Token:
    """The RFC 3161 token's time (UTC) and its authority: subject, SHA-256 of its certificate, and whether that
    authority is one the reader trusts (else the time is stated by an unchecked authority)."""

    time: dt.datetime
    tsa_subject: str
    tsa_sha256: str
    trusted: bool


@dataclass(frozen=True)
class SealProblem:
    """What fails in the seal, on which of its files."""

    file: str
    message: str


@dataclass
class SealReading:
    """A campaign folder's seal as read: absent, or registration.json with who signed it and when it was stamped."""

    present: bool
    registration: Registration | None = None
    registration_sha256: str | None = None
    signer: Signer | None = None  # the CMS signature's certificate, when the signature verifies
    token: Token | None = None
    problems: list[SealProblem] = field(default_factory=list)

    @property
    def signed(self) -> bool:
        """Whether registration.json reads and its signature verifies by the certificate it names."""
        return self.registration is not None and self.signer is not None and not any(
            p.file in (REGISTRATION_FILE, SIGNATURE_FILE) for p in self.problems)


def _read(path: Path, limit: int) -> bytes | None:
    """A seal file's bytes (None when absent); one over `limit` or not a regular file is an OSError."""
    if not (path.exists() or path.is_symlink()):
        return None
    with open_regular(path) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise OSError(f"over {limit} bytes")
    return data


def _asn1_time(moment: Any) -> dt.datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def _named(cert: Any) -> tuple[str, str]:
    """A certificate as the seal reports it: its subject (RFC 4514) and the SHA-256 of its DER bytes."""
    der = cert.dump()
    return x509.load_der_x509_certificate(der).subject.rfc4514_string(), hashlib.sha256(der).hexdigest()


def _signature_signer(data: bytes, signature: bytes) -> tuple[Signer | None, str | None]:
    """The signer of a detached CMS signature over `data`, or why it does not verify."""
    from asn1crypto import cms
    from pyhanko.sign.validation import async_validate_detached_cms
    from pyhanko_certvalidator import ValidationContext

    try:
        info = cms.ContentInfo.load(signature)
        if info["content_type"].native != "signed_data":
            return None, "it is not a CMS SignedData"
        signed = info["content"]
        if len(signed["signer_infos"]) != 1 or signed["encap_content_info"]["content"].native is not None:
            return None, "it is not one detached signature"
        # Integrity only: who the signer is, and whether the reader trusts them, is reported, not decided here.
        context = ValidationContext(trust_roots=[], allow_fetching=False)
        status = asyncio.run(async_validate_detached_cms(data, signed, signer_validation_context=context))
        cert = status.signing_cert
    except Exception as exc:  # noqa: BLE001 - asn1crypto and pyHanko raise many types on a damaged structure
        return None, f"it cannot be read as a CMS signature ({type(exc).__name__})"
    if not (status.intact and status.valid):
        return None, "it does not verify over registration.json's bytes: they changed after signing"
    return Signer(*_named(cert)), None


def _tsa_context(trust: Sequence[x509.Certificate]) -> Any:
    from asn1crypto import x509 as asn1_x509
    from pyhanko_certvalidator import ValidationContext

    roots = [asn1_x509.Certificate.load(c.public_bytes(serialization.Encoding.DER)) for c in trust]
    return ValidationContext(trust_roots=roots, allow_fetching=False)


def _token(signature: bytes, response: bytes, trust: Sequence[x509.Certificate]) -> tuple[Token | None, str | None]:
    """The token of an RFC 3161 response over the signature file's bytes, or why it does not verify."""
    from asn1crypto import tsp
    from pyhanko.sign.validation.generic_cms import validate_tst_signed_data
    from pyhanko.sign.validation.status import TimestampSignatureStatus

    try:
        answer = tsp.TimeStampResp.load(response)
        if answer["status"]["status"].native not in ("granted", "granted_with_mods"):
            return None, "the authority did not grant it"
        signed = answer["time_stamp_token"]["content"]
        imprint = signed["encap_content_info"]["content"].parsed["message_imprint"]
        algorithm = imprint["hash_algorithm"]["algorithm"].native
        if hashlib.new(algorithm, signature).digest() != imprint["hashed_message"].native:
            return None, f"it stamps other bytes than {SIGNATURE_FILE}'s"
        status = TimestampSignatureStatus(**asyncio.run(validate_tst_signed_data(
            signed, _tsa_context(trust), lambda name: hashlib.new(name, signature).digest())))
        cert = status.signing_cert
    except Exception as exc:  # noqa: BLE001 - asn1crypto and pyHanko raise many types on a damaged structure
        return None, f"it cannot be read as an RFC 3161 time-stamp response ({type(exc).__name__})"
    if not (status.intact and status.valid):
        return None, "the authority's signature on it does not verify"
    return Token(_asn1_time(status.timestamp).astimezone(dt.UTC), *_named(cert),
                 bool(trust) and status.trusted), None


def _verified(reading: SealReading, data: bytes, signature: bytes | None, response: bytes | None,
              trust: Sequence[x509.Certificate]) -> None:
    """The signature by the certificate registration.json names, then the token over the signature."""
    registration = reading.registration
    if signature is None:
        reading.problems.append(SealProblem(SIGNATURE_FILE, f"{SIGNATURE_FILE} is missing: registration.json is not "
                                                            "signed, so anyone could have written it"))
        return
    signer, why = _signature_signer(data, signature)
    if why is not None:
        reading.problems.append(SealProblem(REGISTRATION_FILE, f"the signature {SIGNATURE_FILE}: {why}"))
    elif registration is not None and signer is not None and signer.sha256 != registration.signer.sha256:
        reading.problems.append(SealProblem(REGISTRATION_FILE, f"the signature is made with the certificate "
                                            f"{signer.subject} (SHA-256 {signer.sha256}), not the one "
                                            f"registration.json names ({registration.signer.sha256})"))
    else:
        reading.signer = signer
    if response is not None:
        reading.token, why = _token(signature, response, trust)
        if why is not None:
            reading.problems.append(SealProblem(TOKEN_FILE, f"the time-stamp token: {why}"))


def read_seal(root: Path, trust_tsa: Sequence[x509.Certificate] = ()) -> SealReading:
    """The seal of the campaign folder `root`, verified without any network: registration.json read, its
    signature checked over its exact bytes, and the token over the signature's bytes. `trust_tsa` are the
    authorities the reader trusts; a token of another is read, with its time stated by an unchecked authority."""
    parts: dict[str, bytes | None] = {}
    reading = SealReading(present=False)
    for name, limit in ((REGISTRATION_FILE, MAX_REGISTRATION_BYTES), (SIGNATURE_FILE, MAX_SEAL_PART_BYTES),
                        (TOKEN_FILE, MAX_SEAL_PART_BYTES)):
        try:
            parts[name] = _read(root / name, limit)
        except OSError as exc:
            parts[name] = None
            reading.problems.append(SealProblem(name, f"{name} cannot be read ({exc.strerror or exc})"))
    reading.present = any(v is not None for v in parts.values()) or bool(reading.problems)
    data = parts[REGISTRATION_FILE]
    if data is None:
        if reading.present and not reading.problems:
            reading.problems.append(SealProblem(REGISTRATION_FILE, "registration.json is missing beside its seal"))
        return reading
    reading.registration_sha256 = hashlib.sha256(data).hexdigest()
    try:
        reading.registration = Registration.from_bytes(data)
    except ValueError as exc:
        reading.problems.append(SealProblem(REGISTRATION_FILE, f"registration.json does not read: {exc}"))
    _verified(reading, data, parts[SIGNATURE_FILE], parts[TOKEN_FILE], trust_tsa)
    return reading
