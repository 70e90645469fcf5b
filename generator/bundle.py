"""`build`: validate, recompute, render, sign and write the audit bundle (a BagIt bag) atomically."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterator

from generator import __version__
from generator.bagit_format import (BAGIT_TXT, PAYLOAD_ALGORITHMS, TAG_ALGORITHM, bag_info_text, digests,
                                    manifest_text)
from generator.check import CheckResult, check_campaign, sha256_file
from generator.errors import AuditError, OutputExistsError, UsageError
from generator.render.note import HTML_NAME, PDF_NAME, Evidence, render_note
from generator.render.view import bundle_id as make_bundle_id
from generator.report import findings_payload
from generator.signing import CERT_NAME, Identity, sign_bytes, sign_pdf

MANIFEST = "MANIFEST.json"
MANIFEST_SIG = "MANIFEST.json.sig"
SELF_CHECKSUM = ("This manifest carries no checksum of itself, to avoid a self-referential checksum; "
                 "MANIFEST.json.sig signs it and tagmanifest-sha256.txt covers it.")
Progress = Callable[[str], None]


class InputChangedError(AuditError):
    """An input file changed between its validation and its copy into the bundle."""


@dataclass
class BuildResult:
    """Where the bundle went and what it holds."""

    path: Path
    pdf: Path | None
    bundle_id: str
    check: CheckResult
    built: bool


def _canonical(data: Any) -> bytes:
    return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def _organization(identity: Identity) -> str:
    """The signer's organisation name (O), else its common name (CN), else the whole subject."""
    from cryptography.x509.oid import NameOID

    for oid in (NameOID.ORGANIZATION_NAME, NameOID.COMMON_NAME):
        attrs = identity.cert.subject.get_attributes_for_oid(oid)
        if attrs:
            return str(attrs[0].value)
    return identity.subject


def _signature_status(identity: Identity | None) -> str:
    if identity is None:
        return ("UNSIGNED: built with --unsigned; nothing proves who issued this note or that it is unchanged "
                "beyond the bundle's checksums")
    return f"signed (PAdES B-B) by {identity.subject}, certificate SHA-256 {identity.fingerprint}"


