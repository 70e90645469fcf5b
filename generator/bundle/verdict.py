"""What `verify` concluded, kept in two parts that cannot be confused: integrity and identity.

Integrity: every file is listed, every checksum and signature holds, the cross-checks agree. Identity: who
signed. A signature proves only that someone holding *a* key signed; anyone can make a key whose certificate
says "Example Org". So the signer is always shown by the SHA-256 fingerprint of the certificate the
signatures were made with, and it is *checked* only against a trust anchor the reader got elsewhere: the
signer's certificate (`--trust CERT.pem`) or its fingerprint (`--trust-fingerprint SHA256:...`).

The states and their exit status (README, `verify`):

- failed: a problem is listed; exit 1;
- trusted: intact and signed by the trust anchor; the only "OK"; exit 0;
- not-checked: intact, signed, no trust anchor given; exit 1 ("verification failed: signer not checked"), so that
  `gpu-audit verify BUNDLE && pay` never pays on a bundle anyone could have re-signed;
- unsigned: intact, built with --unsigned, accepted because --allow-unsigned was given; exit 0, never "OK".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cryptography import x509

from generator.core.termtext import escape_terminal

IDENTITY_CODES = frozenset({"untrusted-signer", "unsigned"})  # the bundle may still be intact
_HEX = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Problem:
    """One reason a bundle does not verify: which file, what, expected and found."""

    code: str
    file: str
    message: str
    expected: str | None = None
    found: str | None = None

    def __str__(self) -> str:
        text = f"{self.file}: {self.message}"
        if self.expected is not None or self.found is not None:
            text += f" (expected {self.expected}, found {self.found})"
        return f"{text} [{self.code}]"


def show_fingerprint(hex_digest: str) -> str:
    """`SHA256:` and the lower-case hex of the certificate's DER encoding: the form --trust-fingerprint takes."""
    return f"SHA256:{hex_digest}"


def parse_fingerprint(text: str) -> str | None:
    """The hex SHA-256 of `SHA256:<hex>`, also as openssl prints it (`sha256 Fingerprint=AB:CD:...`); else None."""
    value = text.strip()
    for prefix in ("sha256 fingerprint=", "sha256:", "sha-256:"):
        if value.lower().startswith(prefix):
            value = value[len(prefix):]
            break
    value = value.replace(":", "").lower()
    return value if _HEX.fullmatch(value) else None


@dataclass(frozen=True)
class Trust:
    """The trust anchor the reader gives: a certificate, or a fingerprint obtained from the signer."""

    cert: x509.Certificate | None = None
    fingerprint: str | None = None  # lower-case hex
    source: str = ""  # how the reader gave it, for the output: "--trust keys/signer.pem"

    @property
    def given(self) -> bool:
        return self.cert is not None or self.fingerprint is not None


@dataclass
class Report:
    """The outcome of verifying a bundle or a standalone note."""

    bundle: str
    problems: list[Problem] = field(default_factory=list)
    bundle_id: str | None = None
    signer: str | None = None  # the certificate's subject: the signer's own words, shown but never relied on
    signer_fingerprint: str | None = None  # hex, from the signatures themselves
    signed: bool | None = None  # None: not known (MANIFEST.json unreadable)
    trust: Trust = field(default_factory=Trust)
    trusted: bool = False  # the signer is the trust anchor (or issued by the trusted certificate)
    payload_files: int = 0
    tag_files: int = 0
    kind: str = "bundle"  # or "note": a decision-note.pdf verified on its own
    timestamp: str | None = None
    timestamp_authority: str | None = None
    complete: bool = True  # False: verification stopped early (nothing more could be, or was to be, checked)

    @property
    def intact(self) -> bool:
        return self.complete and not any(p.code not in IDENTITY_CODES for p in self.problems)

    @property
    def state(self) -> str:
        if self.problems:
            return "failed"
        if self.signed is False:
            return "unsigned"  # no problem listed: --allow-unsigned was given
        return "trusted" if self.trusted else "not-checked"

    @property
    def ok(self) -> bool:
        """Exit 0: intact and signed by the trust anchor, or unsigned and accepted by --allow-unsigned."""
        return self.state in ("trusted", "unsigned")


def _what(report: Report) -> str:
    if report.kind == "note":
        return (f"decision note {report.bundle_id}: certified signature over the whole file, nothing added after it, "
                "its embedded decision.json has the bundle ID its title shows")
    return (f"bundle {report.bundle_id}: {report.payload_files} payload files and {report.tag_files} tag files, each "
            "listed in MANIFEST.json with its checksum; every checksum, signature and cross-check holds")


def report_lines(report: Report) -> list[str]:
    """The summary `verify` prints after the problems: integrity, signer, identity, then one verdict line.

    Every name in it (the bundle's path, the certificate's subject) is escaped for the terminal.
    """
    where = escape_terminal(report.bundle)
    fp = show_fingerprint(report.signer_fingerprint) if report.signer_fingerprint else None
    subject = escape_terminal(report.signer) if report.signer else None
    failed = sum(p.code not in IDENTITY_CODES for p in report.problems)
    if report.intact:
        lines = [f"integrity: intact: {escape_terminal(_what(report))}"]
    elif failed:
        lines = [f"integrity: FAILED: {failed} problem(s) above"]
    else:
        lines = ["integrity: NOT CHECKED: nothing an untrusted signer made is parsed"]
    if report.signed is False:
        lines.append("signer: none: the bundle is UNSIGNED (built with --unsigned)")
    elif fp:
        lines.append(f"signer: {fp} (read from the signatures; the certificate calls itself {subject}, which anyone "
                     "can write into a certificate of their own)")
    else:
        lines.append("signer: unknown (no readable signature)")
    if report.timestamp:
        lines.append(f"timestamp: {escape_terminal(report.timestamp)} by "
                     f"{escape_terminal(report.timestamp_authority or 'an unnamed authority')} (RFC 3161)")
    if report.signed is False:
        lines.append("identity: NOT CHECKED: nothing shows who made this bundle; anyone can build one with any content")
    elif report.trust.given and report.trusted:
        lines.append(f"identity: trusted: the signer is the trust anchor ({escape_terminal(report.trust.source)})")
    elif report.trust.given:
        lines.append(f"identity: FAILED: the signer is not the trust anchor ({escape_terminal(report.trust.source)})")
    elif fp:
        lines.append("identity: NOT CHECKED: no trust anchor was given, so nothing shows who signed; anyone can "
                     "re-sign a changed bundle with a key of their own under the same name")
        lines.append(f"  to check it: gpu-audit verify {where} --trust CERT.pem (the signer's certificate, obtained "
                     "from them), or --trust-fingerprint SHA256:... with the fingerprint the signer gives you by "
                     "another channel (phone, letter, their website), which must equal the signer's above")
    state = report.state
    if state == "trusted":
        lines.append(f"OK: {where} verifies: {report.kind} {report.bundle_id}, signed by {fp}, trusted")
    elif state == "unsigned":
        lines.append(f"UNSIGNED: {where} is intact but unsigned; accepted only because --allow-unsigned was given")
    elif state == "not-checked":
        lines.append(f"FAILED: {where}: verification failed: signer not checked ({report.kind} intact, signed by {fp})")
    else:
        lines.append(f"FAILED: {where}: {len(report.problems)} problem(s)")
    return lines
