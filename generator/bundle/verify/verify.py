"""`verify`: a bundle (folder or zip), or a decision note on its own, checked against what its signer signed.

The order bounds the work and never trusts a byte before its check: MANIFEST.json and its signature first (the
signed list of every other file, generator.bundle.bundlelayout), then the trust anchor (an untrusted signer stops
the verification: nothing it made is parsed), then every file's size and checksum against that list, and
only then are files parsed: a file whose size or checksum failed, or a PDF over --max-pdf-bytes, never is.
The verdict keeps integrity and identity apart (generator.bundle.verdict).
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from generator.bundle.bagit_format import BAGIT_TXT, digests, parse_bag_info_strict, parse_manifest
from generator.bundle.bundlelayout import (
    BAG_INFO_FILE,
    BAG_INFO_LABELS,
    BAGIT_FILE,
    CERT_NAME,
    DECISION_PATH,
    INPUTS_DIR,
    MANIFEST,
    MANIFEST_SIG,
    MAX_DEPTH,
    PAYLOAD_MANIFESTS_OF,
    PDF_PATH,
    TAG_MANIFEST,
    tag_manifest_lists,
    walk_bundle,
)
from generator.bundle.pdf import notealone
from generator.bundle.pdf.noteparse import parse_note
from generator.bundle.pdf.notetrust import decision_id, trust_problem
from generator.bundle.sign.certchain import in_order
from generator.bundle.sign.signing import cert_fingerprint, verify_bytes
from generator.bundle.verdict import Problem, Report, Trust, load_trust, name_os_artefacts
from generator.bundle.verify.manifestdoc import ManifestDoc, read_manifest
from generator.bundle.verify.sealverify import SEAL_PATHS, check_bundle_seal
from generator.bundle.zip import zipsafe
from generator.core.errors import UsageError
from generator.core.limits import Limits, limit_message, resolve
from generator.core.system.safefiles import open_regular

__all__ = ["Problem", "Report", "Trust", "load_trust", "verify_bundle"]
SIGNATURE_CODES = frozenset({"bad-certificate", "bad-signature", "signer-mismatch"})  # MANIFEST.json's own
PARSED = frozenset({DECISION_PATH, PDF_PATH, BAG_INFO_FILE, *SEAL_PATHS})  # and the manifests (*.txt): after the hash
# MANIFEST.json (a line per file) and decision.json (aggregates) are a few hundred kilobytes; parsing JSON costs
# about fifty times its size in memory, so neither is parsed beyond this.
MAX_JSON_BYTES = 16 * 1024 * 1024
SMALL_TEXT = 64 * 1024  # a bag-info.txt this small is compared line by line even when its checksum failed


@dataclass
class _Bag:
    """The bundle being verified: its root, its plain files and folders, the limits, what passed its checks."""

    root: Path
    files: set[str]
    folders: set[str]
    limits: Limits
    report: Report
    good: set[str] = field(default_factory=set)  # listed files whose size and SHA-256 match MANIFEST.json
    sums: dict[str, dict[str, str]] = field(default_factory=dict)
    contents: dict[str, bytes] = field(default_factory=dict)  # the files parsed later, read once and hashed as read

    def problem(self, *args: Any) -> None:
        self.report.problems.append(Problem(*args))


def _read(bag: _Bag, rel: str, cap: str = "max_file_bytes") -> bytes | None:
    """A file of the bundle read whole; None when absent, too large (past limit `cap`) or unreadable.

    Absence is left to the caller to report; the other cases are reported here.
    """
    if rel in bag.contents:
        return bag.contents[rel]
    if rel not in bag.files:
        return None
    path = bag.root / rel
    limit = getattr(bag.limits, cap)
    try:
        size = path.stat().st_size
        if size > limit:
            bag.problem("too-large", rel, limit_message(cap, bag.limits, f"its size, {size} bytes,"))
            return None
        with open_regular(path) as fh:
            return fh.read(limit + 1)
    except OSError as exc:
        bag.problem("unreadable", rel, f"cannot be read ({exc.strerror})")
        return None


def _signer(bag: _Bag, doc: ManifestDoc, trust: Trust, allow_unsigned: bool) -> x509.Certificate | None:
    """signer.pem's certificate (None when unsigned or unreadable); MANIFEST.json's signature checked with it."""
    report = bag.report
    report.signed = doc.signed
    if not doc.signed:
        for name in (MANIFEST_SIG, CERT_NAME):
            if name in bag.files:
                bag.problem("unexpected-file", name, "a signature file in a bundle MANIFEST.json says is unsigned")
        if not allow_unsigned:
            bag.problem("unsigned", MANIFEST, "the bundle is unsigned (built with --unsigned); nothing shows who "
                        "made it (--allow-unsigned accepts it)")
        return None
    cert_bytes = _read(bag, CERT_NAME)
    try:
        chain = x509.load_pem_x509_certificates(cert_bytes or b"")  # the signer's, then its intermediates
        cert, report.intermediates = chain[0], chain[1:]
    except ValueError:
        bag.problem("bad-certificate", CERT_NAME, "signer certificate missing or unreadable")
        return None
    if cert_bytes != b"".join(c.public_bytes(serialization.Encoding.PEM) for c in chain) or not in_order(chain):
        bag.problem("bad-certificate", CERT_NAME, "signer.pem is not exactly one PEM certificate, then the "
                    "intermediates that issued it, each once, as gpu-audit writes it: other bytes or certificates lie "
                    "before, between or after them")
    fingerprint = cert_fingerprint(cert)
    report.signer, report.signer_fingerprint = cert.subject.rfc4514_string(), fingerprint
    if fingerprint != doc.signer_sha256:
        bag.problem("signer-mismatch", CERT_NAME, "certificate differs from the one MANIFEST.json names",
                    doc.signer_sha256, fingerprint)
    signature = _read(bag, MANIFEST_SIG)
    if signature is None or not verify_bytes(cert, doc.raw, signature):
        bag.problem("bad-signature", MANIFEST_SIG, f"the signature of MANIFEST.json does not verify with {CERT_NAME}")
    return cert


def _check_files(bag: _Bag, doc: ManifestDoc, hashing: bool) -> None:
    """Every file and folder is listed in MANIFEST.json (whatever its name); every listed one is there, with
    its signed size and SHA-256. Sizes come first: a file of the wrong size is never hashed, and with
    `hashing` off (MANIFEST.json's signature failed) nothing is. A file parsed later is read once here and
    hashed as read: what is parsed is what was checked."""
    listed = {**doc.payload, **doc.tags}
    expected = set(listed) | {MANIFEST} | ({MANIFEST_SIG, CERT_NAME} if doc.signed else set())
    for rel in sorted(bag.files - expected):
        bag.problem("unexpected-file", rel, "file is not listed in the signed MANIFEST.json")
    ancestors = {str(Path(rel).parents[i].as_posix()) for rel in listed for i in range(len(Path(rel).parents) - 1)}
    for rel in sorted(bag.folders - ancestors):
        bag.problem("unexpected-folder", rel, "folder holds no file listed in the signed MANIFEST.json")
    for rel, (size, sha256) in sorted(listed.items()):
        if rel not in bag.files:
            bag.problem("missing-file", rel, "listed in MANIFEST.json but absent")
            continue
        try:
            found_size = (bag.root / rel).stat().st_size
            if found_size != size:
                bag.problem("size-mismatch", rel, "size differs from MANIFEST.json (not hashed, not parsed)",
                            str(size), str(found_size))
                continue
            if not hashing:
                continue
            algorithms = tuple(PAYLOAD_MANIFESTS_OF[doc.version]) if rel in doc.payload else ("sha256",)
            sums = _hash_once(bag, rel, size, algorithms)  # every algorithm of the bundle's manifests, one read
        except OSError as exc:
            bag.problem("unreadable", rel, f"cannot be read ({exc.strerror})")
            continue
        if sums is None:
            continue
        bag.sums[rel] = sums
        if sums["sha256"] != sha256:
            bag.problem("checksum-mismatch", rel, "sha256 differs from MANIFEST.json", sha256, sums["sha256"])
        else:
            bag.good.add(rel)


def _hash_once(bag: _Bag, rel: str, size: int, algorithms: tuple[str, ...]) -> dict[str, str] | None:
    """The digests of a listed file; one that is parsed later (a tag file, decision.json, the note) is kept
    in memory as read, bounded by its limit, so that no later read can see other bytes."""
    if rel not in PARSED and not ("/" not in rel and rel.endswith(".txt")):
        return digests(bag.root / rel, algorithms)
    cap = "max_pdf_bytes" if rel == PDF_PATH else "max_file_bytes"
    if size > getattr(bag.limits, cap):
        bag.problem("too-large", rel, limit_message(cap, bag.limits, f"its size, {size} bytes,"))
        return None
    with open_regular(bag.root / rel) as fh:
        data = fh.read(size + 1)
    bag.contents[rel] = data
    return {a: hashlib.new(a, data).hexdigest() for a in algorithms}


def _check_bagit_manifest(bag: _Bag, name: str, algorithm: str, wanted: set[str]) -> None:
    """A BagIt manifest (parsed only once its own checksum passed) agrees with the files it lists."""
    if name not in bag.good:
        return
    raw = _read(bag, name) or b""
    entries, bad, repeated = parse_manifest(raw.decode("utf-8", errors="replace"))
    for line in bad[:5]:
        bag.problem("bad-manifest-line", name, f"unreadable line {line[:60]!r}")
    for rel in repeated[:5]:
        bag.problem("bad-manifest-line", name, f"{rel[:80]!r} is listed more than once (BagIt allows one line per "
                    "file)")
    for rel in sorted(wanted - set(entries)):
        bag.problem("unexpected-file", rel, f"file is not listed in {name}")
    for rel, digest in sorted(entries.items()):
        if rel not in wanted or rel not in bag.files:  # a listed path is never looked up outside the bag
            bag.problem("missing-file", rel, f"listed in {name} but absent")
        elif rel in bag.sums and bag.sums[rel].get(algorithm) != digest:
            bag.problem("checksum-mismatch", rel, f"{algorithm} checksum mismatch", digest, bag.sums[rel][algorithm])


def _check_bag_info(bag: _Bag, doc: ManifestDoc) -> None:
    """bag-info.txt holds exactly the signed fields, those gpu-audit writes, with values that agree."""
    signed_lines = {f"{label}: {value}" for label, value in doc.bag_info}
    for label, _ in doc.bag_info:
        if label not in BAG_INFO_LABELS:
            bag.problem("unexpected-bag-info", BAG_INFO_FILE, f"field {label!r} is not one gpu-audit writes")
    labels = [label for label, _ in doc.bag_info]
    if labels != list(BAG_INFO_LABELS):
        bag.problem("bad-bag-info", BAG_INFO_FILE, "fields missing, repeated or out of order",
                    ", ".join(BAG_INFO_LABELS), ", ".join(labels))
    if BAG_INFO_FILE not in bag.good:
        # Its checksum failed, so it is not parsed: a small one's lines are only compared with the signed ones.
        if BAG_INFO_FILE not in bag.files or (bag.root / BAG_INFO_FILE).stat().st_size > SMALL_TEXT:
            return
        text = (_read(bag, BAG_INFO_FILE) or b"").decode("utf-8", errors="replace")
        unsigned = [ln for ln in text.splitlines() if ln not in signed_lines]
        for line in unsigned[:5]:
            bag.problem("unexpected-bag-info", BAG_INFO_FILE, f"line {line[:80]!r} is not in the signed MANIFEST.json")
        return
    text = (_read(bag, BAG_INFO_FILE) or b"").decode("utf-8", errors="replace")
    fields, bad = parse_bag_info_strict(text)
    for line in bad[:5]:
        bag.problem("bad-bag-info", BAG_INFO_FILE, f"line {line[:80]!r} is not a `Label: value` field")
    if fields != doc.bag_info:
        bag.problem("bad-bag-info", BAG_INFO_FILE, "fields differ from those MANIFEST.json signs")
    info = dict(fields)
    oxum = f"{sum(size for size, _ in doc.payload.values())}.{len(doc.payload)}"
    for label, want in (("Payload-Oxum", oxum), ("External-Identifier", doc.bundle_id),
                        ("Bagging-Date", doc.created[:10])):
        if info.get(label) != want:
            bag.problem("bad-bag-info", BAG_INFO_FILE, f"{label} does not match the bundle", want, info.get(label))


def _check_note(bag: _Bag, cert: x509.Certificate | None, decision_raw: bytes | None) -> None:
    """The note's signature (pyHanko's verdict, by signer.pem's certificate), and its embedded decision.json."""
    if PDF_PATH not in bag.good:
        if PDF_PATH in bag.files:
            bag.problem("not-parsed", PDF_PATH, "not parsed, its signature not checked: its size or checksum failed")
        return
    if PDF_PATH not in bag.contents:
        return
    with tempfile.TemporaryDirectory(prefix="gpu-audit-note-") as tmp:
        copy = notealone.private_copy(bag.contents[PDF_PATH], Path(tmp))
        note = parse_note(copy, PDF_PATH, cert, cert is not None, bag.limits)
    bag.report.problems.extend(note.problems)
    if any(p.code in ("bad-pdf", "pdf-too-complex", "pdf-too-costly") for p in note.problems):
        return
    if cert is not None:
        if note.signature_fingerprint != cert_fingerprint(cert):
            bag.problem("signer-mismatch", PDF_PATH, "the PDF was signed by another certificate",
                        cert_fingerprint(cert), note.signature_fingerprint)
        bag.report.timestamp, bag.report.timestamp_authority = note.timestamp, note.timestamp_authority
    bag.report.note = bag.contents[PDF_PATH]
    if decision_raw is not None and note.decision != decision_raw:
        bag.problem("decision-mismatch", PDF_PATH, "the decision.json embedded in the PDF differs from "
                    f"{DECISION_PATH}" + ("" if note.decision is not None else " (none is embedded)"))
    if note.title_id != bag.report.bundle_id:
        bag.problem("bundle-id-mismatch", PDF_PATH, "the note's title names another bundle ID",
                    bag.report.bundle_id, note.title_id)


def _check_decision(bag: _Bag, doc: ManifestDoc) -> bytes | None:
    """decision.json (once its checksum passed): its recomputed bundle ID, and its input fingerprints."""
    if DECISION_PATH not in bag.good:
        return None
    raw = _read(bag, DECISION_PATH)
    if raw is None:
        return None
    if len(raw) > MAX_JSON_BYTES:
        bag.problem("too-large", DECISION_PATH, f"decision.json is {len(raw)} bytes, over the {MAX_JSON_BYTES} "
                    "a decision can take; it is not parsed")
        return None
    bag.report.decision = raw
    decision, recomputed, problem = decision_id(raw, DECISION_PATH, bag.limits)
    if problem is not None:
        bag.report.problems.append(problem)
        return raw
    if recomputed != doc.bundle_id:
        bag.problem("bundle-id-mismatch", DECISION_PATH, "the bundle ID recomputed from decision.json differs from "
                    "MANIFEST.json's", doc.bundle_id, recomputed)
    inputs = decision.get("inputs")
    if not isinstance(inputs, list) or not all(isinstance(i, dict) and isinstance(i.get("path"), str) for i in inputs):
        bag.problem("bad-decision", DECISION_PATH, "its `inputs` is not a list of {path, bytes, sha256}")
        return raw
    declared = {INPUTS_DIR + i["path"]: i for i in inputs}
    for rel in sorted({p for p in doc.payload if p.startswith(INPUTS_DIR)} - set(declared)):
        bag.problem("input-mismatch", rel, "an input copy decision.json does not list")
    for rel, entry in sorted(declared.items()):
        if rel not in doc.payload:
            bag.problem("input-mismatch", rel, "an input decision.json lists has no copy in the bundle")
            continue
        size, sha256 = doc.payload[rel]
        if entry.get("sha256") != sha256 or entry.get("bytes") != size:
            bag.problem("input-mismatch", rel, "the copy differs from the fingerprint decision.json lists",
                        f"{entry.get('bytes')} bytes, sha256 {entry.get('sha256')}", f"{size} bytes, sha256 {sha256}")
    return raw


def _verify_folder(root: Path, display: str, trust: Trust, allow_unsigned: bool, limits: Limits,
                   trust_tsa: Sequence[x509.Certificate] = ()) -> Report:
    report = Report(bundle=display, trust=trust)
    files, folders, odd, deep = walk_bundle(root)
    bag = _Bag(root, files, folders, limits, report)
    for rel in deep:
        bag.problem("too-deep", rel, f"folder more than {MAX_DEPTH} levels deep (gpu-audit writes five); "
                    "what lies below it is not read")
    for rel in odd:
        what = "symbolic link" if (root / rel).is_symlink() else "pipe, socket or device"
        bag.problem("not-a-plain-file", rel, f"{what} inside the bundle")
    if _read(bag, BAGIT_FILE) != BAGIT_TXT.encode("utf-8"):
        bag.problem("not-a-bag", BAGIT_FILE, "missing or not BagIt-Version 1.0 as gpu-audit writes it")
    size = (root / MANIFEST).stat().st_size if MANIFEST in files else 0
    if size > MAX_JSON_BYTES:  # parsed before its signature is checked: its size bounds what that costs
        bag.problem("too-large", MANIFEST, f"MANIFEST.json is {size} bytes, over the {MAX_JSON_BYTES} a manifest "
                    "can take; it is not parsed")
        doc = None
    else:
        doc = read_manifest(_read(bag, MANIFEST), MANIFEST in files, limits, report)
    if doc is None:
        report.complete = False
        return report
    report.bundle_id, report.payload_files, report.tag_files = doc.bundle_id, len(doc.payload), len(doc.tags)
    cert = _signer(bag, doc, trust, allow_unsigned)
    if any(p.code in SIGNATURE_CODES for p in report.problems):
        _check_files(bag, doc, hashing=False)  # what is missing or of another size; nothing hashed or parsed
        report.complete = False
        return report
    if cert is not None and trust.given:
        problem = trust_problem(cert, trust, CERT_NAME, doc.created, bag.root, report.intermediates)
        if problem is not None:  # nothing an untrusted signer made is parsed
            report.problems.append(problem)
            report.complete = False
            return report
        report.trusted = True
    _check_files(bag, doc, hashing=True)
    for algorithm, name in PAYLOAD_MANIFESTS_OF[doc.version].items():
        _check_bagit_manifest(bag, name, algorithm, {p for p in files if p.startswith("data/")})
    _check_bagit_manifest(bag, TAG_MANIFEST, "sha256", set(tag_manifest_lists(doc.version)) & files)
    _check_bag_info(bag, doc)
    decision_raw = _check_decision(bag, doc)
    _check_note(bag, cert, decision_raw)
    seal = check_bundle_seal(root, doc.payload, bag.contents, decision_raw, trust_tsa, limits.max_json_depth)
    report.problems += seal.problems
    report.registration = seal.lines  # who sealed the registration, when, and whether the inputs are the sealed ones
    return report


def verify_bundle(path: Path, trust: Trust | x509.Certificate | None = None, allow_unsigned: bool = False,
                  limits: Limits | None = None, trust_tsa: Sequence[x509.Certificate] = ()) -> Report:
    """Verify a bundle folder or zip, or a decision note (a PDF); every problem is named, none raised.

    `trust` is the anchor (a certificate is taken as --trust); `allow_unsigned` cannot go with one: a check of
    who signed cannot be waived for the bundles nobody signed. `limits`: the active ones by default.
    `trust_tsa`: the time-stamping authorities the reader trusts, for the registration's seal (--trust-tsa).
    """
    lim = resolve(limits)
    anchor = Trust(cert=trust, source="--trust") if isinstance(trust, x509.Certificate) else (trust or Trust())
    if anchor.given and allow_unsigned:
        raise UsageError("--allow-unsigned accepts a bundle nobody signed, --trust asks who signed it: give one of "
                         "them, not both")
    if not path.exists():
        raise UsageError(f"{path} does not exist; give a bundle folder, a .zip made by `gpu-audit build`, or its "
                         "decision-note.pdf")
    if path.is_dir():
        return name_os_artefacts(_verify_folder(path, str(path), anchor, allow_unsigned, lim, trust_tsa), path)
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise UsageError(f"{path} is neither a folder nor a regular file; give a bundle folder, a .zip or a PDF")
    with path.open("rb") as fh:
        if fh.read(5) == b"%PDF-":  # any other file must be a plain zip, which starts with an entry
            return notealone.verify_note(path, anchor, lim)
    with tempfile.TemporaryDirectory(prefix="gpu-audit-verify-") as tmp:
        problems = zipsafe.extract(path, Path(tmp), limits=lim)
        if problems:
            return Report(bundle=str(path), trust=anchor, complete=False, problems=problems)
        root, outside = zipsafe.bag_root(Path(tmp))
        report = _verify_folder(root, str(path), anchor, allow_unsigned, lim, trust_tsa)
        return name_os_artefacts(report, path, zip_top=root.relative_to(tmp), outside=outside)
