"""`verify`: a bundle (folder or zip) checked as a bag, against MANIFEST.json, and by its signatures."""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509

from generator.bagit_format import PAYLOAD_ALGORITHMS, TAG_ALGORITHM, digests, parse_bag_info, parse_manifest
from generator.bundle import MANIFEST, MANIFEST_SIG
from generator.errors import UsageError
from generator.limits import Limits, limit_message, resolve
from generator.readers.jsondoc import parse_document
from generator.render.note import PDF_NAME
from generator.signing import CERT_NAME, cert_fingerprint, check_pdf_signature, verify_bytes
from generator import zipsafe


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


@dataclass
class Report:
    """The outcome of verification."""

    bundle: str
    problems: list[Problem] = field(default_factory=list)
    bundle_id: str | None = None
    signer: str | None = None
    payload_files: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


def _files(root: Path) -> tuple[set[str], list[str]]:
    """Plain files under root (relative, '/'), and anything that is not a plain file or a folder.

    Symbolic links are listed as odd and never followed (rglob does not descend into them), so every
    file the verification reads or hashes lies inside the bundle.
    """
    files, odd = set(), []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_symlink():
            odd.append(rel)
        elif p.is_file():
            files.add(rel)
        elif not p.is_dir():
            odd.append(rel)
    return files, odd


@dataclass
class _Bag:
    """The bundle being verified: its root, its plain files, and the limits on what is read whole."""

    root: Path
    files: set[str]
    limits: Limits


def _read(bag: _Bag, rel: str, report: Report) -> bytes | None:
    """A small file of the bundle read whole; None when it is absent, not a plain file, too large or unreadable.

    Absence is left to the caller to report; the other cases are reported here.
    """
    if rel not in bag.files:
        return None
    path = bag.root / rel
    try:
        size = path.stat().st_size
        if size > bag.limits.max_file_bytes:
            report.problems.append(Problem("too-large", rel, limit_message("max_file_bytes", bag.limits,
                                                                           f"its size, {size} bytes,")))
            return None
        with path.open("rb") as fh:
            return fh.read(bag.limits.max_file_bytes + 1)
    except OSError as exc:
        report.problems.append(Problem("unreadable", rel, f"cannot be read ({exc.strerror})"))
        return None


def _digest(path: Path, algorithm: str, rel: str, report: Report) -> str | None:
    try:
        return digests(path, (algorithm,))[algorithm]
    except OSError as exc:
        report.problems.append(Problem("unreadable", rel, f"cannot be read ({exc.strerror})"))
        return None


def _check_manifest_file(bag: _Bag, name: str, algorithm: str, wanted: set[str], report: Report) -> None:
    root = bag.root
    raw = _read(bag, name, report)
    if raw is None:
        if name not in bag.files:
            report.problems.append(Problem("missing-file", name, "manifest is missing"))
        return
    entries, bad = parse_manifest(raw.decode("utf-8", errors="replace"))
    for line in bad[:5]:
        report.problems.append(Problem("bad-manifest-line", name, f"unreadable line {line[:60]!r}"))
    for rel in sorted(wanted - set(entries)):
        report.problems.append(Problem("unexpected-file", rel, f"file is not listed in {name}"))
    for rel, digest in sorted(entries.items()):
        target = root / rel
        if rel not in wanted or not target.is_file():  # a listed path is never looked up outside the bag
            report.problems.append(Problem("missing-file", rel, f"listed in {name} but absent"))
            continue
        found = _digest(target, algorithm, rel, report)
        if found is not None and found != digest:
            report.problems.append(Problem("checksum-mismatch", rel, f"{algorithm} checksum mismatch", digest, found))


