"""`verify`: a bundle (folder or zip) checked as a bag, against MANIFEST.json, and by its signatures."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509

from generator.bagit_format import PAYLOAD_ALGORITHMS, TAG_ALGORITHM, digests, parse_bag_info, parse_manifest
from generator.bundle import MANIFEST, MANIFEST_SIG
from generator.errors import UsageError
from generator.render.note import PDF_NAME
from generator.schemacheck import validate_document
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
    """Plain files under root (relative, '/'), and anything that is not a plain file."""
    files, odd = set(), []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_symlink():
            odd.append(rel)
        elif p.is_file():
            files.add(rel)
    return files, odd


def _check_manifest_file(root: Path, name: str, algorithm: str, wanted: set[str], report: Report) -> None:
    path = root / name
    if not path.is_file():
        report.problems.append(Problem("missing-file", name, "manifest is missing"))
        return
    entries, bad = parse_manifest(path.read_text(encoding="utf-8", errors="replace"))
    for line in bad[:5]:
        report.problems.append(Problem("bad-manifest-line", name, f"unreadable line {line[:60]!r}"))
    for rel in sorted(wanted - set(entries)):
        report.problems.append(Problem("unexpected-file", rel, f"file is not listed in {name}"))
    for rel, digest in sorted(entries.items()):
        target = root / rel
        if not target.is_file() or rel not in wanted:
            report.problems.append(Problem("missing-file", rel, f"listed in {name} but absent"))
            continue
        found = digests(target, (algorithm,))[algorithm]
        if found != digest:
            report.problems.append(Problem("checksum-mismatch", rel, f"{algorithm} checksum mismatch", digest, found))


def _check_bag(root: Path, files: set[str], report: Report) -> set[str]:
    bagit = root / "bagit.txt"
    first = bagit.read_text(encoding="utf-8", errors="replace").splitlines()[:1] if bagit.is_file() else []
    if first != ["BagIt-Version: 1.0"]:
        report.problems.append(Problem("not-a-bag", "bagit.txt", "missing or not BagIt-Version 1.0"))
    payload = {f for f in files if f.startswith("data/")}
    for alg in PAYLOAD_ALGORITHMS:
        _check_manifest_file(root, f"manifest-{alg}.txt", alg, payload, report)
    tags = {f for f in files if not f.startswith("data/") and not f.startswith("tagmanifest-")}
    _check_manifest_file(root, f"tagmanifest-{TAG_ALGORITHM}.txt", TAG_ALGORITHM, tags, report)
    info = parse_bag_info((root / "bag-info.txt").read_text(encoding="utf-8", errors="replace")) \
        if (root / "bag-info.txt").is_file() else {}
    oxum = f"{sum((root / f).stat().st_size for f in payload)}.{len(payload)}"
    if info.get("Payload-Oxum") != oxum:
        report.problems.append(Problem("oxum-mismatch", "bag-info.txt", "Payload-Oxum does not match the payload",
                                       info.get("Payload-Oxum"), oxum))
    report.payload_files = len(payload)
    return payload


def _check_manifest_json(root: Path, payload: set[str], report: Report) -> dict | None:  # type: ignore[type-arg]
    path = root / MANIFEST
    if not path.is_file():
        report.problems.append(Problem("missing-file", MANIFEST, "MANIFEST.json is missing"))
        return None
    try:
        manifest = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        report.problems.append(Problem("bad-manifest", MANIFEST, f"not valid JSON: {exc}"))
        return None
    schema_problems = validate_document("manifest", manifest, file=MANIFEST)
    if schema_problems:
        for f in schema_problems[:5]:
            report.problems.append(Problem("bad-manifest", MANIFEST, f"{f.field}: {f.message}"))
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
        found = digests(target, ("sha256",))["sha256"]
        if found != entry["sha256"]:
            report.problems.append(Problem("checksum-mismatch", rel, "sha256 differs from MANIFEST.json",
                                           entry["sha256"], found))
    return manifest


def _check_signatures(root: Path, manifest: dict, trust: x509.Certificate | None, allow_unsigned: bool,  # type: ignore[type-arg]
                      report: Report) -> None:
    if not manifest["signed"]:
        report.signer = None
        if not allow_unsigned:
            report.problems.append(Problem("unsigned", MANIFEST, "the bundle is unsigned (built with --unsigned)"))
        return
    cert_path = root / CERT_NAME
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    except (OSError, ValueError):
        report.problems.append(Problem("bad-certificate", CERT_NAME, "signer certificate missing or unreadable"))
        return
    fingerprint = cert_fingerprint(cert)
    report.signer = cert.subject.rfc4514_string()
    if fingerprint != manifest["signer"]["certificate_sha256"]:
        report.problems.append(Problem("signer-mismatch", CERT_NAME, "certificate differs from the one MANIFEST.json "
                                       "names", manifest["signer"]["certificate_sha256"], fingerprint))
    sig_path = root / MANIFEST_SIG
    if not sig_path.is_file() or not verify_bytes(cert, (root / MANIFEST).read_bytes(), sig_path.read_bytes()):
        report.problems.append(Problem("bad-signature", MANIFEST_SIG,
                                       f"the signature of MANIFEST.json does not verify with {CERT_NAME}"))
    pdf_path = root / "data" / PDF_NAME
    if pdf_path.is_file():
        check = check_pdf_signature(pdf_path.read_bytes(), cert)
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


def _verify_folder(root: Path, display: str, trust: x509.Certificate | None, allow_unsigned: bool) -> Report:
    report = Report(bundle=display)
    files, odd = _files(root)
    for rel in odd:
        report.problems.append(Problem("not-a-plain-file", rel, "symbolic link inside the bundle"))
    payload = _check_bag(root, files, report)
    manifest = _check_manifest_json(root, payload, report)
    if manifest is not None:
        _check_signatures(root, manifest, trust, allow_unsigned, report)
    return report


def load_trust(path: Path) -> x509.Certificate:
    """The certificate given with --trust."""
    try:
        return x509.load_pem_x509_certificate(path.read_bytes())
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    except ValueError:
        raise UsageError(f"{path} is not a PEM certificate") from None


def verify_bundle(path: Path, trust: x509.Certificate | None = None, allow_unsigned: bool = False) -> Report:
    """Verify a bundle folder or zip; every problem is named, none raised."""
    if not path.exists():
        raise UsageError(f"{path} does not exist; give a bundle folder or a .zip made by `gpu-audit build`")
    if path.is_dir():
        return _verify_folder(path, str(path), trust, allow_unsigned)
    with tempfile.TemporaryDirectory(prefix="gpu-audit-verify-") as tmp:
        problems = zipsafe.extract(path, Path(tmp))
        if problems:
            return Report(bundle=str(path), problems=[Problem("unsafe-zip", p.entry, p.message) for p in problems])
        return _verify_folder(zipsafe.bag_root(Path(tmp)), str(path), trust, allow_unsigned)
