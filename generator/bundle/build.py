"""`build`: validate, recompute, render, sign and write the audit bundle (a BagIt bag) atomically."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from generator import __version__
from generator.audit.campaign import PROTOCOL_FILE
from generator.audit.check import CheckResult, check_campaign
from generator.audit.report import findings_payload
from generator.audit.validate import CampaignInputs
from generator.bundle.bagit_format import (
    BAGIT_TXT,
    PAYLOAD_ALGORITHMS,
    bag_info_text,
    digests,
    field_value_problem,
    manifest_text,
)
from generator.bundle.bundleid import bundle_id as make_bundle_id
from generator.bundle.bundlelayout import (
    BAG_INFO_FILE,
    BAGIT_FILE,
    MANIFEST,
    MANIFEST_SIG,
    MANIFEST_VERSION,
    SELF_CHECKSUM,
    TAG_MANIFEST,
    TAG_MANIFEST_LISTS,
)
from generator.bundle.copying import Copier
from generator.bundle.leftovers import lock_path
from generator.bundle.signing import CERT_NAME, Identity, check_signing_setup, sign_bytes, sign_pdf
from generator.core.errors import AuditError, OutputExistsError, UsageError
from generator.core.limits import Limits, applied
from generator.core.worker import JsonWorker
from generator.render.note import HTML_NAME, PDF_NAME, Evidence, render_note

__all__ = ["MANIFEST", "MANIFEST_SIG", "SELF_CHECKSUM", "BuildResult", "InputChangedError", "build_bundle"]
# progress(stage, done, total): stage names the work; done/total count files where that is known
Progress = Callable[[str, int, int], None]


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
    return (f"certified (PAdES, DocMDP: no changes permitted) by {identity.subject}, certificate SHA-256 "
            f"{identity.fingerprint}")


@contextmanager
def _claim(target: Path) -> Iterator[None]:
    """Hold an exclusive lock for the target name, so two builds racing for it cannot both write it."""
    lock = lock_path(target.parent, target.name)
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as exc:
        raise UsageError(f"cannot create the build lock {lock} ({exc.strerror}); choose a bundle path in a "
                         "folder you can write, with a shorter name") from None
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
            lock.unlink(missing_ok=True)
    finally:
        os.close(fd)


def _copy_jobs(inputs: CampaignInputs, data_dir: Path) -> list[tuple[str, str, str]]:
    """(source, copy, name) of every input file of the campaign."""
    jobs = []
    for rel in inputs.input_files:
        source = inputs.folder.resolve(rel)
        if source is not None:
            jobs.append((str(source), str(data_dir / "inputs" / rel), rel))
    return jobs


def _input_sums(result: CheckResult, found: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """The copies' digests by bag path; a file that changed since it was validated stops the build."""
    expected = {i["path"]: i["sha256"] for i in result.decision["inputs"]}
    sums: dict[str, dict[str, str]] = {}
    for rel, found_digests in found.items():
        if found_digests["sha256"] != expected.get(rel):
            raise InputChangedError(f"{rel} changed while the bundle was being built; run the build again")
        sums[f"data/inputs/{rel}"] = found_digests
    return sums


def _evidence(result: CheckResult, decision_bytes: bytes) -> list[Evidence]:
    """The files the PDF carries: decision.json, and the raw results and protocol exactly as validated."""
    evidence = [Evidence("decision.json", decision_bytes, "The recomputed decision this note renders", "Data")]
    expected = {i["path"]: i["sha256"] for i in result.decision["inputs"]}
    for rel, description in ((result.inputs.files["raw_results"], "The raw results grid as submitted"),
                             (PROTOCOL_FILE, "The pre-registered protocol")):
        source = result.inputs.folder.resolve(rel) if rel in expected else None
        if source is None:
            continue
        data = source.read_bytes()
        if hashlib.sha256(data).hexdigest() != expected[rel]:
            raise InputChangedError(f"{rel} changed while the bundle was being built; run the build again")
        evidence.append(Evidence(Path(rel).name, data, description, "Source"))
    return evidence