@contextmanager
def _claim(target: Path) -> Iterator[None]:
    """Hold an exclusive lock for the target name, so two builds racing for it cannot both write it."""
    lock_path = target.parent / f".{target.name}.gpu-audit-lock"
    fd = os.open(lock_path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OutputExistsError(f"another build is writing {target}; nothing is overwritten") from None
        if target.exists() or target.is_symlink():
            raise OutputExistsError(f"{target} already exists; choose a new bundle path (nothing is overwritten)")
        try:
            yield
        finally:
            lock_path.unlink(missing_ok=True)
    finally:
        os.close(fd)


def _copy_inputs(result: CheckResult, data_dir: Path) -> None:
    """Byte-for-byte copies of every validated input; a file that changed since validation stops the build."""
    expected = {i["path"]: i["sha256"] for i in result.decision["inputs"]}
    folder = result.inputs.folder
    for rel in result.inputs.input_files:
        source = folder.resolve(rel)
        if source is None:
            continue
        target = data_dir / "inputs" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        if sha256_file(target) != expected.get(rel):
            raise InputChangedError(f"{rel} changed while the bundle was being built; run the build again")


def _payload(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in (root / "data").rglob("*") if p.is_file())


def _write_tag_files(root: Path, decision: dict[str, Any], bundle_id: str, identity: Identity | None,
                     organization: str) -> None:
    payload = _payload(root)
    sums = {rel: digests(root / rel, PAYLOAD_ALGORITHMS) for rel in payload}
    sizes = {rel: (root / rel).stat().st_size for rel in payload}
    (root / "bagit.txt").write_text(BAGIT_TXT, encoding="utf-8")
    (root / "bag-info.txt").write_text(bag_info_text([
        ("Source-Organization", organization),
        ("Bagging-Date", decision["generated_at"][:10]),
        ("Payload-Oxum", f"{sum(sizes.values())}.{len(payload)}"),
        ("External-Identifier", bundle_id),
        ("Bag-Software-Agent", f"gpu-audit {__version__}"),
    ]), encoding="utf-8")
    for alg in PAYLOAD_ALGORITHMS:
        (root / f"manifest-{alg}.txt").write_text(manifest_text({r: s[alg] for r, s in sums.items()}), encoding="utf-8")
    manifest = {
        "schema_version": "1", "bundle_id": bundle_id, "tool": {"name": "gpu-audit", "version": __version__},
        "created": decision["generated_at"], "signed": identity is not None,
        "signer": None if identity is None else {"subject": identity.subject,
                                                 "certificate_sha256": identity.fingerprint},
        "self_checksum": SELF_CHECKSUM,
        "files": [{"path": r, "bytes": sizes[r], "sha256": sums[r]["sha256"]} for r in payload],
    }
    manifest_bytes = _canonical(manifest)
    (root / MANIFEST).write_bytes(manifest_bytes)
    if identity is not None:
        from cryptography.hazmat.primitives.serialization import Encoding

        (root / MANIFEST_SIG).write_bytes(sign_bytes(identity, manifest_bytes))
        (root / CERT_NAME).write_bytes(identity.cert.public_bytes(Encoding.PEM))
    tags = sorted(p.name for p in root.iterdir() if p.is_file() and not p.name.startswith("tagmanifest-"))
    (root / f"tagmanifest-{TAG_ALGORITHM}.txt").write_text(
        manifest_text({t: digests(root / t, (TAG_ALGORITHM,))[TAG_ALGORITHM] for t in tags}), encoding="utf-8")


def _zip_folder(root: Path, zip_path: Path, top: str, when: datetime) -> None:
    """A deterministic zip: one top folder, sorted entries, the decision's time on every entry."""
    stamp = (max(when.year, 1980), when.month, when.day, when.hour, when.minute, when.second)
    with zipfile.ZipFile(zip_path, "x", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(f"{top}/{path.relative_to(root).as_posix()}", date_time=stamp)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, path.read_bytes())


def build_bundle(campaign_dir: Path, out: Path, identity: Identity | None, *, make_zip: bool = False,
                 strict: bool = False, organization: str | None = None,
                 progress: Progress | None = None) -> BuildResult:
    """Validate, recompute, render, sign and write the bundle; nothing appears under `out` unless complete."""
    step = progress or (lambda _stage: None)
    target = out
    if make_zip and target.suffix != ".zip":
        raise UsageError(f"with --zip the output must end in .zip (got {out})")
    if not target.parent.is_dir():
        raise UsageError(f"folder {target.parent} does not exist; create it first")
    if target.exists() or target.is_symlink():
        raise OutputExistsError(f"{target} already exists; choose a new bundle path (nothing is overwritten)")
    with _claim(target):
        step("validating and recomputing")
        result = check_campaign(campaign_dir)
        decision = result.decision
        bundle_id = make_bundle_id(decision)
        if strict and result.errors:
            return BuildResult(path=target, pdf=None, bundle_id=bundle_id, check=result, built=False)
        org = organization or (_organization(identity) if identity else "unspecified")
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
        try:
            data = tmp / "data"
            data.mkdir()
            step("copying inputs")
            _copy_inputs(result, data)
            decision_bytes = _canonical(decision)
            (data / "decision.json").write_bytes(decision_bytes)
            (data / "findings.json").write_bytes(_canonical(findings_payload(result.findings, len(result.findings))))
            step("rendering")
            evidence = [Evidence("decision.json", decision_bytes, "The recomputed decision this note renders", "Data")]
            grid = result.inputs.files["raw_results"]
            if grid in result.inputs.input_files:
                evidence.append(Evidence(Path(grid).name, (data / "inputs" / grid).read_bytes(),
                                         "The raw results grid as submitted", "Source"))
            if "protocol.json" in result.inputs.input_files:
                evidence.append(Evidence("protocol.json", (data / "inputs" / "protocol.json").read_bytes(),
                                         "The pre-registered protocol", "Source"))
            files = render_note(decision, evidence, signature_status=_signature_status(identity))
            (data / HTML_NAME).write_bytes(files[HTML_NAME])
            step("signing")
            pdf = files[PDF_NAME] if identity is None else sign_pdf(identity, files[PDF_NAME])
            (data / PDF_NAME).write_bytes(pdf)
            step("hashing")
            _write_tag_files(tmp, decision, bundle_id, identity, org)
            if make_zip:
                partial = target.parent / f".{target.name}.partial"
                partial.unlink(missing_ok=True)
                when = datetime.fromisoformat(decision["generated_at"].replace("Z", "+00:00"))
                _zip_folder(tmp, partial, target.stem, when)
                os.replace(partial, target)  # the lock guarantees nobody else writes this name
                shutil.rmtree(tmp)
                return BuildResult(path=target, pdf=None, bundle_id=bundle_id, check=result, built=True)
            os.rename(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            (target.parent / f".{target.name}.partial").unlink(missing_ok=True)
            raise
    return BuildResult(path=target, pdf=target / "data" / PDF_NAME, bundle_id=bundle_id, check=result, built=True)
