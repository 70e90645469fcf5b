"""Issue 46: a bundle zip verifies only if every byte is accounted for, and every reader opens what `verify` checked.

Three kinds of zip meet the same property (`verify` accepts it => `unzip`, `bsdtar` from a file and from a pipe,
Python's zipfile and 7-Zip all exit 0 and extract a tree byte-identical to the one `verify` checked): zips the
tools users have make of the genuine example bundle, which must verify; the attacks of issue 46 (tests/zip_attacks.py)
and of issue 30 (tests/zip_forgery.py), which must not; and zips drawn by hypothesis (tests/test_zip_generated.py).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
import zip_attacks
from bundle_forgery import fingerprint, verify
from conftest import needs_tools
from measured import gpu_audit
from test_attacks_container import FAKE_TEXT, fake_note
from zip_forgery import RawEntry, entries_of, hidden_after_deflate, unicode_path_extra, write_zip
from zip_readers import Tree, disagreements, read_all, tree

from generator.bundle.build.publish import zip_folder
from generator.bundle.verdict import Problem
from generator.bundle.zip import zipsafe

NOTE = zip_attacks.NOTE
TOOLS = ("unzip", "bsdtar", "7zz", "zip")


def _explorer(root: Path, out: Path) -> None:
    """As Windows Explorer's 'Send to > Compressed folder' writes: an MS-DOS system, DOS attributes (archive,
    folder), no Unix mode and no extra field."""
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(root.parent.joinpath("ex").rglob("*")):
            info = zipfile.ZipInfo.from_file(path, path.relative_to(root.parent).as_posix())
            info.create_system, info.external_attr = 0, 0x10 if path.is_dir() else 0x20
            zf.writestr(info, b"" if path.is_dir() else path.read_bytes())


def _zipfile(root: Path, out: Path) -> None:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(root.rglob("*")):
            zf.write(path, path.relative_to(root.parent).as_posix())


def _make_archive(root: Path, out: Path) -> None:
    shutil.make_archive(str(out.with_suffix("")), "zip", root.parent, "ex")


def _sh(*argv: str) -> Callable[[Path, Path], None]:
    """A command run in the folder that holds `ex` (or in `ex` itself when its first word is "IN"); OUT is
    replaced by the zip's path."""
    def make(root: Path, out: Path) -> None:
        inside = argv[0] == "IN"
        words = [str(out) if w == "OUT" else w for w in argv[inside:]]
        subprocess.run(words, cwd=root if inside else root.parent, check=True, capture_output=True)
    return make


# What users zip a bundle folder with: each must verify, and every reader must agree with what verify checked.
GENUINE: dict[str, Callable[[Path, Path], None]] = {
    "gpu-audit build --zip": lambda root, out: zip_folder(root, out, "ex", datetime(2026, 10, 1, tzinfo=UTC)),
    "zip -r": _sh("zip", "-qr", "OUT", "ex"),
    "zip -r inside": _sh("IN", "zip", "-qr", "OUT", "."),
    "zip -D": _sh("zip", "-qrD", "OUT", "ex"),
    "zip -0": _sh("zip", "-qr0", "OUT", "ex"),
    "zip -fz": _sh("zip", "-qr", "-fz", "OUT", "ex"),
    "bsdtar": _sh("bsdtar", "-a", "-cf", "OUT", "ex"),
    "bsdtar -C dir .": _sh("bsdtar", "-a", "-cf", "OUT", "-C", "ex", "."),
    "bsdtar ./ex": _sh("bsdtar", "-a", "-cf", "OUT", "./ex"),
    "bsdtar stored": _sh("bsdtar", "-a", "--options", "zip:compression=store", "-cf", "OUT", "ex"),
    "python zipfile": _zipfile,
    "shutil.make_archive": _make_archive,
    "7-Zip": _sh("7zz", "a", "-tzip", "-bso0", "-bsp0", "OUT", "ex"),
    "Windows Explorer-style": _explorer,
}