def _check_bag(bag: _Bag, report: Report) -> set[str]:
    root, files = bag.root, bag.files
    bagit = _read(bag, "bagit.txt", report)
    first = bagit.decode("utf-8", errors="replace").splitlines()[:1] if bagit is not None else []
    if first != ["BagIt-Version: 1.0"]:
        report.problems.append(Problem("not-a-bag", "bagit.txt", "missing or not BagIt-Version 1.0"))
    payload = {f for f in files if f.startswith("data/")}
    for alg in PAYLOAD_ALGORITHMS:
        _check_manifest_file(bag, f"manifest-{alg}.txt", alg, payload, report)
    tags = {f for f in files if not f.startswith("data/") and not f.startswith("tagmanifest-")}
    _check_manifest_file(bag, f"tagmanifest-{TAG_ALGORITHM}.txt", TAG_ALGORITHM, tags, report)
    info_bytes = _read(bag, "bag-info.txt", report)
    info = parse_bag_info(info_bytes.decode("utf-8", errors="replace")) if info_bytes is not None else {}
    oxum = f"{sum((root / f).stat().st_size for f in payload)}.{len(payload)}"
    if info.get("Payload-Oxum") != oxum:
        report.problems.append(Problem("oxum-mismatch", "bag-info.txt", "Payload-Oxum does not match the payload",
                                       info.get("Payload-Oxum"), oxum))
    report.payload_files = len(payload)
    return payload


def _check_manifest_json(bag: _Bag, payload: set[str], report: Report) -> dict | None:  # type: ignore[type-arg]
    root = bag.root
    raw = _read(bag, MANIFEST, report)
    if raw is None:
        if MANIFEST not in bag.files:
            report.problems.append(Problem("missing-file", MANIFEST, "MANIFEST.json is missing"))
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        report.problems.append(Problem("bad-manifest", MANIFEST, f"not valid JSON: {exc}"))
        return None
    # The campaign's strict reader: duplicate keys, NaN, numbers beyond a float, lone surrogates and nesting
    # deeper than --max-json-depth are problems, never exceptions.
    doc = parse_document(text, MANIFEST, "manifest", bag.limits)
    if doc.findings:
        for f in doc.findings[:5]:
            if f.code == "schema-violation":
                report.problems.append(Problem("bad-manifest", MANIFEST, f"{f.field}: {f.message}"))
            else:
                report.problems.append(Problem("bad-manifest", MANIFEST, f"not valid JSON: {f.message} ({f.rule})"))
        return None
    manifest = doc.data
    if manifest["signed"] and manifest["signer"] is None:
        report.problems.append(Problem("bad-manifest", MANIFEST, "signed is true but signer is null"))
        return None
    if not manifest["signed"] and manifest["signer"] is not None:
        report.problems.append(Problem("bad-manifest", MANIFEST, "signed is false but a signer is named"))
        return None
    report.bundle_id = manifest["bundle_id"]
    listed = {f["path"]: f for f in manifest["files"]}
    for rel in sorted(payload - set(listed)):
        report.problems.append(Problem("unexpected-file", rel, "payload file not listed in MANIFEST.json"))
    for rel, entry in sorted(listed.items()):
        target = root / rel
        if rel not in payload:
            report.problems.append(Problem("missing-file", rel, "listed in MANIFEST.json but absent"))
            continue
        size = target.stat().st_size
        if size != entry["bytes"]:
            report.problems.append(Problem("size-mismatch", rel, "size differs from MANIFEST.json",
                                           str(entry["bytes"]), str(size)))
        found = _digest(target, "sha256", rel, report)
        if found is not None and found != entry["sha256"]:
            report.problems.append(Problem("checksum-mismatch", rel, "sha256 differs from MANIFEST.json",
                                           entry["sha256"], found))
    return manifest


