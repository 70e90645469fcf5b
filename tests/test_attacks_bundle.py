"""Attacks on the bundle (issue 16, the bag side): each one reproduced on a bundle built from inputs/example.

An attacker here has gpu-audit, `gpu-audit keygen` and the genuine bundle, but not the genuine key. Each test
performs one attack and asserts that `verify` fails naming the problem; the real tools (`bagit.py`,
`openssl`, `sha256sum`, `jq`, `pdfdetach`) are run beside it where they apply.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from bundle_forgery import fingerprint, hostile_pdf, normalized, reseal, rewrite_tagmanifest, verify
from conftest import BAGIT, EXAMPLE, REPO, needs_tools
from measured import processor_seconds

from generator.bundle.sign import signing
from generator.cli.main import main

CopyOf = Callable[[Path], Path]  # the `copy_of` fixture: a private copy of a bundle, to attack

# --- fixtures: a genuine bundle, and one forged by someone else's key under the same name ----------------


@pytest.fixture(scope="module")
def keys(example_keys: tuple[Path, Path]) -> tuple[Path, Path]:
    return example_keys


@pytest.fixture(scope="module")
def attacker(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """`gpu-audit keygen attacker --name "Example Org"`: the same name, another key."""
    return signing.keygen(tmp_path_factory.mktemp("attacker"), "Example Org")


@pytest.fixture(scope="module")
def genuine(example_bundle: Path) -> Path:
    return example_bundle


@pytest.fixture(scope="module")
def forged(attacker: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The campaign with the RTX 4090 lot priced ten times higher, built and signed with the attacker's key."""
    home = tmp_path_factory.mktemp("forged")
    campaign = home / "campaign"
    shutil.copytree(EXAMPLE, campaign)
    tariffs = campaign / "tarifs-forfaits.csv"
    tariffs.write_text(tariffs.read_text().replace(",11000,", ",110000,"), encoding="utf-8")
    out = home / "bundle"
    assert main(["build", str(campaign), "-o", str(out), "--key", str(attacker[0]), "--cert", str(attacker[1]),
                 "--quiet"]) in (0, 1)
    return out


@pytest.fixture
def copy_of(tmp_path: Path) -> CopyOf:
    def _copy(bundle: Path) -> Path:
        target = tmp_path / "bundle"
        shutil.copytree(bundle, target)
        return target
    return _copy


def test_without_a_trust_anchor_neither_the_genuine_nor_the_forgery_says_ok(genuine: Path, forged: Path,
                                                                             keys: tuple[Path, Path],
                                                                             attacker: tuple[Path, Path]) -> None:
    results = {}
    for name, bundle, cert in (("genuine", genuine, keys[1]), ("forged", forged, attacker[1])):
        code, out = verify(str(bundle))
        assert code == 1, out
        assert not any(line.startswith("OK") for line in out.splitlines()), out
        assert "identity: NOT CHECKED" in out and "--trust CERT.pem" in out and "--trust-fingerprint" in out
        assert out.splitlines()[-1].startswith(f"FAILED: {bundle}: verification failed: signer not checked")
        assert f"signer: SHA256:{fingerprint(cert)} (read from the signatures" in out
        results[name] = normalized(out, bundle)
    assert results["genuine"] != results["forged"]
    assert fingerprint(keys[1]) not in results["forged"]


def test_a_forgery_claiming_the_genuine_bundle_id_fails_its_cross_checks(genuine: Path, forged: Path,
                                                                         attacker: tuple[Path, Path],
                                                                         copy_of: CopyOf) -> None:
    bundle = copy_of(forged)
    genuine_id = json.loads((genuine / "MANIFEST.json").read_text())["bundle_id"]
    forged_id = json.loads((bundle / "MANIFEST.json").read_text())["bundle_id"]
    text = (bundle / "MANIFEST.json").read_text().replace(forged_id, genuine_id)
    (bundle / "MANIFEST.json").write_text(text, encoding="utf-8")
    info = (bundle / "bag-info.txt").read_text().replace(forged_id, genuine_id)
    (bundle / "bag-info.txt").write_text(info, encoding="utf-8")
    reseal(bundle, attacker)
    code, out = verify(str(bundle))
    assert code == 1
    assert (f"data/decision.json: the bundle ID recomputed from decision.json differs from MANIFEST.json's (expected "
            f"{genuine_id}, found {forged_id}) [bundle-id-mismatch]") in out
    assert normalized(out, bundle) != normalized(verify(str(genuine))[1], genuine)


