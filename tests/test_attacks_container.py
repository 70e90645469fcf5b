"""Attacks on the container (issue 30): what a reader opens must be what `verify` checked.

Each test takes the genuine signed bundle of inputs/example, changes its zip or its note as an attacker without
the key would, shows with the reader's own tool (`unzip`, `bsdtar`, `pdftotext`, `pdfsig`) what a person would
see, and asserts that `verify` refuses it with one line naming the problem.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pikepdf
import pytest
from bundle_forgery import fingerprint, reseal, verify
from conftest import BAGIT, needs_tools
from measured import Measured, gpu_audit
from zip_forgery import RawEntry, entries_of, hidden_after_deflate, renamed, unicode_path_extra, write_zip

from generator.bundle.build.publish import zip_folder

NOTE = "ex/data/decision-note.pdf"
FAKE_TEXT = "Committed budget: USD 99,999.00"


@pytest.fixture(scope="module")
def genuine_zip(example_bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The genuine bundle zipped as `build --zip` zips it, under the top folder `ex`."""
    path = tmp_path_factory.mktemp("zip") / "ex.zip"
    zip_folder(example_bundle, path, "ex", datetime(2026, 10, 1, tzinfo=UTC))
    return path.read_bytes()


@pytest.fixture(scope="module")
def anchor(example_keys: tuple[Path, Path]) -> list[str]:
    return ["--trust-fingerprint", f"SHA256:{fingerprint(example_keys[1])}"]


def fake_note() -> bytes:
    """A one-page PDF reading "Committed budget: USD 99,999.00", unsigned: what the attacker wants shown."""
    pdf = pikepdf.new()
    font = pdf.make_indirect(pikepdf.Dictionary(Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1,
                                                BaseFont=pikepdf.Name.Helvetica))
    page = pdf.add_blank_page(page_size=(595, 842))
    page.Resources = pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font))
    page.Contents = pdf.make_stream(f"BT /F1 18 Tf 72 700 Td ({FAKE_TEXT}) Tj ET".encode())
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _bounded(*argv: str, cwd: Path) -> Measured:
    """`gpu-audit ARGV`, which must stay within 5 s of processor time and 500 MiB (issue 30's bound)."""
    run = gpu_audit(*argv, cwd=cwd)
    assert run.cpu_seconds < 5 and run.peak_bytes < 500 << 20, run
    return run


def _copy(bundle: Path, tmp_path: Path) -> Path:
    root = tmp_path / "ex"
    shutil.copytree(bundle, root)
    return root


def _refused(path: Path, anchor: list[str], *words: str) -> str:
    code, out = verify(str(path), *anchor)
    assert code == 1, out
    assert "OK:" not in out and "FAILED:" in out, out
    for word in words:
        assert word in out, out
    return out


@needs_tools("pdftotext")
@pytest.mark.parametrize("lead", [b"", b"\n"], ids=["pdf-first", "byte-before-pdf"])
def test_a_file_both_a_pdf_and_a_zip_is_refused(genuine_zip: bytes, anchor: list[str], tmp_path: Path,
                                                lead: bytes) -> None:
    fake = fake_note()
    # The zip comment ends the file with the fake's own startxref, so PDF viewers read the fake page.
    tail = fake[fake.rindex(b"startxref"):]
    body = lead + fake + genuine_zip[:-2]
    polyglot = _write(tmp_path, "note.pdf", body + len(tail).to_bytes(2, "little") + tail)
    shown = subprocess.run(["pdftotext", str(polyglot), "-"], capture_output=True, text=True).stdout
    assert FAKE_TEXT in shown  # what a reader sees
    assert zipfile.ZipFile(polyglot).namelist()  # and what Python's zipfile sees
    out = _refused(polyglot, anchor)
    assert "not a plain" in out or "named .pdf but is no PDF" in out, out


def _unzip_note(tool: list[str], zip_path: Path, tmp_path: Path) -> bytes:
    out = tmp_path / f"x-{tool[0]}"
    out.mkdir()
    subprocess.run([*tool, str(zip_path)] if tool[0] == "unzip" else [*tool, str(zip_path)], cwd=out,
                   capture_output=True, check=False)
    return (out / NOTE).read_bytes()


@needs_tools("unzip", "bsdtar")
@pytest.mark.parametrize("alias", ["ex/data/./decision-note.pdf", "ex//data/decision-note.pdf",
                                   "ex/DATA/decision-note.pdf"])