@pytest.fixture(scope="module")
def made(example_bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The genuine bundle zipped once by each tool in GENUINE that is installed."""
    work = tmp_path_factory.mktemp("tools")
    root = work / "ex"
    shutil.copytree(example_bundle, root)
    out = {}
    for i, (name, make) in enumerate(GENUINE.items()):
        path = work / f"z{i}.zip"
        try:
            make(root, path)
        except FileNotFoundError:  # a tool not installed: its test skips (fails in CI, which installs them all)
            continue
        out[name] = path
    return out


@pytest.fixture(scope="module")
def anchor(example_keys: tuple[Path, Path]) -> list[str]:
    return ["--trust-fingerprint", f"SHA256:{fingerprint(example_keys[1])}"]


def _checked(zip_path: Path) -> Problem | Tree:
    """The tree `verify` extracts and checks, or its first problem."""
    with tempfile.TemporaryDirectory() as tmp:
        problems = zipsafe.extract(zip_path, Path(tmp))
        return problems[0] if problems else tree(Path(tmp))


@needs_tools(*TOOLS)
@pytest.mark.parametrize("tool", list(GENUINE))
def test_a_bundle_zipped_by_a_users_tool_verifies_and_every_reader_agrees(made: dict[str, Path], anchor: list[str],
                                                                          tool: str, tmp_path: Path) -> None:
    if tool not in made:
        pytest.skip(f"{tool}: not installed")
    code, out = verify(str(made[tool]), *anchor)
    assert code == 0 and "OK:" in out, (tool, out)
    checked = _checked(made[tool])
    assert isinstance(checked, dict) and f"{NOTE.split('/', 1)[1]}" in "\n".join(checked), checked
    assert disagreements(checked, read_all(made[tool], tmp_path)) == []


def _ditto(genuine: bytes) -> bytes:
    """As macOS Finder's 'Compress' and `ditto -c -k --sequesterRsrc --keepParent` write: entries streamed with
    data descriptors, and each file's AppleDouble twin under a top folder `__MACOSX/`."""
    entries = [RawEntry(e.name, e.data, descriptor="32", made_by=0x0315) for e in entries_of(genuine)]
    twins = [RawEntry(b"__MACOSX/", b"", method=zipfile.ZIP_STORED, mode=0o40755),
             RawEntry(b"__MACOSX/ex/data/._decision-note.pdf", b"\0\x05\x16\x07" + b"\0" * 78, descriptor="32")]
    return write_zip(entries + twins)


def _powershell(genuine: bytes) -> bytes:
    """As Windows PowerShell 5.1's Compress-Archive writes: '\\' between folders, no folder entries, no mode."""
    return write_zip([RawEntry(e.name.replace(b"/", b"\\"), e.data, made_by=0x0014, mode=0, flags=0)
                      for e in entries_of(genuine)])


@pytest.fixture(scope="module")
def genuine_zip(made: dict[str, Path], example_bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return made["gpu-audit build --zip"].read_bytes()


def test_a_finder_zip_names_each_os_artefact_with_the_command_that_removes_it(genuine_zip: bytes,
                                                                              anchor: list[str],
                                                                              tmp_path: Path) -> None:
    path = tmp_path / "ex.zip"
    path.write_bytes(_ditto(genuine_zip))
    code, out = verify(str(path), *anchor)
    assert code == 1 and "os-artefact" in out and "__MACOSX" in out, out
    command = next(line for line in out.splitlines() if "os-artefact" in line).split("`")[1]
    assert command == f"zip -d {path} '__MACOSX/*'", out
    if shutil.which("zip"):  # the command works: the zip then verifies
        subprocess.run(command, shell=True, check=True, capture_output=True)
        code, out = verify(str(path), *anchor)
        assert code == 0 and "OK:" in out, out


def test_a_powershell_5_zip_is_refused_with_the_tool_to_use_instead(genuine_zip: bytes, anchor: list[str],
                                                                    tmp_path: Path) -> None:
    path = tmp_path / "ex.zip"
    path.write_bytes(_powershell(genuine_zip))
    code, out = verify(str(path), *anchor)
    assert code == 1 and "PowerShell 5.1" in out and "tar -a -cf" in out and "escapes" not in out, out
    assert len([line for line in out.splitlines() if "[unsafe-zip]" in line or "unsafe-zip" in line]) == 1, out


def _readers_disagree_on_the_note(path: Path, tmp_path: Path) -> list[str]:
    """The readers that extract something else than the genuine note's bytes as the note (a forgery, a folder,
    a device, nothing)."""
    genuine = read_all(path, tmp_path / "r")
    reference = genuine["unzip"][1].get(NOTE)
    return [name for name, (_, got) in genuine.items() if got.get(NOTE) != reference]


@needs_tools("bsdtar", "7zz", "unzip")
@pytest.mark.parametrize("attack", ["hidden-zip64-locator", "xl-setuid", "xl-device", "xl-folder", "dos-folder"])
def test_a_zip_whose_readers_disagree_on_the_note_is_refused(genuine_zip: bytes, anchor: list[str], tmp_path: Path,
                                                            attack: str) -> None:
    forged = {"hidden-zip64-locator": lambda: zip_attacks.hidden_zip64_locator(genuine_zip, fake_note()),
              "xl-setuid": lambda: zip_attacks.xl_mode(genuine_zip, 0o104755),
              "xl-device": lambda: zip_attacks.xl_mode(genuine_zip, 0o020644),
              "xl-folder": lambda: zip_attacks.xl_mode(genuine_zip, 0o040755),
              "dos-folder": lambda: zip_attacks.dos_folder(genuine_zip)}[attack]()
    path = tmp_path / "ex.zip"
    path.write_bytes(forged)
    assert "bsdtar" in _readers_disagree_on_the_note(path, tmp_path)  # what a reader with bsdtar opens
    words = {"hidden-zip64-locator": "ZIP64 locator", "dos-folder": "DOS attributes"}.get(attack, "0x6c78")
    code, out = verify(str(path), *anchor)
    assert code == 1 and "OK:" not in out and words in out, out


def test_wide_data_descriptors_are_refused(genuine_zip: bytes, anchor: list[str], tmp_path: Path) -> None:
    path = tmp_path / "ex.zip"
    path.write_bytes(zip_attacks.wide_descriptors(genuine_zip))
    code, out = verify(str(path), *anchor)
    assert code == 1 and "data descriptor" in out and "32-bit width" in out, out


@needs_tools("pdftotext")
def test_a_bundle_zip_named_as_the_note_is_refused_though_a_viewer_renders_a_forgery(genuine_zip: bytes,
                                                                                      anchor: list[str],
                                                                                      tmp_path: Path) -> None:
    path = tmp_path / "decision-note.pdf"
    path.write_bytes(zip_attacks.pdf_in_extra_fields(genuine_zip, fake_note()))
    shown = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True).stdout
    assert FAKE_TEXT in shown  # what poppler (Evince, Okular) shows
    code, out = verify(str(path), *anchor)
    assert code == 1 and "named .pdf" in out and "decision-note.zip" in out, out
    renamed = path.rename(tmp_path / "ex.zip")  # and under a zip's name its bytes are refused too
    code, out = verify(str(renamed), *anchor)
    assert code == 1 and "startxref" in out, out


def test_a_sparse_zip_claiming_a_huge_central_directory_is_refused_without_reading_it(tmp_path: Path) -> None:
    head, end_at, end = zip_attacks.sparse_claim()
    path = tmp_path / "sparse.zip"
    with path.open("wb") as fh:
        fh.write(head)
        fh.seek(end_at)
        fh.write(end)
    run = gpu_audit("verify", str(path), "--allow-unsigned", cwd=tmp_path)
    assert run.returncode == 1 and "central directory of" in run.out, run.out
    assert run.peak_bytes < 300 << 20, run  # not the 2 GiB claimed


def _issue30(genuine: bytes) -> dict[str, bytes]:
    entries = entries_of(genuine)
    note = [e for e in entries if e.name == NOTE.encode()][0]
    return {
        "prefix": write_zip(entries, prefix=b"MZ"),
        "between": write_zip(entries, between=b"\0"),
        "unicode-path": write_zip([RawEntry(e.name, e.data, local_extra=unicode_path_extra("ex/x", e.name),
                                            central_extra=unicode_path_extra("ex/x", e.name))
                                   if e is note else e for e in entries]),
        "hidden-after-deflate": hidden_after_deflate(genuine, NOTE, fake_note()),
        "alias": write_zip([*entries, RawEntry(b"ex/data/./decision-note.pdf", fake_note())]),
    }


@needs_tools("bsdtar", "7zz", "unzip")
def test_verify_accepts_no_forgery_and_the_readers_agree_on_what_it_accepts(genuine_zip: bytes,
                                                                            tmp_path: Path) -> None:
    """The differential property over every forged fixture: each one is refused by verify's zip check; the
    genuine zip it was made from is accepted and read alike by every reader."""
    fake = fake_note()
    forged = {**_issue30(genuine_zip),
              "hidden-zip64-locator": zip_attacks.hidden_zip64_locator(genuine_zip, fake),
              "pdf-in-extra-fields": zip_attacks.pdf_in_extra_fields(genuine_zip, fake),
              "xl": zip_attacks.xl_mode(genuine_zip, 0o104755), "dos-folder": zip_attacks.dos_folder(genuine_zip),
              "wide-descriptors": zip_attacks.wide_descriptors(genuine_zip),
              "ditto": _ditto(genuine_zip), "powershell": _powershell(genuine_zip)}
    for name, data in {"genuine": genuine_zip, **forged}.items():
        path = tmp_path / f"{name}.zip"
        path.write_bytes(data)
        checked = _checked(path)
        if name == "ditto":  # accepted as a zip; verify then names its __MACOSX folder (test above)
            assert isinstance(checked, dict) and "__MACOSX" in checked, name
        elif name != "genuine":
            assert isinstance(checked, Problem), name
            continue
        assert isinstance(checked, dict)
        assert disagreements(checked, read_all(path, tmp_path / name)) == [], name


def test_invoice_attach_refuses_a_zip_a_reader_would_open_otherwise(genuine_zip: bytes, example_keys: tuple[Path, Path],
                                                                    tmp_path: Path) -> None:
    """`invoice attach` embeds only the bytes `verify` accepted: the hidden-locator zip is not attached."""
    from invoices import Invoice, example_lines, facturx_pdf

    from generator.cli.main import main

    invoice, bundle, out = tmp_path / "invoice.pdf", tmp_path / "ex.zip", tmp_path / "out.pdf"
    invoice.write_bytes(facturx_pdf(Invoice(example_lines())))
    bundle.write_bytes(zip_attacks.hidden_zip64_locator(genuine_zip, fake_note()))
    assert main(["invoice", "attach", str(invoice), str(bundle), "-o", str(out), "--trust", str(example_keys[1])]) != 0
    assert not out.exists()