@pytest.mark.parametrize("how", ["--trust", "--trust-fingerprint"])
def test_the_forgery_fails_against_the_genuine_signer(forged: Path, keys: tuple[Path, Path],
                                                      attacker: tuple[Path, Path], how: str) -> None:
    anchor = str(keys[1]) if how == "--trust" else f"SHA256:{fingerprint(keys[1])}"
    code, out = verify(str(forged), how, anchor)
    assert code == 1, out
    assert "signer.pem: the signer is not the " in out and "[untrusted-signer]" in out
    assert f"found SHA256:{fingerprint(attacker[1])}" in out
    assert "identity: FAILED" in out and not any(line.startswith("OK") for line in out.splitlines())


def test_the_genuine_bundle_verifies_with_the_fingerprint_in_either_spelling(genuine: Path,
                                                                             keys: tuple[Path, Path]) -> None:
    fp = fingerprint(keys[1])
    openssl = ":".join(fp[i:i + 2] for i in range(0, 64, 2)).upper()  # `openssl x509 -fingerprint`
    for anchor in (f"SHA256:{fp}", f"sha256 Fingerprint={openssl}"):
        code, out = verify(str(genuine), "--trust-fingerprint", anchor)
        assert code == 0, out
        assert out.splitlines()[-1].endswith(f", signed by SHA256:{fp}, trusted")
        assert "identity: trusted: the signer is the trust anchor (--trust-fingerprint SHA256:" in out


def test_trust_with_allow_unsigned_is_refused_on_a_stripped_bundle(genuine: Path, keys: tuple[Path, Path],
                                                                   copy_of: CopyOf) -> None:
    bundle = copy_of(genuine)
    decision = bundle / "data/decision.json"
    decision.write_text(decision.read_text().replace('"answer": "rtx4090-batch/b', '"answer": "b200-batch/b', 1))
    reseal(bundle, None)  # the signature stripped: MANIFEST.json says unsigned
    code, out = verify(str(bundle), "--trust", str(keys[1]), "--allow-unsigned")
    assert code == 2, out
    assert "--allow-unsigned accepts a bundle nobody signed, --trust asks who signed it" in out
    code, out = verify(str(bundle), "--trust", str(keys[1]))
    assert code == 1 and "MANIFEST.json: the bundle is unsigned (built with --unsigned)" in out


# --- 2. everything signed, nothing unlisted accepted ------------------------------------------------------------


def test_an_extra_pdf_with_a_rewritten_tag_manifest_is_refused(genuine: Path, keys: tuple[Path, Path],
                                                               copy_of: CopyOf) -> None:
    bundle = copy_of(genuine)
    shutil.copyfile(bundle / "data/decision-note.pdf", bundle / "decision-note-FINAL.pdf")
    rewrite_tagmanifest(bundle)
    code, out = verify(str(bundle), "--trust", str(keys[1]))
    assert code == 1, out
    assert "decision-note-FINAL.pdf: file is not listed in the signed MANIFEST.json [unexpected-file]" in out
    assert re.search(r"tagmanifest-sha256.txt: (size|sha256) differs from MANIFEST.json", out)


def test_files_and_folders_named_tagmanifest_are_refused(genuine: Path, keys: tuple[Path, Path],
                                                        copy_of: CopyOf) -> None:
    bundle = copy_of(genuine)
    (bundle / "tagmanifest-md5.txt").write_text("0" * 32 + "  bagit.txt\n")
    (bundle / "tagmanifest-x").mkdir()
    shutil.copyfile(bundle / "data/decision-note.pdf", bundle / "tagmanifest-x" / "decision-note-FINAL.pdf")
    (bundle / "tagmanifest-empty").mkdir()
    code, out = verify(str(bundle), "--trust", str(keys[1]))
    assert code == 1, out
    assert "tagmanifest-md5.txt: file is not listed in the signed MANIFEST.json [unexpected-file]" in out
    assert "tagmanifest-x/decision-note-FINAL.pdf: file is not listed in the signed MANIFEST.json" in out
    assert "tagmanifest-empty: folder holds no file listed in the signed MANIFEST.json [unexpected-folder]" in out


