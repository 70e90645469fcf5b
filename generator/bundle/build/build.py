"""`build`: validate, recompute, render, sign and write the audit bundle (a BagIt bag) atomically."""

from __future__ import annotations

import hashlib
import json
import secrets
import shutil
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator import __version__
from generator.audit.load.campaign import PROTOCOL_FILE
from generator.audit.report import findings_payload
from generator.bundle.bagit_format import (
    BAGIT_TXT,
    PAYLOAD_ALGORITHMS,
    bag_info_text,
    digests,
    field_value_problem,
    manifest_text,
)
from generator.bundle.build.copying import Copier, InputCopies
from generator.bundle.build.publish import claim, partial_zip, publish_folder, publish_zip
from generator.bundle.bundlelayout import (
    BAG_INFO_FILE,
    BAGIT_FILE,
    MANIFEST,
    MANIFEST_SIG,
    MANIFEST_VERSION,
    NOTE_RENDERER,
    SELF_CHECKSUM,
    TAG_MANIFEST,
    TAG_MANIFEST_LISTS,
)
from generator.bundle.sign.signing import CERT_NAME, Identity, check_signing_setup, load_signer, sign_bytes, sign_pdf
from generator.core.bundleid import bundle_id as make_bundle_id
from generator.core.errors import AuditError, OutputExistsError, UsageError
from generator.core.limits import Limits, applied
from generator.core.system.safefiles import sha256_file
from generator.render.page.noteworker import NoteWorker
from generator.render.view.finance import Signature

if TYPE_CHECKING:  # the check and the note are imported once the workers run (_build_in): their imports overlap
    from generator.audit.check import CheckResult
    from generator.audit.validate.validate import CampaignInputs
    from generator.render.page.note import Evidence

__all__ = ["MANIFEST", "MANIFEST_SIG", "SELF_CHECKSUM", "BuildResult", "BuildWorkers", "InputChangedError",
           "build_bundle"]
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


def _signature(identity: Identity | None) -> Signature:
    """What the note says of its signature: certified by the signer, or unsigned (build --unsigned)."""
    if identity is None:
        return Signature("unsigned")
    return Signature("certified", identity.subject, identity.fingerprint, _organization(identity))


def _copy_jobs(inputs: CampaignInputs, data_dir: Path) -> list[tuple[str, str, str]]:
    """(source, copy, name) of every input file of the campaign but the prediction files (the check copies
    those itself and reads the copies)."""
    jobs = []
    read_copied = {run.relpath for run in inputs.run_files if run.readable is not None}
    for rel in inputs.input_files:
        source = inputs.folder.resolve(rel)
        if source is not None and rel not in read_copied:
            jobs.append((str(source), str(data_dir / "inputs" / rel), rel))
    return jobs


def _input_sums(result: CheckResult, found: dict[str, dict[str, str]],
                read_copied: set[str]) -> dict[str, dict[str, str]]:
    """The copies' digests by bag path; a file that changed since it was validated stops the build. The copies
    the check read (`read_copied`) were hashed as they were read: their digests are decision.json's."""
    expected = {i.path: i.sha256 for i in result.document.inputs}
    sums: dict[str, dict[str, str]] = {}
    for rel, found_digests in found.items():
        if found_digests["sha256"] != expected.get(rel):
            raise InputChangedError(f"{rel} changed while the bundle was being built; run the build again")
        sums[f"data/inputs/{rel}"] = found_digests
    for rel in read_copied & expected.keys():  # the payload manifest is SHA-256 alone (bundle format 3)
        sums[f"data/inputs/{rel}"] = {"sha256": expected[rel]}
    if missing := sorted(expected.keys() - found.keys() - read_copied):
        raise InputChangedError(f"{missing[0]} was not copied into the bundle; run the build again")
    return sums


def _evidence(result: CheckResult, decision_bytes: bytes) -> list[Evidence]:
    """The files the PDF carries: decision.json, and the raw results and protocol exactly as validated."""
    from generator.render.page.note import Evidence

    evidence = [Evidence("decision.json", decision_bytes, "The recomputed decision this note renders", "Data")]
    expected = {i.path: i.sha256 for i in result.document.inputs}
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
    return {"path": name, "bytes": (root / name).stat().st_size, "sha256": sha256_file(root / name)}


def note_renderer() -> str:
    """bag-info's Note-Renderer: the WeasyPrint that rendered the note (its PDF is byte-identical only within one
    WeasyPrint version, so a reader who renders decision.json again needs to know which)."""
    from generator.render.page.weasy import weasyprint_version

    return f"WeasyPrint {weasyprint_version()}"