def test_two_entries_that_land_on_one_path_are_refused(genuine_zip: bytes, anchor: list[str], tmp_path: Path,
                                                       alias: str) -> None:
    forged = fake_note()
    entries = entries_of(genuine_zip)
    entries = [RawEntry(NOTE.encode(), forged)] + renamed(entries, NOTE, name=alias.encode())
    path = _write(tmp_path, "ex.zip", write_zip(entries))
    if alias != "ex/DATA/decision-note.pdf":  # a case-sensitive disk keeps both; a case-insensitive one, one
        assert _unzip_note(["unzip", "-q", "-n"], path, tmp_path) == forged
        assert _unzip_note(["bsdtar", "-k", "-xf"], path, tmp_path) == forged
    _refused(path, anchor, "one path" if "DATA" in alias else "'.' part")


@needs_tools("unzip")
def test_an_entry_renamed_by_a_unicode_path_field_is_refused(genuine_zip: bytes, anchor: list[str],
                                                             tmp_path: Path) -> None:
    extra = unicode_path_extra("ex/data/elsewhere.pdf", NOTE.encode())
    entries = renamed(entries_of(genuine_zip), NOTE, local_extra=extra, central_extra=extra, flags=0)
    path = _write(tmp_path, "ex.zip", write_zip(entries))
    out = tmp_path / "unzipped"
    out.mkdir()
    subprocess.run(["unzip", "-q", str(path)], cwd=out, check=False)
    assert (out / "ex/data/elsewhere.pdf").exists() and not (out / NOTE).exists()
    _refused(path, anchor, "Unicode Path")


@needs_tools("bsdtar")
def test_an_entry_hidden_from_the_central_directory_is_refused(genuine_zip: bytes, anchor: list[str],
                                                               tmp_path: Path) -> None:
    forged = fake_note()
    entries: list[RawEntry] = []
    for e in entries_of(genuine_zip):
        entries.append(e)
        if e.name == NOTE.encode():
            entries.append(RawEntry(NOTE.encode(), forged, in_central=False))
    path = _write(tmp_path, "ex.zip", write_zip(entries))
    out = tmp_path / "streamed"
    out.mkdir()
    # bsdtar reading a pipe walks the local headers
    subprocess.run(["bsdtar", "-xf", "-"], input=path.read_bytes(), cwd=out, check=False, capture_output=True)
    assert (out / NOTE).read_bytes() == forged
    _refused(path, anchor, "does not start where the one before it ends")


@needs_tools("bsdtar")
def test_entries_hidden_after_a_deflate_stream_are_refused(genuine_zip: bytes, anchor: list[str],
                                                           tmp_path: Path) -> None:
    forged = fake_note()
    path = _write(tmp_path, "ex.zip", hidden_after_deflate(genuine_zip, NOTE, forged))
    out = tmp_path / "streamed"
    out.mkdir()
    subprocess.run(["bsdtar", "-xf", "-"], input=path.read_bytes(), cwd=out, check=False, capture_output=True)
    assert (out / NOTE).read_bytes() == forged  # what a streaming reader extracts
    assert zipfile.ZipFile(path).read(NOTE) != forged  # and what zipfile reads
    _refused(path, anchor, "deflate stream does not end exactly")


@pytest.mark.parametrize("mode", [0o020644, 0o060644, 0o104755, 0o120777], ids=lambda mode: f"{mode:o}")
def test_an_entry_whose_mode_is_not_a_plain_file_is_refused(genuine_zip: bytes, anchor: list[str], tmp_path: Path,
                                                            mode: int) -> None:
    """A device node, a setuid program or a link to `bsdtar`, which extracts what the mode says."""
    entries = renamed(entries_of(genuine_zip), NOTE, mode=mode)
    path = _write(tmp_path, "ex.zip", write_zip(entries))
    _refused(path, anchor, "is not a plain file" if mode != 0o120777 else "symbolic link")


