"""What `verify` concluded, kept in two parts that cannot be confused: integrity and identity.

Integrity: every file is listed, every checksum and signature holds, the cross-checks agree. Identity: who
signed. A signature proves only that someone holding *a* key signed; anyone can make a key whose certificate
says "Example Org". So the signer is always shown by the SHA-256 fingerprint of the certificate the
signatures were made with, and it is *checked* only against a trust anchor the reader got elsewhere: the
signer's certificate (`--trust CERT.pem`) or its fingerprint (`--trust-fingerprint SHA256:...`).

The states and their exit status (docs/security.md):

- failed: a problem is listed; exit 1;
- trusted: intact and signed by the trust anchor; the only "OK"; exit 0;
- not-checked: intact, signed, no trust anchor given; exit 1 ("verification failed: signer not checked"), so that
  `gpu-audit verify BUNDLE && pay` never pays on a bundle anyone could have re-signed;
- unsigned: intact, built with --unsigned, accepted because --allow-unsigned was given; exit 0, never "OK".
"""

from __future__ import annotations

import hashlib
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from generator.core.codes.registry import registered
from generator.core.errors import UsageError
from generator.core.system.safefiles import read_key_file
from generator.core.termtext import counted, escape_terminal, quoted_words

# What each identity problem says of the signer, for the `identity: FAILED` line; the bundle may still be intact.
IDENTITY_REASONS = {
    "untrusted-signer": "the signer is not the trust anchor, nor does a chain it carries lead to it",
    "trust-is-own-signer": "the trust anchor is the bundle's own signer.pem, which proves nothing",
    "certificate-expired": "the signer's certificate had expired",
    "certificate-not-yet-valid": "the signer's certificate was not yet valid",
    "certificate-usage": "the anchor did not issue the signer's certificate for signing",
    "certificate-chain": "the chain from the signer's certificate to the anchor does not validate",
    "certificate-names": "the name constraints on the chain to the anchor exclude a name on it",
    "certificate-weak": "a key on the signer's chain is too weak, or a certificate is signed with a weak hash",
    "malformed-certificate": "the signer's certificate breaks RFC 5280",
    "unsigned": "the bundle is unsigned",
}
IDENTITY_CODES = frozenset(IDENTITY_REASONS)
# The line that shows a certificate's own words starts with this, and the words, quoted and cut, fit in 80
# columns after it: a wrapped remainder can never start a line that reads like a verdict.
WORDS_PREFIX = "  certificate's words: "
WORDS_COLUMNS = 80 - len(WORDS_PREFIX) - 3
_HEX = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Problem:
    """One reason a bundle does not verify: which file, what, expected and found."""

    code: str
    file: str
    message: str
    expected: str | None = None
    found: str | None = None

    def __post_init__(self) -> None:
        registered(self.code, "problem")  # UnregisteredCode for a code generator.core.codes.registry does not hold

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
    path: Path | None = None  # --trust's file, resolved: the bundle's own signer.pem proves nothing

    @property
    def given(self) -> bool:
        return self.cert is not None or self.fingerprint is not None

    @property
    def anchor_fingerprint(self) -> str | None:
        """The anchor's fingerprint (hex): the one given, or the certificate's."""
        if self.cert is None:
            return self.fingerprint
        return hashlib.sha256(self.cert.public_bytes(serialization.Encoding.DER)).hexdigest()


def load_trust(path: Path | None = None, fingerprint: str | None = None) -> Trust:
    """The trust anchor of --trust CERT.pem or --trust-fingerprint SHA256:HEX (at most one of them)."""
    if path is not None and fingerprint is not None:
        raise UsageError("give --trust CERT.pem or --trust-fingerprint SHA256:HEX, not both")
    if fingerprint is not None:
        parsed = parse_fingerprint(fingerprint)
        if parsed is None:
            raise UsageError(f"--trust-fingerprint {fingerprint!r} is not SHA256: and 64 hex digits")
        return Trust(fingerprint=parsed, source=f"--trust-fingerprint SHA256:{parsed}")
    if path is None:
        return Trust()
    # A regular file of at most 1 MiB, opened without blocking: a FIFO or /dev/zero is refused at once.
    data = read_key_file(path, "trust certificate file").data
    try:
        return Trust(cert=x509.load_pem_x509_certificate(data), source=f"--trust {path}", path=path.resolve())
    except ValueError:
        raise UsageError(f"{path} is not a PEM certificate") from None


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
    intermediates: list[x509.Certificate] = field(default_factory=list)  # between the signer and a CA anchor
    payload_files: int = 0
    tag_files: int = 0
    kind: str = "bundle"  # or "note": a decision-note.pdf verified on its own
    timestamp: str | None = None
    timestamp_authority: str | None = None
    complete: bool = True  # False: verification stopped early (nothing more could be, or was to be, checked)
    library_warnings: list[str] = field(default_factory=list)  # shown before the verdict, never on stderr after it
    decision: bytes | None = None  # decision.json as verified (the note's embedded one for a note alone)
    registration: list[str] = field(default_factory=list)  # what verify says of the registration's seal
    note: bytes | None = None  # decision-note.pdf as verified: what `invoice attach` embeds

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