def _write_tag_files(root: Path, decision: dict[str, Any], bundle_id: str, identity: Identity | None,
                     organization: str, known: dict[str, dict[str, str]]) -> None:
    """The tag files in the signing order of generator.bundle.bundlelayout: no byte is left unsigned but the
    signature and the certificate that verifies it."""
    payload = _payload(root)
    sums = {rel: known[rel] if set(PAYLOAD_ALGORITHMS) <= set(known.get(rel, ())) else
            digests(root / rel, PAYLOAD_ALGORITHMS) for rel in payload}
    sizes = {rel: (root / rel).stat().st_size for rel in payload}
    bag_info = [
        ("Source-Organization", organization),
        ("Bagging-Date", decision["generated_at"][:10]),
        ("Payload-Oxum", f"{sum(sizes.values())}.{len(payload)}"),
        ("External-Identifier", bundle_id),
        ("Bag-Software-Agent", f"gpu-audit {__version__}"),
        (NOTE_RENDERER, note_renderer()),
    ]
    (root / BAGIT_FILE).write_text(BAGIT_TXT, encoding="utf-8")
    (root / BAG_INFO_FILE).write_text(bag_info_text(bag_info), encoding="utf-8")
    for alg in PAYLOAD_ALGORITHMS:
        (root / f"manifest-{alg}.txt").write_text(manifest_text({r: s[alg] for r, s in sums.items()}), encoding="utf-8")
    # The tag manifest lists the tag files written so far; MANIFEST.json, written next, lists it in turn.
    (root / TAG_MANIFEST).write_text(
        manifest_text({t: sha256_file(root / t) for t in TAG_MANIFEST_LISTS}), encoding="utf-8")
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
        (root / MANIFEST_SIG).write_bytes(sign_bytes(identity, manifest_bytes))
        (root / CERT_NAME).write_bytes(identity.pem)  # the signer's certificate, then its intermediates


def _checked_organization(organization: str | None, identity: Identity | None) -> str:
    """bag-info's Source-Organization: a line break or control character in it is refused (it would add a field)."""
    org = organization or (_organization(identity) if identity else "unspecified")
    problem = field_value_problem(org)
    if problem is not None:
        source = "--organization" if organization else "the signer certificate's organisation name"
        raise UsageError(f"{source} {org!r} cannot go into bag-info.txt: {problem}; give a one-line name")
    return org


@dataclass(frozen=True)
class _Order:
    """What one build was asked for, once `_preflight` accepted it."""

    campaign_dir: Path
    target: Path
    identity: Identity | None
    organization: str
    make_zip: bool
    strict: bool
    tsa_url: str | None
    language: str | None


def _preflight(campaign_dir: Path, out: Path, identity: Identity | None, organization: str | None, make_zip: bool,
               strict: bool, tsa_url: str | None, language: str | None) -> _Order:
    """What can be refused before any work is refused here: the organisation name, the signing setup, the path."""
    org = _checked_organization(organization, identity)
    check_signing_setup(identity, tsa_url)
    if make_zip and out.suffix != ".zip":
        raise UsageError(f"with --zip the output must end in .zip (got {out})")
    if not out.parent.is_dir():
        raise UsageError(f"folder {out.parent} does not exist; create it first")
    if out.exists() or out.is_symlink():
        raise OutputExistsError(f"{out} already exists; choose a new bundle path (nothing is overwritten)")
    if language is not None:
        from generator.render.view.i18n import checked_language, require_fonts

        require_fonts(checked_language(language))  # a missing font is refused before any work
    return _Order(campaign_dir, out, identity, org, make_zip, strict, tsa_url, language)


def _write_payload(data: Path, result: CheckResult, order: _Order, copier: Copier, copies: InputCopies,
                   notes: NoteWorker, step: Progress) -> dict[str, dict[str, str]]:
    """decision.json, findings.json and the note (the PDF certified when there is a key) written into data/;
    returns the input copies' digests, once the copies are done and agree with what was validated."""
    from generator.render.page.note import HTML_NAME, PDF_NAME, render_note

    decision_bytes = _canonical(result.decision)
    evidence, signature = _evidence(result, decision_bytes), _signature(order.identity)
    notes.ask(result.decision, evidence, signature, order.language)  # it renders while this process goes on
    (data / "decision.json").write_bytes(decision_bytes)
    (data / "findings.json").write_bytes(_canonical(findings_payload(result.findings, len(result.findings))))
    if order.identity is not None:
        _load_signer()
    files = notes.files() or render_note(result.decision, evidence, signature=signature, language=order.language)
    sums = _input_sums(result, copier.result(), copies.names)
    (data / HTML_NAME).write_bytes(files[HTML_NAME])
    step("signing", 0, 0)
    pdf = files[PDF_NAME]
    if order.identity is not None:
        pdf = sign_pdf(order.identity, pdf, tsa_url=order.tsa_url)
    (data / PDF_NAME).write_bytes(pdf)
    return sums