@pytest.mark.parametrize("change", ["prefix", "comment", "between", "local-size"])
def test_bytes_outside_the_entries_or_headers_that_disagree_are_refused(genuine_zip: bytes, anchor: list[str],
                                                                        tmp_path: Path, change: str) -> None:
    entries = entries_of(genuine_zip)
    if change == "local-size":
        entries = renamed(entries, "ex/bagit.txt", local_size_delta=1)
    data = write_zip(entries, prefix=b"junk" * (change == "prefix"), comment=b"hello" * (change == "comment"),
                     between=b"\0" * (change == "between"))
    words = {"prefix": "bytes before", "comment": "comment", "between": "does not start where",
             "local-size": "disagree"}
    _refused(_write(tmp_path, "ex.zip", data), anchor, words[change])


def test_plain_zips_of_other_tools_verify(example_bundle: Path, anchor: list[str], tmp_path: Path) -> None:
    """The same bundle zipped by Info-ZIP `zip`, `bsdtar` and Python's shutil verifies: only the layout counts."""
    shutil.copytree(example_bundle, tmp_path / "ex")
    made = []
    if shutil.which("zip"):
        subprocess.run(["zip", "-qr", "z1.zip", "ex"], cwd=tmp_path, check=True)
        made.append("z1.zip")
    if shutil.which("bsdtar"):
        subprocess.run(["bsdtar", "-a", "-cf", "z2.zip", "ex"], cwd=tmp_path, check=True)
        made.append("z2.zip")
    shutil.make_archive(str(tmp_path / "z3"), "zip", tmp_path, "ex")
    for name in [*made, "z3.zip"]:
        code, out = verify(str(tmp_path / name), *anchor)
        assert code == 0 and "OK:" in out, (name, out)


def test_a_zip_bomb_of_many_small_entries_is_refused_before_writing(tmp_path: Path) -> None:
    zeros = RawEntry(b"x", b"\0" * (1 << 20))
    packed = zlib_of(zeros.data)
    entries = [RawEntry(f"ex/data/{i}.bin".encode(), zeros.data, compressed=packed) for i in range(2048)]
    path = _write(tmp_path, "bomb.zip", write_zip(entries))
    assert path.stat().st_size < 3 << 20  # 2 GiB of entries in a zip of about 2 MB
    run = _bounded("verify", str(path), "--allow-unsigned", cwd=tmp_path)
    assert run.returncode == 1 and "zip bomb" in run.out, run.out


def zlib_of(data: bytes) -> bytes:
    import zlib

    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    return co.compress(data) + co.flush()


def test_a_central_directory_of_millions_of_entries_is_refused_before_it_is_read(tmp_path: Path) -> None:
    import struct

    local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 0, 0, 0, 0, 0, 0, 1, 0) + b"a"  # one empty file
    one = struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 0x0314, 20, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0)
    count = 3_000_000  # central directory entries, every one naming that file
    central = (one + b"a") * count
    end64 = struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, len(central), len(local))
    locator = struct.pack("<4sIQI", b"PK\x06\x07", 0, len(local) + len(central), 1)
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    path = _write(tmp_path, "many.zip", local + central + end64 + locator + end)
    del central
    run = _bounded("verify", str(path), "--allow-unsigned", cwd=tmp_path)
    assert run.returncode == 1 and "entries" in run.out, run.out


def test_a_folder_thousands_of_levels_deep_is_a_finding(example_bundle: Path, anchor: list[str],
                                                        tmp_path: Path) -> None:
    root = _copy(example_bundle, tmp_path)
    fds = [os.open(root / "data", os.O_RDONLY)]
    try:
        for _ in range(1200):  # relative steps: the full path would pass PATH_MAX
            os.mkdir("d", dir_fd=fds[-1])
            fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
        out = _refused(root, anchor, "levels deep", "[too-deep]")
        assert "internal error" not in out
    finally:  # bottom up: pytest's own clean-up of its temporary folders recurses, and would fail here
        fds.pop()
        while fds:
            fd = fds.pop()
            os.rmdir("d", dir_fd=fd)
            os.close(fd)