def _check_signatures(bag: _Bag, manifest: dict, trust: x509.Certificate | None, allow_unsigned: bool,  # type: ignore[type-arg]
                      report: Report) -> None:
    if not manifest["signed"]:
        report.signer = None
        if not allow_unsigned:
            report.problems.append(Problem("unsigned", MANIFEST, "the bundle is unsigned (built with --unsigned)"))
        return
    cert_bytes = _read(bag, CERT_NAME, report)
    try:
        if cert_bytes is None:
            raise ValueError("missing")
        cert = x509.load_pem_x509_certificate(cert_bytes)
    except ValueError:
        report.problems.append(Problem("bad-certificate", CERT_NAME, "signer certificate missing or unreadable"))
        return
    fingerprint = cert_fingerprint(cert)
    report.signer = cert.subject.rfc4514_string()
    if fingerprint != manifest["signer"]["certificate_sha256"]:
        report.problems.append(Problem("signer-mismatch", CERT_NAME, "certificate differs from the one MANIFEST.json "
                                       "names", manifest["signer"]["certificate_sha256"], fingerprint))
    signature = _read(bag, MANIFEST_SIG, report)
    manifest_bytes = _read(bag, MANIFEST, report)
    if signature is None or manifest_bytes is None or not verify_bytes(cert, manifest_bytes, signature):
        report.problems.append(Problem("bad-signature", MANIFEST_SIG,
                                       f"the signature of MANIFEST.json does not verify with {CERT_NAME}"))
    pdf = _read(bag, f"data/{PDF_NAME}", report)
    if pdf is not None:
        check = check_pdf_signature(pdf, cert)
        if not check.present:
            report.problems.append(Problem("bad-pdf-signature", f"data/{PDF_NAME}", check.detail))
        else:
            if not check.intact:
                report.problems.append(Problem("bad-pdf-signature", f"data/{PDF_NAME}",
                                               "the PDF signature's digest does not match the signed bytes"))
            if not check.entire_file:
                report.problems.append(Problem("bad-pdf-signature", f"data/{PDF_NAME}",
                                               "the PDF signature does not cover the whole file"))
            if check.signer_fingerprint != fingerprint:
                report.problems.append(Problem("signer-mismatch", f"data/{PDF_NAME}", "the PDF was signed by another "
                                               "certificate", fingerprint, check.signer_fingerprint))
    if trust is not None and cert_fingerprint(trust) != fingerprint:
        try:
            cert.verify_directly_issued_by(trust)
        except (ValueError, TypeError, Exception):
            report.problems.append(Problem("untrusted-signer", CERT_NAME, "the signer is not the trusted certificate "
                                           "nor issued by it", cert_fingerprint(trust), fingerprint))


def _verify_folder(root: Path, display: str, trust: x509.Certificate | None, allow_unsigned: bool,
                   limits: Limits) -> Report:
    report = Report(bundle=display)
    files, odd = _files(root)
    for rel in odd:
        what = "symbolic link" if (root / rel).is_symlink() else "pipe, socket or device"
        report.problems.append(Problem("not-a-plain-file", rel, f"{what} inside the bundle"))
    bag = _Bag(root, files, limits)
    payload = _check_bag(bag, report)
    manifest = _check_manifest_json(bag, payload, report)
    if manifest is not None:
        _check_signatures(bag, manifest, trust, allow_unsigned, report)
    return report


def load_trust(path: Path) -> x509.Certificate:
    """The certificate given with --trust."""
    try:
        return x509.load_pem_x509_certificate(path.read_bytes())
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    except ValueError:
        raise UsageError(f"{path} is not a PEM certificate") from None


def verify_bundle(path: Path, trust: x509.Certificate | None = None, allow_unsigned: bool = False,
                  limits: Limits | None = None) -> Report:
    """Verify a bundle folder or zip; every problem is named, none raised (limits: the active ones by default)."""
    lim = resolve(limits)
    if not path.exists():
        raise UsageError(f"{path} does not exist; give a bundle folder or a .zip made by `gpu-audit build`")
    if path.is_dir():
        return _verify_folder(path, str(path), trust, allow_unsigned, lim)
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise UsageError(f"{path} is neither a folder nor a regular file; give a bundle folder or a .zip")
    with tempfile.TemporaryDirectory(prefix="gpu-audit-verify-") as tmp:
        problems = zipsafe.extract(path, Path(tmp), limits=lim)
        if problems:
            return Report(bundle=str(path), problems=[Problem("unsafe-zip", p.entry, p.message) for p in problems])
        return _verify_folder(zipsafe.bag_root(Path(tmp)), str(path), trust, allow_unsigned, lim)