def _build_in(tmp: Path, order: _Order, copier: Copier, notes: NoteWorker, step: Progress) -> BuildResult:
    """The stages, in the temporary folder beside the claimed target: check (the inputs copied meanwhile), write
    the payload, write the tag files, publish."""
    from generator.audit.check import check_campaign
    from generator.render.page.note import PDF_NAME

    data = tmp / "data"
    data.mkdir()
    step("validating and recomputing", 0, 0)
    # The note's worker (generator.render.page.noteworker) loads WeasyPrint and matplotlib while the check runs:
    # the note needs the decision, its libraries do not. The prediction files are copied by the check's
    # workers, which then read and hash the copies; the other inputs are copied and hashed by a worker
    # process of low priority from the moment they are known. Both workers take the processor time the
    # check leaves.
    copies = InputCopies(data / "inputs")
    result = check_campaign(order.campaign_dir, progress=step,
                            on_loaded=lambda inputs: copier.start(_copy_jobs(inputs, data)), read_from=copies)
    bundle_id = make_bundle_id(result.decision)
    if order.strict and result.errors:
        copier.close()
        shutil.rmtree(tmp)
        return BuildResult(path=order.target, pdf=None, bundle_id=bundle_id, check=result, built=False)
    step("copying inputs and rendering", 0, 0)
    sums = _write_payload(data, result, order, copier, copies, notes, step)
    step("hashing", 0, 0)
    _write_tag_files(tmp, result.decision, bundle_id, order.identity, order.organization, sums)
    if order.make_zip:
        publish_zip(tmp, order.target, result.document.generated_at)
        return BuildResult(path=order.target, pdf=None, bundle_id=bundle_id, check=result, built=True)
    publish_folder(tmp, order.target)
    return BuildResult(path=order.target, pdf=order.target / "data" / PDF_NAME, bundle_id=bundle_id, check=result,
                       built=True)


class BuildWorkers:
    """A build's helper processes, the note's renderer and the inputs' copier, for one build. The CLI starts
    them before it loads the key and pyarrow, so that their own imports (WeasyPrint, matplotlib) use the
    processor that this set-up leaves idle; stopping them stops every process they started."""

    def __init__(self) -> None:
        self.notes = NoteWorker()
        self.copier = Copier()

    def close(self) -> None:
        self.copier.close()  # first: it may still be writing into the temporary folder
        self.notes.close()

    def __enter__(self) -> BuildWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _temporary_name(out: Path) -> Path:
    """A free `.NAME.tmp-XXXXXXXX` beside the target (the leftovers' pattern: eight lower-case characters)."""
    while True:
        candidate = out.parent / f".{out.name}.tmp-{secrets.token_hex(4)}"
        if not candidate.exists() and not candidate.is_symlink():
            return candidate


def _load_signer() -> None:
    """pyHanko imported while the note's worker renders (on the processor the rendering leaves; docs/performance.md);
    a pyHanko that cannot be imported is left for the signing to report."""
    try:
        load_signer()
    except (ImportError, OSError):
        pass


def _silent(stage: str, done: int, total: int) -> None:
    """The progress of a build nobody watches."""


def build_bundle(campaign_dir: Path, out: Path, identity: Identity | None, *, make_zip: bool = False,
                 strict: bool = False, organization: str | None = None,
                 progress: Progress | None = None, limits: Limits | None = None,
                 tsa_url: str | None = None, language: str | None = None,
                 workers: BuildWorkers | None = None) -> BuildResult:
    """Validate, recompute, render, sign and write the bundle; nothing appears under `out` unless complete.

    `limits` (file size, JSON depth) apply to every input read; without them the active limits do.
    `tsa_url`: an RFC 3161 authority that timestamps the PDF signature (PAdES B-T).
    `language`: the note's language (en, de, fr, zh), else the protocol's.
    `workers`: the helper processes, started earlier by the caller (and stopped by it); else started here.
    """
    if limits is not None:
        with applied(limits):
            return build_bundle(campaign_dir, out, identity, make_zip=make_zip, strict=strict,
                                organization=organization, progress=progress, tsa_url=tsa_url, language=language,
                                workers=workers)
    order = _preflight(campaign_dir, out, identity, organization, make_zip, strict, tsa_url,  # before any work
                       language)
    with claim(out), nullcontext(workers) if workers is not None else BuildWorkers() as started:
        copier, notes = started.copier, started.notes
        # The name is chosen before the folder exists, so that a Ctrl-C landing while it is created (between
        # mkdtemp's mkdir and its return) still finds it to remove; the lock held on `out` makes the name ours.
        tmp = _temporary_name(out)
        try:
            tmp.mkdir(mode=0o700)
            return _build_in(tmp, order, copier, notes, progress or _silent)
        except BaseException:
            copier.close()  # the worker may still be writing into tmp
            shutil.rmtree(tmp, ignore_errors=True)
            partial_zip(out).unlink(missing_ok=True)
            raise