@pytest.mark.parametrize("big", ["data/inputs/reference.csv", "data/decision.json"])
def test_nothing_is_hashed_or_parsed_after_the_manifest_signature_fails(example_bundle: Path, tmp_path: Path,
                                                                        big: str) -> None:
    """MANIFEST.json changed to list a 64 GiB sparse file, or a 40 MiB decision.json of nested arrays: its
    signature fails, and neither is hashed nor parsed."""
    root = _copy(example_bundle, tmp_path)
    manifest = json.loads((root / "MANIFEST.json").read_text())
    listed = [f for f in manifest["files"] if f["path"] == big]
    assert len(listed) == 1
    if big.endswith(".json"):
        (root / big).write_bytes(b"[" * 60 + b"0," * (20 << 20) + b"0" + b"]" * 60)
    else:
        with (root / big).open("r+b") as fh:
            fh.truncate(64 << 30)  # sparse: costs no disk, but 64 GiB to hash
    listed[0]["bytes"] = (root / big).stat().st_size
    if big.endswith(".json"):  # listed with its own checksum: only the failed signature may stop its parse
        listed[0]["sha256"] = hashlib.sha256((root / big).read_bytes()).hexdigest()
    (root / "MANIFEST.json").write_text(json.dumps(manifest))
    run = _bounded("verify", str(root), "--allow-unsigned", cwd=tmp_path)
    assert run.returncode == 1 and "[bad-signature]" in run.out, run.out


def _with_contents(note: bytes, change: str, other_cert: Path) -> bytes:
    """The note with its unsigned /Contents changed as an attacker can without the key: one non-zero byte in
    the padding, another certificate in the CMS, or an unsigned attribute (the same length, so every byte
    range still matches)."""
    import datetime as dt

    from asn1crypto import cms
    from asn1crypto import x509 as asn1_x509
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    start = note.index(b"/Contents <") + len(b"/Contents <")
    end = note.index(b">", start)
    if change == "padding":
        assert note[start:end].endswith(b"0000")
        return note[:end - 4] + b"4141" + note[end:]
    info = cms.ContentInfo.load(bytes.fromhex(note[start:end].decode()))
    signed = info["content"]
    if change == "certificate":
        der = x509.load_pem_x509_certificate(other_cert.read_bytes()).public_bytes(serialization.Encoding.DER)
        extra = cms.CertificateChoices({"certificate": asn1_x509.Certificate.load(der)})
        signed["certificates"] = cms.CertificateSet([*signed["certificates"], extra])
    else:
        when = cms.Time({"utc_time": dt.datetime(2026, 1, 1, tzinfo=dt.UTC)})
        signed["signer_infos"][0]["unsigned_attrs"] = cms.CMSAttributes([
            cms.CMSAttribute({"type": "signing_time", "values": [when]})])
    hexed = cms.ContentInfo({"content_type": "signed_data", "content": signed}).dump().hex().encode()
    assert len(hexed) <= end - start
    return note[:start] + hexed + b"0" * (end - start - len(hexed)) + note[end:]


@needs_tools("pdfsig")
@pytest.mark.parametrize("change", ["padding", "certificate", "unsigned-attribute"])
def test_bytes_added_inside_the_signature_contents_are_refused(example_bundle: Path, anchor: list[str],
                                                               tmp_path: Path, change: str) -> None:
    from generator.bundle.sign import signing

    other = signing.keygen(tmp_path / "other", "Someone Else")[1]
    note = (example_bundle / "data" / "decision-note.pdf").read_bytes()
    path = _write(tmp_path, "note.pdf", _with_contents(note, change, other))
    assert b"Signature is Valid" in subprocess.run(["pdfsig", str(path)], capture_output=True).stdout
    _refused(path, anchor, "[unsigned-bytes]")


def test_a_json_bomb_in_a_note_is_not_inflated(tmp_path: Path, anchor: list[str]) -> None:
    """A small PDF whose embedded decision.json inflates to 250 MiB: refused within bounds, never read whole."""
    import zlib

    pdf = pikepdf.new()
    pdf.add_blank_page()
    squeeze = zlib.compressobj(9)
    block = b" " * (1 << 20)
    packed = b"".join(squeeze.compress(block) for _ in range(250)) + squeeze.flush()
    stream = pikepdf.Stream(pdf, b"")
    stream.write(packed, filter=pikepdf.Name.FlateDecode)
    spec = pikepdf.Dictionary(Type=pikepdf.Name.Filespec, F="decision.json",
                              EF=pikepdf.Dictionary(F=stream))
    pdf.Root.Names = pikepdf.Dictionary(EmbeddedFiles=pikepdf.Dictionary(
        Names=pikepdf.Array([pikepdf.String("decision.json"), pdf.make_indirect(spec)])))
    out = io.BytesIO()
    pdf.save(out)
    path = _write(tmp_path, "bomb.pdf", out.getvalue())
    assert path.stat().st_size < 1 << 20
    run = _bounded("verify", str(path), *anchor, cwd=tmp_path)
    assert run.returncode == 1 and "FAILED" in run.out, run.out