@pytest.mark.parametrize("old, new", [
    ("Source-Organization: Example Org", "Source-Organization: Someone Else"),
    ("External-Identifier: GA-", "External-Identifier: GA-0"),
    ("Bagging-Date: 20", "Bagging-Date: 19"),
    ("Bag-Software-Agent: gpu-audit", "Bag-Software-Agent: gpu-audit\nApproved-By: CFO"),
])
def test_rewritten_or_added_bag_info_fields_are_refused(genuine: Path, keys: tuple[Path, Path], copy_of: CopyOf,
                                                        old: str, new: str) -> None:
    bundle = copy_of(genuine)
    info = bundle / "bag-info.txt"
    before = info.read_text().splitlines()
    assert old in info.read_text()
    info.write_text(info.read_text().replace(old, new, 1), encoding="utf-8")
    rewrite_tagmanifest(bundle)
    code, out = verify(str(bundle), "--trust", str(keys[1]))
    assert code == 1, out
    assert re.search(r"bag-info.txt: (size|sha256) differs from MANIFEST.json", out)
    changed = next(line for line in info.read_text().splitlines() if line not in before)
    assert f"bag-info.txt: line {changed!r} is not in the signed MANIFEST.json [unexpected-bag-info]" in out


def test_an_added_bag_info_field_is_refused_even_when_re_signed(forged: Path, attacker: tuple[Path, Path],
                                                                copy_of: CopyOf) -> None:
    bundle = copy_of(forged)
    info = bundle / "bag-info.txt"
    info.write_text(info.read_text() + "Approved-By: CFO\n", encoding="utf-8")
    reseal(bundle, attacker)
    code, out = verify(str(bundle))
    assert code == 1, out
    assert "bag-info.txt: field 'Approved-By' is not one gpu-audit writes [unexpected-bag-info]" in out


def test_bagit_and_openssl_accept_the_genuine_bundle(genuine: Path, tmp_path: Path) -> None:
    ok = subprocess.run([*BAGIT, "--validate", str(genuine)], capture_output=True, text=True)
    assert ok.returncode == 0 and "is valid" in ok.stderr, ok.stderr[-2000:]
    pub = tmp_path / "pub.pem"
    subprocess.run(["openssl", "x509", "-in", str(genuine / "signer.pem"), "-pubkey", "-noout", "-out", str(pub)],
                   check=True)
    sig = subprocess.run(["openssl", "dgst", "-sha256", "-verify", str(pub), "-signature",
                          str(genuine / "MANIFEST.json.sig"), str(genuine / "MANIFEST.json")],
                         capture_output=True, text=True)
    assert sig.returncode == 0 and "Verified OK" in sig.stdout
    manifest = json.loads((genuine / "MANIFEST.json").read_text())
    listed = {f["path"] for f in manifest["files"] + manifest["tag_files"]}
    present = {p.relative_to(genuine).as_posix() for p in genuine.rglob("*") if p.is_file()}
    assert present - listed == {"MANIFEST.json", "MANIFEST.json.sig", "signer.pem"}  # nothing else is unsigned
    assert {"bagit.txt", "bag-info.txt", "manifest-sha256.txt", "tagmanifest-sha256.txt"} <= listed


def _docs_block(after: str, index: int = 0) -> str:
    """The `index`-th console block of docs/security.md after the words `after`."""
    text = (REPO / "docs" / "security.md").read_text(encoding="utf-8")
    section = text[text.index(after):]
    start = -1
    for _ in range(index + 1):
        start = section.index("```console\n", start + 1)
    start += len("```console\n")
    return section[start:section.index("\n```", start)]