def add_library_warnings(report: Report, caught: list[warnings.WarningMessage]) -> None:
    """What a library warned of during the verification, in the report instead of on stderr after the verdict.

    cryptography's deprecation warnings name a certificate it will refuse to load in a future release (a serial
    number that is not positive, a non-canonical DER encoding): a malformed certificate, so a problem. Its other
    warnings (a subject field over an RFC 5280 length bound) and any other library's are a line of their own.
    """
    from cryptography.utils import CryptographyDeprecationWarning

    seen: set[str] = set()
    for warning in caught:
        message = str(warning.message)
        if message in seen:
            continue
        seen.add(message)
        if issubclass(warning.category, CryptographyDeprecationWarning):
            file = "signer.pem" if report.kind == "bundle" else Path(report.bundle).name
            report.problems.append(Problem("malformed-certificate", file, "a certificate breaks RFC 5280, and "
                                           f"cryptography will refuse to read it: {message}"))
        else:
            report.library_warnings.append(f"reading the certificates, {warning.category.__name__}: {message}")


def words_line(text: str, whose: str) -> str:
    """A certificate's own words on a line of their own: escaped, quoted, cut to fit, and said to be theirs."""
    words, cut = quoted_words(text, WORDS_COLUMNS)
    return f"{WORDS_PREFIX}{words} ({cut + '; ' if cut else ''}{whose})"


def _signer_lines(report: Report, fp: str | None) -> list[str]:
    if report.signed is False:
        return ["signer: none: the bundle is UNSIGNED (built with --unsigned)"]
    if not fp:
        return ["signer: unknown (no readable signature)"]
    return [f"signer: {fp} (read from the signatures: this fingerprint, and nothing the certificate says, names the "
            "signer)", words_line(report.signer or "", "the signer's own, unchecked: anyone can write any name "
                                  "into a certificate of their own")]


def _anchor_lines(report: Report) -> list[str]:
    """The identity line of a trusted signer: which anchor matched, and for a CA the chain."""
    trust, source = report.trust, escape_terminal(report.trust.source)
    anchor = trust.anchor_fingerprint
    if trust.cert is None or anchor == report.signer_fingerprint:
        shown = "" if trust.cert is None else f": {show_fingerprint(anchor or '')}"
        return [f"identity: trusted: the signer is the trust anchor ({source}{shown})"]
    between = [hashlib.sha256(c.public_bytes(serialization.Encoding.DER)).hexdigest() for c in report.intermediates]
    between = [f for f in between if f not in (anchor, report.signer_fingerprint)]  # a chain file may hold its root
    through = "".join(f"{', through' if i == 0 else ','} intermediate {show_fingerprint(f)}"
                      for i, f in enumerate(between))
    return [f"identity: trusted: signer {show_fingerprint(report.signer_fingerprint or '')} issued by anchor "
            f"{show_fingerprint(anchor or '')} ({source}){through}, for signing, valid at the signing time and today; "
            "revocation NOT checked (verify uses no network: whether the CA revoked a certificate of the chain is "
            "for its CRL or OCSP service to say)",
            words_line(trust.cert.subject.rfc4514_string(), "the anchor's own")]


def _identity_lines(report: Report, where: str, fp: str | None) -> list[str]:
    reasons = [IDENTITY_REASONS[p.code] for p in report.problems if p.code in IDENTITY_REASONS]
    if report.signed is False:
        return ["identity: NOT CHECKED: nothing shows who made this bundle; anyone can build one with any content"]
    if report.trust.given and report.trusted and not reasons:
        return _anchor_lines(report)
    if report.trust.given and not fp and not reasons:  # no signer was read: nothing was compared with the anchor
        return [f"identity: NOT CHECKED: no signer could be read to compare with the trust anchor "
                f"({escape_terminal(report.trust.source)})"]
    if report.trust.given:
        reason = reasons[0] if reasons else IDENTITY_REASONS["untrusted-signer"]
        return [f"identity: FAILED: {reason} ({escape_terminal(report.trust.source)})"]
    if not fp:
        return []
    return ["identity: NOT CHECKED: no trust anchor was given, so nothing shows who signed; anyone can re-sign a "
            "changed bundle with a key of their own under the same name",
            f"  to check it: gpu-audit verify {where} --trust CERT.pem (the signer's certificate, obtained from them, "
            "or the CA certificate that issued it), or --trust-fingerprint SHA256:... with the fingerprint the signer "
            "gives you by another channel (phone, letter, their website), which must equal the signer's above"]