def test_a_signer_pem_with_bytes_after_its_certificate_is_refused(example_bundle: Path, anchor: list[str],
                                                                  tmp_path: Path) -> None:
    root = _copy(example_bundle, tmp_path)
    pem = root / "signer.pem"
    pem.write_bytes(pem.read_bytes() + pem.read_bytes())
    _refused(root, anchor, "signer.pem", "exactly one")


def test_a_manifest_listing_a_file_twice_is_refused(example_bundle: Path, tmp_path: Path) -> None:
    root = _copy(example_bundle, tmp_path)
    rel = "data/decision.json"

    def twice(text: str) -> str:  # a wrong digest first, the right one after it
        return f"{'0' * 64}  {rel}\n" + text

    reseal(root, None, twice)
    bagit = subprocess.run([*BAGIT, "--validate", str(root)], capture_output=True, text=True)
    assert bagit.returncode != 0
    code, out = verify(str(root), "--allow-unsigned")
    assert code == 1 and "listed more than once" in out, out


@pytest.mark.parametrize("kind", ["folder", "note"])
def test_a_file_swapped_after_verification_is_not_the_one_reconciled(example_bundle: Path,
                                                                      example_keys: tuple[Path, Path],
                                                                      tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      kind: str) -> None:
    """The attacker swaps decision.json (or the note) right after `verify` read it: `invoice check` reconciles
    the bytes that were verified, never the swapped ones."""
    from invoices import Invoice, cii_xml, example_lines

    from generator.bundle.verify import verify as verify_module
    from generator.invoice.check import check_invoice

    root = _copy(example_bundle, tmp_path)
    xml = tmp_path / "factur-x.xml"
    xml.write_bytes(cii_xml(Invoice(example_lines())))
    genuine = verify_module.verify_bundle

    def verified_then_swapped(path: Path, *args: object, **kwargs: object) -> object:
        report = genuine(path, *args, **kwargs)  # type: ignore[arg-type]
        decision = root / "data" / "decision.json"
        doubled = json.loads(decision.read_text())
        for experiment in doubled["experiments"]:
            experiment["package"]["lots"] *= 2
        decision.write_text(json.dumps(doubled))
        (root / "data" / "decision-note.pdf").write_bytes(fake_note())
        return report

    monkeypatch.setattr(verify_module, "verify_bundle", verified_then_swapped)
    target = root if kind == "folder" else root / "data" / "decision-note.pdf"
    result = check_invoice(xml, target, verify_module.load_trust(path=example_keys[1]))
    assert result.report.ok and [c.lots for c in result.committed] == [1, 1], result.findings
    assert result.ok, result.findings


@pytest.mark.parametrize("which", ["bundle", "invoice"])
def test_invoice_attach_refuses_a_huge_file_before_reading_it(example_keys: tuple[Path, Path], tmp_path: Path,
                                                               which: str) -> None:
    from invoices import Invoice, example_lines, facturx_pdf

    invoice, bundle = tmp_path / "invoice.pdf", tmp_path / "bundle.zip"
    invoice.write_bytes(facturx_pdf(Invoice(example_lines())))
    bundle.write_bytes(b"")
    with (bundle if which == "bundle" else invoice).open("r+b") as fh:
        fh.truncate(3 << 30)  # sparse: 3 GiB that cost no disk
    run = _bounded("invoice", "attach", str(invoice), str(bundle), "-o", str(tmp_path / "out.pdf"), "--trust",
                   str(example_keys[1]), cwd=tmp_path)
    assert run.returncode == 2 and "--max-pdf-bytes" in run.out, run.out
    assert not (tmp_path / "out.pdf").exists()


def test_a_bundle_file_swapped_for_a_pipe_is_refused_not_waited_on(tmp_path: Path) -> None:
    """A file replaced by a FIFO after the folder was listed: opening it neither blocks nor reads elsewhere."""
    from generator.core.system.safefiles import open_regular

    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "target").write_text("x")
    os.symlink(tmp_path / "target", tmp_path / "link")
    for name in ("fifo", "link"):
        with pytest.raises(OSError):
            open_regular(tmp_path / name)
    with open_regular(tmp_path / "target") as fh:
        assert fh.read() == b"x"
