"""`verify`'s reading of the registration's seal a bundle carries: who sealed, when, and whether its inputs are the
sealed ones (generator.seal.unseal over the bundle's copies, offline)."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography import x509

from generator.bundle.bundlelayout import DECISION_PATH, INPUTS_DIR
from generator.bundle.verdict import Problem
from generator.core.errors import UsageError
from generator.core.system.safefiles import read_key_file
from generator.core.system.strictjson import JsonRefused, loads
from generator.core.termtext import escape_terminal
from generator.seal.record import REGISTRATION_FILE, SEAL_FILES, TOKEN_FILE, SealedFile

if TYPE_CHECKING:  # read only when the bundle carries a seal: pyHanko's imports are not verify's cost otherwise
    from generator.seal.unseal import SealReading

# The seal's files as the bundle carries them: copies of the campaign's, beside the inputs they seal.
SEAL_PATHS = tuple(INPUTS_DIR + name for name in SEAL_FILES)
MAX_CHANGES = 5  # protocol pointers named in one problem
MAX_SUBJECT = 200  # characters of a certificate's subject shown on a line
_SEALED_STATUSES = ("sealed-time-stamped", "sealed-time-not-proven", "seal-broken")


@dataclass
class SealCheck:
    """What `verify` found of the seal: its problems (each fails the verification) and the lines it prints."""

    problems: list[Problem] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


def load_tsa_trust(paths: Sequence[Path]) -> tuple[x509.Certificate, ...]:
    """The authorities of --trust-tsa CERT.pem (repeatable), each file read as --trust reads its own: a regular
    file of at most 1 MiB holding one PEM certificate."""
    certs = []
    for path in paths:
        data = read_key_file(path, "--trust-tsa certificate file").data
        try:
            certs.append(x509.load_pem_x509_certificate(data))
        except ValueError:
            raise UsageError(f"--trust-tsa {path} is not a PEM certificate; give the time-stamping authority's "
                             "certificate (or the CA's that issued it) as PEM") from None
    return tuple(certs)


def _party(subject: str, sha256: str) -> str:
    """A certificate's subject (its holder's own words, escaped and cut) and its SHA-256."""
    shown = escape_terminal(subject)
    shown = shown if len(shown) <= MAX_SUBJECT else shown[:MAX_SUBJECT] + "..."
    return f"{shown} (SHA-256 {sha256})"


def _change(sealed: SealedFile, current: bytes | None, size: int, digest: str) -> str:
    """What changed in a bundle's input since it was sealed, in words when its registered copy allows."""
    from generator.audit.sealing import (
        sealdiff,  # only for a changed input: verify does not load the audit side otherwise
    )

    old = sealed.registered_bytes()
    said = None
    if old is not None and current is not None:
        if sealed.role in ("protocol", "lab_manifest"):
            changes = sealdiff.json_changes(old, current) or []
            said = "; ".join(f"{p} {w} -> {n}" for p, w, n in changes[:MAX_CHANGES]) + " after registration" \
                if changes else None
        elif sealed.role == "tariffs":
            said = sealdiff.row_changes(old, current)
        else:
            said = sealdiff.id_changes(old, current)
    return said or sealdiff.byte_change(sealed.size, sealed.sha256, size, digest)


def _inputs_sealed(root: Path, payload: dict[str, tuple[int, str]], files: Sequence[SealedFile]) -> list[Problem]:
    """Each file the seal lists is among the bundle's inputs, byte for byte as sealed (the signed size and SHA-256
    MANIFEST.json gives it, which the verification has checked the copy against)."""
    out = []
    for sealed in files:
        rel = INPUTS_DIR + sealed.path
        if rel not in payload:
            out.append(Problem("sealed-input-changed", rel, f"{sealed.path} was sealed with the registration and "
                               "the bundle carries no copy of it"))
            continue
        size, digest = payload[rel]
        if (size, digest) == (sealed.size, sealed.sha256):
            continue
        current = (root / rel).read_bytes() if size <= 4 * sealed.size + (1 << 20) else None
        out.append(Problem("sealed-input-changed", rel, f"not the file sealed with the registration: "
                           f"{_change(sealed, current, size, digest)}", f"{sealed.size} bytes, sha256 "
                           f"{sealed.sha256}", f"{size} bytes, sha256 {digest}"))
    return out


def _declared(decision: dict[str, Any] | None) -> SealCheck:
    """A bundle without a seal: declared, unless its decision.json says the registration was sealed."""
    check = SealCheck(lines=["registration: declared, not sealed (the bundle carries no registration.json: the "
                             "protocol's registered_at is the campaign's own word)"])
    status = (decision or {}).get("registration") or {}
    if isinstance(status, dict) and status.get("status") in _SEALED_STATUSES:
        check.problems.append(Problem("registration-mismatch", DECISION_PATH, "decision.json says the registration "
                                      f"is {status.get('status')}, but the bundle carries no {REGISTRATION_FILE}",
                                      str(status.get("status")), "declared"))
    return check