def _as_pasted(block: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """A block run exactly as pasted into bash, by a reader whose home is `home`."""
    return subprocess.run(["bash", "-c", block + "\n"], capture_output=True, text=True, cwd=cwd, timeout=120,
                          env={**os.environ, "HOME": str(home)})


def _readers_home(tmp: Path) -> Path:
    """A reader's home after the documented set-up: ~/.venvs/bagit/bin/python is a Python with bagit (this
    interpreter: the set-up's `pip install bagit` needs the network, which tests never use)."""
    home = tmp / "home"
    python = home / ".venvs" / "bagit" / "bin" / "python"
    python.parent.mkdir(parents=True, exist_ok=True)
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    return home


def _docs_check(bundle: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    """The "check without gpu-audit" commands of docs/security.md, run as a finance reader would."""
    block = _docs_block("Anyone can check a bundle without gpu-audit", 1)
    return _as_pasted(block.replace("BUNDLE", str(bundle)), bundle.parent, _readers_home(tmp))


def test_the_documented_set_up_makes_the_venv_the_check_calls(tmp_path: Path) -> None:
    set_up = _docs_block("Anyone can check a bundle without gpu-audit", 0).splitlines()
    assert set_up[0].startswith("sudo apt-get install python3-venv ")
    make_venv, install = set_up[1].split(" && ")  # bagit in a venv: Debian's own Python refuses `pip install`
    assert make_venv == "python3 -m venv ~/.venvs/bagit" and install == "~/.venvs/bagit/bin/pip install bagit"
    assert "\n~/.venvs/bagit/bin/python -m bagit --validate --quiet .\n" in _docs_block(
        "Anyone can check a bundle without gpu-audit", 1)
    done = _as_pasted(make_venv, tmp_path, tmp_path)  # the venv itself needs no network; its pip is there
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".venvs" / "bagit" / "bin" / "pip").exists()


@needs_tools("jq", "sha256sum", "openssl", "pdfdetach", "pdfsig")
def test_the_documented_check_without_gpu_audit_accepts_the_genuine_and_catches_tampering(
        genuine: Path, keys: tuple[Path, Path], copy_of: CopyOf, tmp_path: Path) -> None:
    ok = _docs_check(genuine, tmp_path)
    assert ok.returncode == 0 and "all checks passed" in ok.stdout, ok.stdout + ok.stderr
    fp = fingerprint(keys[1])
    assert ":".join(fp[i:i + 2] for i in range(0, 64, 2)).upper() in ok.stdout  # openssl's spelling
    bundle = copy_of(genuine)
    info = bundle / "bag-info.txt"
    info.write_text(info.read_text() + "Approved-By: CFO\n", encoding="utf-8")
    bad = _docs_check(bundle, tmp_path)
    assert bad.returncode != 0 and "all checks passed" not in bad.stdout, bad.stdout + bad.stderr


@needs_tools("openssl")
def test_the_documented_fingerprint_comparison_takes_either_spelling(genuine: Path, keys: tuple[Path, Path],
                                                                    attacker: tuple[Path, Path]) -> None:
    line = _docs_block("A fingerprint has two spellings")
    assert "\n" not in line  # one line
    fp = fingerprint(keys[1])
    colons = ":".join(fp[i:i + 2] for i in range(0, 64, 2)).upper()
    for given in (fp, f"SHA256:{fp}", colons, f"sha256 Fingerprint={colons}", f"SHA256 Fingerprint={colons}"):
        done = _as_pasted(line.replace("BUNDLE", str(genuine)).replace("GIVEN", given), genuine.parent, genuine)
        assert (done.returncode, done.stdout) == (0, "same signer\n"), (given, done.stdout, done.stderr)
    for given in (fingerprint(attacker[1]), fp[:-1], ""):  # another key under the same name, a digit short
        done = _as_pasted(line.replace("BUNDLE", str(genuine)).replace("GIVEN", given), genuine.parent, genuine)
        assert done.returncode == 1 and done.stdout.startswith("NOT the signer"), (given, done.stdout)


# --- 3. cross-checks ---------------------------------------------------------------------------------------------


def test_a_decision_json_that_differs_from_the_pdfs_is_refused(genuine: Path, keys: tuple[Path, Path],
                                                               copy_of: CopyOf) -> None:
    bundle = copy_of(genuine)
    decision = bundle / "data/decision.json"
    changed = decision.read_text().replace('"answer": "rtx4090-batch/b', '"answer": "b200-batch/b', 1)
    assert changed != decision.read_text()
    decision.write_text(changed, encoding="utf-8")
    reseal(bundle, keys)  # even by the genuine signer, after the note was signed
    code, out = verify(str(bundle), "--trust", str(keys[1]))
    assert code == 1, out
    assert ("data/decision-note.pdf: the decision.json embedded in the PDF differs from data/decision.json "
            "[decision-mismatch]") in out
    assert "[bundle-id-mismatch]" in out


def test_an_input_copy_that_differs_from_the_decisions_fingerprint_is_refused(genuine: Path, keys: tuple[Path, Path],
                                                                               copy_of: CopyOf) -> None:
    bundle = copy_of(genuine)
    grid = bundle / "data/inputs/resultats-bruts.csv"
    grid.write_bytes(grid.read_bytes() + b"\n")  # a blank line more than the copy that was validated
    reseal(bundle, keys)
    code, out = verify(str(bundle), "--trust", str(keys[1]))
    assert code == 1, out
    assert "data/inputs/resultats-bruts.csv: the copy differs from the fingerprint decision.json lists" in out
    assert "[input-mismatch]" in out


# --- 4. the note on its own -----------------------------------------------------------------------------------


def test_the_note_verifies_on_its_own_and_an_incremental_update_is_caught(genuine: Path, keys: tuple[Path, Path],
                                                                          tmp_path: Path) -> None:
    from pyhanko.pdf_utils import generic
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter

    note = genuine / "data/decision-note.pdf"
    code, out = verify(str(note), "--trust", str(keys[1]))
    assert code == 0, out
    bundle_id = json.loads((genuine / "MANIFEST.json").read_text())["bundle_id"]
    assert out.splitlines()[-1] == f"OK: {note} verifies: note {bundle_id}, signed by SHA256:{fingerprint(keys[1])}, " \
        "trusted"
    code, out = verify(str(note))
    assert code == 1 and "verification failed: signer not checked" in out
    writer = IncrementalPdfFileWriter(io.BytesIO(note.read_bytes()))
    writer.root["/PageLabels"] = generic.DictionaryObject({generic.NameObject("/Nums"): generic.ArrayObject()})
    writer.update_root()
    buf = io.BytesIO()
    writer.write(buf)
    changed = tmp_path / "decision-note.pdf"
    changed.write_bytes(buf.getvalue())
    # Under the default --max-pdf-seconds: a signature that no longer covers the file is judged without pyHanko's
    # difference analysis of the update, which took 14 to 20 s of processor time and read "not checked" past 20.
    code, out = verify(str(changed), "--trust", str(keys[1]))
    assert code == 1, out
    assert "[pdf-modified-after-signing]" in out and "not checked" not in out


# --- 5. bounded, safe verification --------------------------------------------------------------------------------


def test_a_large_pdf_whose_checksum_failed_is_never_parsed(genuine: Path, keys: tuple[Path, Path],
                                                           copy_of: CopyOf) -> None:
    bundle = copy_of(genuine)
    (bundle / "data/decision-note.pdf").write_bytes(hostile_pdf(1_000_000))
    # Peak memory from the process's own high-water mark (ru_maxrss would include the parent's, kept across exec).
    probe = ("import re, sys, time\nfrom pathlib import Path\nfrom generator.cli.main import main\n"
             f"start = time.process_time()\ncode = main(['verify', {str(bundle)!r}, '--trust', {str(keys[1])!r}])\n"
             "status = Path('/proc/self/status')\n"
             "peak = re.search(r'VmHWM:\\s+(\\d+)', status.read_text()).group(1) if status.exists() else '0'\n"
             "print('RESULT', code, round(time.process_time() - start, 1), 'pyhanko' in sys.modules, peak)\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=300)
    result = next(line for line in proc.stdout.splitlines() if line.startswith("RESULT")).split()
    assert result[1] == "1", proc.stdout
    assert "data/decision-note.pdf: not parsed, its signature not checked: its size or checksum failed" in proc.stdout
    assert result[3] == "False", "the PDF was handed to pyHanko although its checksum failed"
    assert float(result[2]) < 15 and int(result[4]) < 400_000, result  # processor seconds, KiB of peak memory


def test_a_costly_pdf_that_passes_its_checksums_is_parsed_within_bounds(genuine: Path, attacker: tuple[Path, Path],
                                                                         copy_of: CopyOf) -> None:
    bundle = copy_of(genuine)
    (bundle / "data/decision-note.pdf").write_bytes(hostile_pdf(1_000_000))
    reseal(bundle, attacker)  # every checksum holds: without a trust anchor the note is parsed
    start = processor_seconds()
    code, out = verify(str(bundle))  # its references are counted first (tests/test_attacks_note_bounds.py)
    assert code == 1 and "(--max-pdf-references, default 100000)" in out and "[pdf-too-complex]" in out, out
    assert processor_seconds() - start < 5
    # with the counts' bounds lifted, the parse's processor time is still bounded
    lifted = ("--max-pdf-references", "2000000", "--max-pdf-fields", "2000000", "--max-pdf-seconds", "2")
    code, out = verify(str(bundle), *lifted)
    assert code == 1, out
    assert processor_seconds() - start < 20
    assert ("data/decision-note.pdf: not checked: the processor time parsing the PDF took exceeds the limit of 2 "
            "(--max-pdf-seconds, default 5)") in out


def test_the_pdf_size_limit_names_its_option(genuine: Path, keys: tuple[Path, Path]) -> None:
    size = (genuine / "data/decision-note.pdf").stat().st_size
    for target in (genuine, genuine / "data/decision-note.pdf"):
        code, out = verify(str(target), "--trust", str(keys[1]), "--max-pdf-bytes", "1K")
        assert code == 1, out
        assert (f"decision-note.pdf: its size, {size} bytes, exceeds the limit of 1024 (--max-pdf-bytes, default "
                "67108864); if the input is genuine, raise it with --max-pdf-bytes N [too-large]") in out


def test_a_zip_entry_name_cannot_rewrite_the_terminal(genuine: Path, keys: tuple[Path, Path], tmp_path: Path) -> None:
    z = tmp_path / "bundle.zip"
    fake = "data/x\r\x1b[2K\x1b[1A\x1b[2KOK: bundle.zip verifies (trusted certificate)\x1b[0m"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(genuine.rglob("*")):
            if p.is_file():
                zf.write(p, "b/" + p.relative_to(genuine).as_posix())
        zf.writestr("b/" + fake, b"surprise")
    code, out = verify(str(z), "--trust", str(keys[1]))
    assert code == 1, out
    assert "\x1b" not in out and "\r" not in out
    assert "b/data/x<U+000D><U+001B>[2K<U+001B>[1A" in out
    assert not any(line.startswith("OK") for line in out.splitlines())


def test_a_file_name_in_a_folder_bundle_cannot_rewrite_the_terminal(genuine: Path, keys: tuple[Path, Path],
                                                                   copy_of: CopyOf) -> None:
    bundle = copy_of(genuine)
    (bundle / "data" / "x\r\x1b[2KOK: verifies\u202e").write_bytes(b"surprise")
    code, out = verify(str(bundle), "--trust", str(keys[1]))
    assert code == 1
    assert "\x1b" not in out and "\r" not in out and "\u202e" not in out
    assert "data/x<U+000D><U+001B>[2KOK: verifies<U+202E>: file is not listed in the signed MANIFEST.json" in out


@pytest.mark.parametrize("organization", ["X\nPayload-Oxum: 1.1", "X\rY", "Org\x1b[31m", "Org\u2028Y"])
def test_an_organization_with_a_line_break_is_refused(keys: tuple[Path, Path], tmp_path: Path,
                                                      organization: str) -> None:
    out = tmp_path / "bundle"
    proc = subprocess.run([sys.executable, "-m", "generator", "build", str(EXAMPLE), "-o", str(out), "--key",
                           str(keys[0]), "--cert", str(keys[1]), "--quiet", "--organization", organization],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "--organization" in proc.stderr and "cannot go into bag-info.txt" in proc.stderr
    assert not out.exists()


def test_the_bundle_checks_are_quick(genuine: Path, keys: tuple[Path, Path]) -> None:
    start = processor_seconds()
    code, out = verify(str(genuine), "--trust", str(keys[1]))
    assert code == 0, out
    assert processor_seconds() - start < 30
