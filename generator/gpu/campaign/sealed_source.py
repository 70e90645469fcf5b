"""A sealed registration as `campaign run` meets it: its files checked by size and SHA-256, standard library only.

`campaign run` runs on a bare GPU machine (no pyHanko, no cryptography), so it does not verify the CMS signature or
the token: `check` does. What it can and does refuse is a run against a registration whose files changed since they
were sealed: such runs would not be the registered ones. The seal travels into the campaign folder it writes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from generator.core.errors import UnreadableInputError, UsageError
from generator.core.system.safefiles import open_regular
from generator.seal.record import (
    MAX_REGISTRATION_BYTES,
    REGISTRATION_FILE,
    SEAL_FILES,
    SIGNATURE_FILE,
    TOKEN_FILE,
    Registration,
)

MAX_SEAL_PART_BYTES = 1 << 20  # a signature or a token with its certificates: a few kilobytes
_RESEAL = ("restore the sealed file (the registered one), or register a new protocol, seal it before a new window "
           "and run that")


@dataclass(frozen=True)
class SealedSource:
    """The sealed folder PROTOCOL lies in: its registration, the SHA-256 of registration.json, the seal's files
    (registration.json, its signature and, when stamped, its token) and every sealed file's bytes as checked."""

    root: Path
    registration: Registration
    registration_sha256: str
    seal: dict[str, bytes]
    files: dict[str, bytes]

    @property
    def time_stamped(self) -> bool:
        return TOKEN_FILE in self.seal


def _read(path: Path, limit: int) -> bytes:
    try:
        with open_regular(path) as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise UnreadableInputError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise UsageError(f"{path}: over {limit} bytes, too large for a seal's file")
    return data


def _present(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def _sealed_bytes(root: Path, rel: str, size: int, sha256: str) -> bytes:
    """A sealed file's bytes, refused (naming the file) when missing or not the bytes sealed."""
    parts = PurePosixPath(rel).parts
    if PurePosixPath(rel).is_absolute() or ".." in parts or "\\" in rel:
        raise UsageError(f"{root / REGISTRATION_FILE}: the sealed path {rel!r} is not inside the campaign folder")
    path = root.joinpath(*parts)
    if not _present(path):
        raise UsageError(f"{path} is sealed by {REGISTRATION_FILE} but missing; nothing was run: {_RESEAL}")
    data = _read(path, max(size, 0) + 1)
    digest = hashlib.sha256(data).hexdigest()
    if len(data) != size or digest != sha256:
        raise UsageError(f"{path} changed since it was sealed ({len(data)} bytes, SHA-256 {digest}; sealed: {size} "
                         f"bytes, SHA-256 {sha256}); nothing was run: runs against a changed registration would not "
                         f"be the registered ones; {_RESEAL}")
    return data


def sealed_source(protocol: Path) -> SealedSource | None:
    """The seal of the folder PROTOCOL lies in, every sealed file checked; None when that folder holds no seal.

    A seal whose registration.json does not read, that does not seal PROTOCOL, lacks its signature, or names a
    file that is missing or changed is a UsageError: nothing may run against it."""
    root = protocol.parent
    if not _present(root / REGISTRATION_FILE):
        if any(_present(root / name) for name in (SIGNATURE_FILE, TOKEN_FILE)):
            raise UsageError(f"{root / REGISTRATION_FILE} is missing beside its seal; nothing was run: restore it")
        return None
    raw = _read(root / REGISTRATION_FILE, MAX_REGISTRATION_BYTES)
    try:
        registration = Registration.from_bytes(raw)
    except ValueError as exc:
        raise UsageError(f"{root / REGISTRATION_FILE} does not read ({exc}); nothing was run") from None
    sealed_protocol = next((f.path for f in registration.files if f.role == "protocol"), None)
    if sealed_protocol != protocol.name:
        raise UsageError(f"{root / REGISTRATION_FILE} seals {sealed_protocol}, not {protocol.name}: give the sealed "
                         f"folder's protocol ({root / str(sealed_protocol)}); nothing was run")
    if not _present(root / SIGNATURE_FILE):
        raise UsageError(f"{root / SIGNATURE_FILE} is missing: {REGISTRATION_FILE} is not signed, so anyone could "
                         "have written it; seal the folder with `gpu-audit register` (nothing was run)")
    seal = {name: _read(root / name, MAX_REGISTRATION_BYTES if name == REGISTRATION_FILE else MAX_SEAL_PART_BYTES)
            for name in SEAL_FILES if _present(root / name)}
    files = {f.path: _sealed_bytes(root, f.path, f.size, f.sha256) for f in registration.files}
    return SealedSource(root, registration, hashlib.sha256(raw).hexdigest(), seal, files)


def carry_seal(source: SealedSource, written: dict[str, bytes]) -> dict[str, bytes]:
    """What the campaign folder must add to carry the seal: each sealed file `campaign run` does not write itself,
    and the seal's files. A file it writes (`written`, from the corpus) must be the sealed bytes: a corpus whose
    IDs, reference or subgroups differ from the registered ones is refused, naming the file."""
    extra: dict[str, bytes] = {}
    for rel, data in source.files.items():
        if rel not in written:
            extra[rel] = data
        elif written[rel] != data:
            raise UsageError(f"{source.root / rel} is sealed, but what `campaign run` writes there from --corpus "
                             "differs; nothing was run: give the corpus the sealed folder was prepared from "
                             "(`gpu-audit campaign prepare`), or register a new protocol")
    return {**extra, **source.seal}