def _payload(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in (root / "data").rglob("*") if p.is_file())


def _tag_entry(root: Path, name: str) -> dict[str, Any]:
    return {"path": name, "bytes": (root / name).stat().st_size, "sha256": digests(root / name, ("sha256",))["sha256"]}


def _write_tag_files(root: Path, decision: dict[str, Any], bundle_id: str, identity: Identity | None,
                     organization: str, known: dict[str, dict[str, str]]) -> None:
    """The tag files in the signing order of generator.bundle.bundlelayout: no byte is left unsigned but the
    signature and the certificate that verifies it."""
    payload = _payload(root)
    sums = {rel: known[rel] if rel in known else digests(root / rel, PAYLOAD_ALGORITHMS) for rel in payload}
    sizes = {rel: (root / rel).stat().st_size for rel in payload}
    bag_info = [
        ("Source-Organization", organization),
        ("Bagging-Date", decision["generated_at"][:10]),
        ("Payload-Oxum", f"{sum(sizes.values())}.{len(payload)}"),
        ("External-Identifier", bundle_id),
        ("Bag-Software-Agent", f"gpu-audit {__version__}"),
    ]
    (root / BAGIT_FILE).write_text(BAGIT_TXT, encoding="utf-8")
    (root / BAG_INFO_FILE).write_text(bag_info_text(bag_info), encoding="utf-8")
    for alg in PAYLOAD_ALGORITHMS:
        (root / f"manifest-{alg}.txt").write_text(manifest_text({r: s[alg] for r, s in sums.items()}), encoding="utf-8")
    # The tag manifest lists the tag files written so far; MANIFEST.json, written next, lists it in turn.
    (root / TAG_MANIFEST).write_text(
        manifest_text({t: digests(root / t, ("sha256",))["sha256"] for t in TAG_MANIFEST_LISTS}), encoding="utf-8")
    manifest = {
        "schema_version": MANIFEST_VERSION, "bundle_id": bundle_id,
        "tool": {"name": "gpu-audit", "version": __version__},
        "created": decision["generated_at"], "signed": identity is not None,
        "signer": None if identity is None else {"subject": identity.subject,
                                                 "certificate_sha256": identity.fingerprint},
        "self_checksum": SELF_CHECKSUM,
        "bag_info": [list(f) for f in bag_info],
        "tag_files": [_tag_entry(root, t) for t in sorted((*TAG_MANIFEST_LISTS, TAG_MANIFEST))],
        "files": [{"path": r, "bytes": sizes[r], "sha256": sums[r]["sha256"]} for r in payload],
    }
    manifest_bytes = _canonical(manifest)
    (root / MANIFEST).write_bytes(manifest_bytes)
    if identity is not None:
        from cryptography.hazmat.primitives.serialization import Encoding

        (root / MANIFEST_SIG).write_bytes(sign_bytes(identity, manifest_bytes))
        (root / CERT_NAME).write_bytes(identity.cert.public_bytes(Encoding.PEM))


