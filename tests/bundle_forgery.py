"""The attacker's tools for tests/test_attacks_bundle.py and test_attacks_pdf.py: re-sealing a changed bundle
(every manifest and MANIFEST.json made again and signed with one's own key), rewriting its tag manifest, and
PDFs that cost pyHanko dearly (a genuine note with an incremental update listing one field a million times, or
adding a million objects, in plain objects or hidden in an object stream)."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import pikepdf
from conftest import REPO

from generator.bundle.bagit_format import digests, manifest_text
from generator.bundle.sign import signing
from generator.core.system.safefiles import sha256_file


def fingerprint(cert: Path) -> str:
    return signing.cert_fingerprint(signing.load_pem_identity(cert.with_name("signer-key.pem"), cert).cert)


def verify(*argv: str) -> tuple[int, str]:
    """`gpu-audit verify ...` in a fresh process: its exit status and everything it printed."""
    proc = subprocess.run([sys.executable, "-m", "generator", "verify", *argv], capture_output=True, text=True,
                          cwd=REPO, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def reseal(root: Path, key_cert: tuple[Path, Path] | None, edit: Callable[[str], str] = str) -> None:
    """What an attacker with gpu-audit's source does after changing files: every manifest, bag-info's
    Payload-Oxum, MANIFEST.json and its signature made again, with their own key (None: unsigned).
    `edit` changes each payload manifest's text before it is written (and sealed).

    It follows the bundle's own format, so that the attacks also run against the code before issue 16.
    """
    payload = sorted(p.relative_to(root).as_posix() for p in (root / "data").rglob("*") if p.is_file())
    algorithms = tuple(a for a in ("sha256", "sha512") if (root / f"manifest-{a}.txt").exists())  # the bundle's own
    sums = {rel: digests(root / rel, algorithms) for rel in payload}
    for alg in algorithms:
        text = edit(manifest_text({r: s[alg] for r, s in sums.items()}))
        (root / f"manifest-{alg}.txt").write_text(text, encoding="utf-8")
    oxum = f"{sum((root / r).stat().st_size for r in payload)}.{len(payload)}"
    info = re.sub(r"Payload-Oxum: .*", f"Payload-Oxum: {oxum}", (root / "bag-info.txt").read_text())
    (root / "bag-info.txt").write_text(info, encoding="utf-8")
    manifest = json.loads((root / "MANIFEST.json").read_text())
    manifest["files"] = [{"path": r, "bytes": (root / r).stat().st_size, "sha256": sums[r]["sha256"]} for r in payload]
    identity = signing.load_pem_identity(*key_cert) if key_cert else None
    manifest["signed"] = identity is not None
    manifest["signer"] = {"subject": identity.subject, "certificate_sha256": identity.fingerprint} if identity else None

    def tag_sha(name: str) -> str:
        return sha256_file(root / name)

    if "tag_files" in manifest:  # the signed tag files (this change): tag manifest first, then MANIFEST.json
        listed = ["bag-info.txt", "bagit.txt", *(f"manifest-{a}.txt" for a in algorithms)]
        (root / "tagmanifest-sha256.txt").write_text(manifest_text({t: tag_sha(t) for t in listed}), encoding="utf-8")
        manifest["bag_info"] = [line.split(": ", 1) for line in info.splitlines()]
        manifest["tag_files"] = [{"path": t, "bytes": (root / t).stat().st_size, "sha256": tag_sha(t)}
                                 for t in sorted([*listed, "tagmanifest-sha256.txt"])]
    data = (json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
    (root / "MANIFEST.json").write_bytes(data)
    for name in ("MANIFEST.json.sig", "signer.pem"):
        (root / name).unlink(missing_ok=True)
    if identity is not None and key_cert is not None:
        (root / "MANIFEST.json.sig").write_bytes(signing.sign_bytes(identity, data))
        shutil.copyfile(key_cert[1], root / "signer.pem")
    if "tag_files" not in manifest:  # before: the tag manifest came last and listed every other tag file
        tags = sorted(p.name for p in root.iterdir() if p.is_file() and not p.name.startswith("tagmanifest-"))
        (root / "tagmanifest-sha256.txt").write_text(manifest_text({t: tag_sha(t) for t in tags}), encoding="utf-8")


def rewrite_tagmanifest(root: Path) -> None:
    """What anyone can do without a key: list every top-level file again in the (unsigned) tag manifest."""
    tags = sorted(p.name for p in root.iterdir() if p.is_file() and not p.name.startswith("tagmanifest-"))
    (root / "tagmanifest-sha256.txt").write_text(
        manifest_text({t: sha256_file(root / t) for t in tags}), encoding="utf-8")


def normalized(out: str, bundle: Path) -> str:
    return out.replace(str(bundle), "BUNDLE")



def hostile_pdf(fields: int) -> bytes:
    """A small PDF whose form lists one field a million times: pyHanko takes half a minute over it."""
    objs = [b"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [" + b" ".join([b"3 0 R"] * fields) + b"] >> >>",
            b"<< /Type /Pages /Kids [] /Count 0 >>", b"<< /FT /Sig /T (x) >>"]
    out, offsets = bytearray(b"%PDF-1.7\n"), []
    for i, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 4\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size 4 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def append_revision(pdf: bytes, objects: dict[int, bytes]) -> bytes:
    """`pdf` with an incremental update (a classic cross-reference table whose /Prev is the note's last one)
    that writes each of `objects` (number: body), as any text editor can: no key needed."""
    with pikepdf.open(io.BytesIO(pdf)) as doc:
        size, root, info = max(int(doc.trailer.Size), max(objects) + 1), doc.Root.objgen[0], doc.trailer.Info.objgen[0]
        ids = doc.trailer.ID.unparse()
    prev = int(re.findall(rb"startxref\s+(\d+)", pdf)[-1])
    out, offsets = bytearray(pdf), {}
    for num, body in sorted(objects.items()):
        offsets[num] = len(out)
        out += b"%d 0 obj\n" % num + body + b"\nendobj\n"
    xref, runs = len(out), list[list[int]]()  # one subsection per run of consecutive numbers
    for num in sorted(offsets):
        if runs and runs[-1][-1] == num - 1:
            runs[-1].append(num)
        else:
            runs.append([num])
    out += b"xref\n" + b"".join(b"%d %d\n" % (run[0], len(run)) + b"".join(b"%010d 00000 n \n" % offsets[n]
                                                                             for n in run) for run in runs)
    out += b"trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R /ID %s /Prev %d >>\nstartxref\n%d\n%%%%EOF\n" % (
        size, root, info, ids, prev, xref)
    return bytes(out)


def many_fields(pdf: bytes, count: int) -> bytes:
    """The signed note with an update whose form lists its one field `count` times (issue 46, item 6)."""
    with pikepdf.open(io.BytesIO(pdf)) as doc:
        form, field = doc.Root.AcroForm.objgen[0], b"%d 0 R" % doc.Root.AcroForm.Fields[0].objgen[0]
    return append_revision(pdf, {form: b"<< /Fields [" + b" ".join([field] * count) + b"] /SigFlags 3 >>"})


def many_objects(pdf: bytes, count: int) -> bytes:
    """The signed note with an update adding `count` objects, each `null`, in plain sight."""
    with pikepdf.open(io.BytesIO(pdf)) as doc:
        start = int(doc.trailer.Size)
    return append_revision(pdf, {start + i: b"null" for i in range(count)})


def object_stream(pdf: bytes, bodies: list[bytes], dictionary: bytes = b"/Type /ObjStm",
                  first: bytes = b"/First") -> bytes:
    """The signed note with an update adding one deflated object stream that holds `bodies`, its dictionary
    starting with `dictionary` and its /First key spelt `first` (names may be #-escaped, as a parser reads them
    alike); the table lists the stream, not the objects in it."""
    with pikepdf.open(io.BytesIO(pdf)) as doc:
        start = int(doc.trailer.Size)
    numbers = range(start + 1, start + 1 + len(bodies))
    offsets, at = [], 0
    for body in bodies:
        offsets.append(at)
        at += len(body) + 1
    header = b" ".join(b"%d %d" % (n, o) for n, o in zip(numbers, offsets, strict=True)) + b"\n"
    packed = zlib.compress(header + b"\n".join(bodies) + b"\n", 9)
    stream = (b"<< " + dictionary + b" /N %d " % len(bodies) + first + b" %d /Filter /FlateDecode /Length %d >>\n"
              b"stream\n" % (len(header), len(packed)) + packed + b"\nendstream")
    return append_revision(pdf, {start: stream})
