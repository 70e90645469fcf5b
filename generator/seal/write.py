"""Sealing a registration: registration.json written, signed (CMS, detached) and, given an authority, time-stamped."""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from generator.core.errors import OutputExistsError, UnreadableInputError, UsageError
from generator.core.system.safefiles import open_regular, write_new_files
from generator.seal.record import (
    REGISTRATION_FILE,
    SCHEMA_VERSION,
    SEAL_FILES,
    SIGNATURE_FILE,
    TOKEN_FILE,
    Registration,
    SealedFile,
    Signer,
)


class NoTimestampError(UsageError):
    """The time-stamping authority gave no token (unreachable, refusing, or a malformed answer)."""


@dataclass(frozen=True)
class Sealed:
    """What sealing wrote: the registration and the paths of its files (the token's only with an authority)."""

    registration: Registration
    written: tuple[Path, ...]


def _read(root: Path, rel: str) -> bytes:
    try:
        with open_regular(root / rel) as fh:
            return fh.read()
    except OSError as exc:
        raise UnreadableInputError(f"{rel}: cannot be read to seal it ({exc.strerror or exc})") from None


def refuse_existing(root: Path, force: bool) -> None:
    """An existing seal is never replaced unless `force`: sealing again after the runs is the very change a seal
    exists to show."""
    existing = [name for name in SEAL_FILES if (root / name).exists() or (root / name).is_symlink()]
    if existing and not force:
        raise OutputExistsError(
            f"{root / existing[0]} already exists: this campaign is sealed. Sealing it again after its runs would "
            "replace the registration by one made after the results, which is exactly what a seal exists to "
            "show; keep the seal you have. Only before any run, to correct the registration, seal it again with "
            "force")


def _signature(signer: Any, data: bytes) -> bytes:
    """A detached CMS SignedData (DER) over `data`, SHA-256, made by pyHanko's signer."""
    content = asyncio.run(signer.async_sign_general_data(data, "sha256", detached=True))
    signed: bytes = content.dump()
    return signed


def _token(timestamper: Any, signature: bytes) -> bytes:
    """The authority's RFC 3161 response (DER) over the SHA-256 of the signature file's bytes."""
    from pyhanko.sign.timestamps.common_utils import handle_tsp_response

    try:
        nonce, request = timestamper.request_cms(hashlib.sha256(signature).digest(), "sha256")
        response = asyncio.run(timestamper.async_request_tsa_response(request))
        handle_tsp_response(response, nonce)  # granted, our nonce, a token
    except Exception as exc:  # noqa: BLE001 - an unreachable, refusing or malformed authority: the environment's
        raise NoTimestampError(f"no timestamp from the authority ({type(exc).__name__}: {str(exc)[:300]})"
                               ) from None
    token: bytes = response.dump()
    return token


def seal_registration(root: Path, files: list[tuple[str, str]], registered_at: str, tool_version: str, *,
                      signer: Any, certificate: x509.Certificate, timestamper: Any = None,
                      force: bool = False) -> Sealed:
    """Seal the campaign folder `root`: each of `files` (role, path relative to root) read and recorded with its
    size, SHA-256 and a copy, registration.json signed with pyHanko's `signer` (whose certificate is
    `certificate`), and with a pyHanko `timestamper`, the signature time-stamped.

    An existing seal is refused unless `force` (its files are then replaced).
    """
    refuse_existing(root, force)
    der = certificate.public_bytes(serialization.Encoding.DER)
    registration = Registration(
        SCHEMA_VERSION, "gpu-audit", tool_version, registered_at,
        Signer(certificate.subject.rfc4514_string(), hashlib.sha256(der).hexdigest()),
        tuple(SealedFile.of(rel, role, _read(root, rel)) for role, rel in files))
    data = registration.to_bytes()
    signature = _signature(signer, data)
    out = {REGISTRATION_FILE: (data, 0o644), SIGNATURE_FILE: (signature, 0o644)}
    if timestamper is not None:
        out[TOKEN_FILE] = (_token(timestamper, signature), 0o644)
    for name in SEAL_FILES if force else ():
        (root / name).unlink(missing_ok=True)  # the old token stamps the old signature: never kept beside a new one
    written = write_new_files(root, out, what="registration seal")
    return Sealed(registration, tuple(written))