def report_lines(report: Report) -> list[str]:
    """The summary `verify` prints after the problems: integrity, signer, identity, warnings, one verdict line.

    Every name in it (the bundle's path) is escaped for the terminal; a certificate's words (its subject) are
    quoted, cut and shown on a line of their own that says whose words they are (`words_line`).
    """
    where = escape_terminal(report.bundle)
    fp = show_fingerprint(report.signer_fingerprint) if report.signer_fingerprint else None
    failed = sum(p.code not in IDENTITY_CODES for p in report.problems)
    if report.intact:
        lines = [f"integrity: intact: {escape_terminal(_what(report))}"]
    elif failed:
        lines = [f"integrity: FAILED: {counted(failed, 'problem')} above"]
    else:
        lines = ["integrity: NOT CHECKED: nothing an untrusted signer made is parsed"]
    lines += _signer_lines(report, fp)
    if report.timestamp:
        lines.append(f"timestamp: {escape_terminal(report.timestamp)} (RFC 3161), by "
                     + ("the authority whose certificate says:" if report.timestamp_authority else
                        "an unnamed authority"))
        if report.timestamp_authority:
            lines.append(words_line(report.timestamp_authority, "the time-stamping authority's own"))
    lines += report.registration
    lines += _identity_lines(report, where, fp)
    lines += [f"warning: {escape_terminal(w)}" for w in report.library_warnings]
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


# Files and folders an operating system adds to a folder it shows or zips: named, with what removes them, so that
# a reader whose Finder or Explorer touched the bundle is not left with "not listed in MANIFEST.json" alone.
OS_ARTEFACTS = {
    ".DS_Store": "a file macOS Finder adds to a folder it showed",
    "Thumbs.db": "a thumbnail cache Windows Explorer adds",
    "desktop.ini": "a folder-settings file Windows Explorer adds",
    "__MACOSX": "a folder macOS adds when it zips (resource forks)",
}
_APPLEDOUBLE = "an AppleDouble file macOS adds beside a file copied to a drive that is not its own format"


def os_artefact(rel: str) -> tuple[str, str] | None:
    """(the artefact's path, what it is) for a path an operating system added (None for any other path); a path
    inside `__MACOSX/` is that folder."""
    parts = rel.split("/")
    if "__MACOSX" in parts:
        return "/".join(parts[: parts.index("__MACOSX") + 1]), OS_ARTEFACTS["__MACOSX"]
    if parts[-1] in OS_ARTEFACTS:
        return rel, OS_ARTEFACTS[parts[-1]]
    if parts[-1].startswith("._"):
        return rel, _APPLEDOUBLE
    return None


def _removal(bundle: Path, rel: str, zip_top: Path | None) -> str:
    """The command that removes the artefact `rel` (a path in the bag, or in the zip when `zip_top` is None for a
    zip's top) from the bundle folder or zip."""
    import shlex

    folder = rel.rsplit("/", 1)[-1] == "__MACOSX"
    if zip_top is None:
        return f"rm {'-r ' if folder else ''}{shlex.quote(str(bundle / rel))}"
    entry = (zip_top / rel).as_posix() + ("/*" if folder else "")
    return f"zip -d {shlex.quote(str(bundle))} {shlex.quote(entry)}"


def name_os_artefacts(report: Report, bundle: Path, zip_top: Path | None = None,
                      outside: list[str] | None = None) -> Report:
    """Each unexpected file or folder an operating system added becomes one `os-artefact` problem (still a
    failure) with the command that removes it: `rm` in a folder, `zip -d` in a zip (`zip_top`: the bag's folder
    inside the zip, "." for its top; `outside`: what macOS added at the zip's top, beside the bag's folder,
    listed first); the problems stay in their order, the artefacts at the first one's place."""
    kept: list[Problem] = []
    artefacts: dict[str, Problem] = {}
    for problem in report.problems:
        found = os_artefact(problem.file) if problem.code in ("unexpected-file", "unexpected-folder") else None
        if found is None:
            kept.append(problem)
            continue
        rel, what = found
        if not artefacts:
            kept.append(problem)  # the place of the artefacts' lines
        artefacts[rel] = Problem("os-artefact", rel, f"{what}, not part of the signed bundle: remove it with "
                                 f"`{_removal(bundle, rel, zip_top)}` and verify again")
    if artefacts:
        at = next(i for i, p in enumerate(kept) if p.code in ("unexpected-file", "unexpected-folder")
                  and os_artefact(p.file) is not None)
        kept[at:at + 1] = [artefacts[rel] for rel in sorted(artefacts)]
    top = [Problem("os-artefact", name, f"{OS_ARTEFACTS.get(name, _APPLEDOUBLE)}, beside the bundle in the zip, not "
                   f"part of it: remove it with `{_removal(bundle, name, Path('.'))}` and verify again")
           for name in outside or []]
    report.problems = top + kept
    return report