def _against_decision(decision: dict[str, Any] | None, reading: SealReading) -> list[Problem]:
    """decision.json's registration names the seal the bundle carries: its registration.json and signer."""
    status = (decision or {}).get("registration")
    if not isinstance(status, dict):
        return [Problem("registration-mismatch", DECISION_PATH, f"the bundle carries {REGISTRATION_FILE}, but "
                        "decision.json gives no registration status", "a sealed registration", "none")]
    out = []
    if status.get("registration_sha256") != reading.registration_sha256:
        out.append(Problem("registration-mismatch", DECISION_PATH, f"decision.json's registration names another "
                           f"{REGISTRATION_FILE} than the bundle's", str(reading.registration_sha256),
                           str(status.get("registration_sha256"))))
    signer = status.get("signer")
    signer = signer if isinstance(signer, dict) else {}
    if reading.signer is not None and signer.get("sha256") != reading.signer.sha256:
        out.append(Problem("registration-mismatch", DECISION_PATH, "decision.json's registration names another "
                           "signer than the seal's signature", reading.signer.sha256, str(signer.get("sha256"))))
    return out


def _time_lines(reading: SealReading) -> list[str]:
    token = reading.token
    if token is None:
        return ["  time: NOT PROVEN: the seal carries no time-stamp token; it proves who registered and what, not "
                "when"]
    when = token.time.strftime("%Y-%m-%dT%H:%M:%SZ")
    tsa = _party(token.tsa_subject, token.tsa_sha256)
    if token.trusted:
        return [f"  time-stamped by {tsa} at {when}, an authority you trust (--trust-tsa)"]
    return [f"  time: {when}, stated by an unchecked authority: {tsa}; not proven unless you trust it: give its "
            "certificate to --trust-tsa, or check the token with `openssl ts -verify` (docs/security.md)"]


def _lines(reading: SealReading, count: int, ok: bool) -> list[str]:
    head = (f"registration: sealed: the bundle's inputs are the {count} files {REGISTRATION_FILE} seals, byte for "
            f"byte ({INPUTS_DIR}{REGISTRATION_FILE}, .p7s{', .tsr' if reading.token is not None else ''})" if ok else
            "registration: FAILED: the seal the bundle carries does not verify, or the bundle's inputs are not the "
            "sealed ones (problems above)")
    lines = [head]
    if reading.signer is not None:
        lines.append(f"  sealed by {_party(reading.signer.subject, reading.signer.sha256)} (the certificate the "
                     "signature was made with; its subject is the signer's own words)")
    if reading.token is not None or ok:
        lines += _time_lines(reading)
    return lines


def check_bundle_seal(root: Path, payload: dict[str, tuple[int, str]], contents: dict[str, bytes],
                      decision_raw: bytes | None, trust_tsa: Sequence[x509.Certificate], max_depth: int) -> SealCheck:
    """The seal among the bundle's inputs, read from the bytes the verification hashed (`contents`); `payload`:
    the signed size and SHA-256 of each payload file. A seal file whose checksum failed is not read."""
    from generator.seal.unseal import read_seal

    try:
        decision = loads(decision_raw, max_depth) if decision_raw is not None else None
    except (JsonRefused, ValueError):
        decision = None  # decision.json's own problem, reported by the verification
    decision = decision if isinstance(decision, dict) else None
    carried = [rel for rel in SEAL_PATHS if rel in payload]
    if not carried:
        return _declared(decision)
    if any(rel not in contents for rel in carried):
        return SealCheck(lines=["registration: NOT CHECKED: a file of its seal failed its size or checksum"])
    with tempfile.TemporaryDirectory(prefix="gpu-audit-seal-") as tmp:
        for rel in carried:  # what is read is what was hashed
            (Path(tmp) / rel.removeprefix(INPUTS_DIR)).write_bytes(contents[rel])
        reading = read_seal(Path(tmp), trust_tsa)
    check = SealCheck()
    for problem in reading.problems:
        code = "seal-token-invalid" if problem.file == TOKEN_FILE else "seal-invalid"
        check.problems.append(Problem(code, INPUTS_DIR + problem.file, problem.message))
    if reading.registration is not None:
        check.problems += _inputs_sealed(root, payload, reading.registration.files)
        check.problems += _against_decision(decision, reading)
    check.lines = _lines(reading, len(reading.registration.files) if reading.registration else 0,
                         not check.problems)
    return check