def _checked_organization(organization: str | None, identity: Identity | None) -> str:
    """bag-info's Source-Organization: a line break or control character in it is refused (it would add a field)."""
    org = organization or (_organization(identity) if identity else "unspecified")
    problem = field_value_problem(org)
    if problem is not None:
        source = "--organization" if organization else "the signer certificate's organisation name"
        raise UsageError(f"{source} {org!r} cannot go into bag-info.txt: {problem}; give a one-line name")
    return org


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
                 progress: Progress | None = None, limits: Limits | None = None,
                 tsa_url: str | None = None) -> BuildResult:
    """Validate, recompute, render, sign and write the bundle; nothing appears under `out` unless complete.

    `limits` (file size, JSON depth) apply to every input read; without them the active limits do.
    `tsa_url`: an RFC 3161 authority that timestamps the PDF signature (PAdES B-T).
    """
    if limits is not None:
        with applied(limits):
            return build_bundle(campaign_dir, out, identity, make_zip=make_zip, strict=strict,
                                organization=organization, progress=progress, tsa_url=tsa_url)
    def step(stage: str, done: int = 0, total: int = 0) -> None:
        if progress is not None:
            progress(stage, done, total)

    target = out
    org = _checked_organization(organization, identity)  # before any work
    check_signing_setup(identity, tsa_url)
    if make_zip and target.suffix != ".zip":
        raise UsageError(f"with --zip the output must end in .zip (got {out})")
    if not target.parent.is_dir():
        raise UsageError(f"folder {target.parent} does not exist; create it first")
    if target.exists() or target.is_symlink():
        raise OutputExistsError(f"{target} already exists; choose a new bundle path (nothing is overwritten)")
    with _claim(target), Copier() as copier, JsonWorker("generator.render.charts") as charts:
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
        try:
            data = tmp / "data"
            data.mkdir()
            step("validating and recomputing")
            # WeasyPrint and pyHanko are imported in this thread when the note is rendered and signed: no
            # thread imports beside it, so a Ctrl-C that lands inside an import can leave no other waiting.
            # The inputs are copied and hashed by a worker process of low priority from the moment they are
            # known: it takes the processor time the check leaves, then the rendering's.
            result = check_campaign(campaign_dir, progress=step,
                                    on_loaded=lambda inputs: copier.start(_copy_jobs(inputs, data)))
            decision = result.decision
            bundle_id = make_bundle_id(decision)
            if strict and result.errors:
                copier.close()
                shutil.rmtree(tmp)
                return BuildResult(path=target, pdf=None, bundle_id=bundle_id, check=result, built=False)
            step("copying inputs and rendering")
            decision_bytes = _canonical(decision)
            (data / "decision.json").write_bytes(decision_bytes)
            (data / "findings.json").write_bytes(_canonical(findings_payload(result.findings, len(result.findings))))
            files = render_note(decision, _evidence(result, decision_bytes), signature_status=_signature_status(identity),
                                charts=charts)
            sums = _input_sums(result, copier.result())
            (data / HTML_NAME).write_bytes(files[HTML_NAME])
            step("signing")
            pdf = files[PDF_NAME] if identity is None else sign_pdf(identity, files[PDF_NAME], tsa_url=tsa_url)
            (data / PDF_NAME).write_bytes(pdf)
            step("hashing")
            _write_tag_files(tmp, decision, bundle_id, identity, org, sums)
            if make_zip:
                partial = target.parent / f".{target.name}.partial"
                partial.unlink(missing_ok=True)
                when = datetime.fromisoformat(decision["generated_at"].replace("Z", "+00:00"))
                _zip_folder(tmp, partial, target.stem, when)
                try:
                    os.link(partial, target)  # never replaces a file that appeared meanwhile
                except FileExistsError:
                    raise OutputExistsError(f"{target} appeared during the build; nothing is overwritten") from None
                partial.unlink()
                shutil.rmtree(tmp)
                return BuildResult(path=target, pdf=None, bundle_id=bundle_id, check=result, built=True)
            if target.exists() or target.is_symlink():
                raise OutputExistsError(f"{target} appeared during the build; nothing is overwritten")
            try:
                os.rename(tmp, target)
            except OSError as exc:  # a folder or file that appeared meanwhile: never replaced
                raise OutputExistsError(f"{target} appeared during the build ({exc.strerror}); nothing is "
                                        "overwritten") from None
        except BaseException:
            copier.close()  # the worker may still be writing into tmp
            shutil.rmtree(tmp, ignore_errors=True)
            (target.parent / f".{target.name}.partial").unlink(missing_ok=True)
            raise
    return BuildResult(path=target, pdf=target / "data" / PDF_NAME, bundle_id=bundle_id, check=result, built=True)
