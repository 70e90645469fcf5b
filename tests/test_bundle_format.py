"""The bundle's formats as `verify` reads them (issue 16): the signed manifest's schema, one bundle ID, a light
`verify`, names escaped for the terminal, and bag-info.txt lines that cannot be split."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from generator.bundle.sign import signing


@pytest.fixture(scope="module")
def keys(example_keys: tuple[Path, Path]) -> tuple[Path, Path]:
    return example_keys


@pytest.fixture(scope="module")
def genuine(example_bundle: Path) -> Path:
    return example_bundle


def test_the_manifest_matches_its_schema(genuine: Path) -> None:
    import jsonschema

    schema = json.loads((REPO / "schemas/manifest.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(json.loads((genuine / "MANIFEST.json").read_text()))


def test_bundle_id_has_one_definition() -> None:
    from generator.bundle.bundlelayout import PDF_NAME
    from generator.core.bundleid import bundle_id
    from generator.render.page import note
    from generator.render.view import view

    assert view.bundle_id is bundle_id
    assert note.PDF_NAME == PDF_NAME


# What a finance reader's `verify` must not load (issue 18): the renderer, the audit side, the build, pyHanko
# (the note is parsed in a child process: generator.bundle.pdf.noteparse) and the libraries behind them.
HEAVY = ("jinja2", "weasyprint", "pyarrow", "numpy", "jsonschema", "pandas", "matplotlib", "pyhanko",
         "generator.audit", "generator.render", "generator.bundle.build.build")


def _imported(stderr: str) -> set[str]:
    """The modules `python -X importtime` reports (its lines: `import time: self | cumulative | name`)."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def _heavy(names: set[str]) -> list[str]:
    return sorted(n for n in names if any(n == h or n.startswith(h + ".") for h in HEAVY))


def test_verify_imports_neither_the_renderer_nor_the_audit_side() -> None:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", "import generator.bundle.verify.verify"],
                          capture_output=True, text=True, cwd=REPO)
    names = _imported(proc.stderr)
    assert proc.returncode == 0 and "generator.bundle.verify.verify" in names, proc.stderr[-2000:]
    assert _heavy(names) == []


def test_the_verify_command_stays_light(genuine: Path, example_keys: tuple[Path, Path]) -> None:
    """The whole command path (`python -m generator verify`, its CLI handler, a full verification) loads none."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "generator", "verify", str(genuine),
                           "--trust", str(example_keys[1])], capture_output=True, text=True, cwd=REPO)
    names = _imported(proc.stderr)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    assert {"generator.cli.main", "generator.bundle.verify.verify"} <= names
    assert _heavy(names) == []


def test_bag_info_names_the_weasyprint_that_rendered_the_note(genuine: Path, example_keys: tuple[Path, Path]) -> None:
    from importlib.metadata import version

    from generator.bundle.verify.verify import load_trust, verify_bundle

    field = ["Note-Renderer", f"WeasyPrint {version('weasyprint')}"]
    assert f"{field[0]}: {field[1]}\n" in (genuine / "bag-info.txt").read_text(encoding="utf-8")
    assert field in json.loads((genuine / "MANIFEST.json").read_text())["bag_info"]  # signed with the rest
    report = verify_bundle(genuine, trust=load_trust(example_keys[1]))
    assert report.ok and report.state == "trusted", [str(p) for p in report.problems]


def test_bagit_py_validates_the_bag_with_its_note_renderer_field(genuine: Path) -> None:
    bagit = pytest.importorskip("bagit")
    from importlib.metadata import version

    bag = bagit.Bag(str(genuine))
    bag.validate()  # raises BagValidationError on any problem
    assert bag.info["Note-Renderer"] == f"WeasyPrint {version('weasyprint')}"


def test_a_finding_names_a_file_with_control_characters_escaped() -> None:
    from generator.audit.load.findings import Finding, Severity
    from generator.audit.report import format_finding

    text = format_finding(Finding(code="x", severity=Severity.ERROR, file="pred\r\x1b[31m.csv", line=2,
                                  field="id\n", message="file 'a\nOK: b' is missing", rule="r", fix="f"))
    assert "\x1b" not in text and "\r" not in text
    assert text.splitlines()[0] == ("pred<U+000D><U+001B>[31m.csv:2: id<U+000A>: file 'a<U+000A>OK: b' is missing "
                                    "[error x]")


def test_bag_info_text_never_writes_a_line_break() -> None:
    from generator.bundle.bagit_format import bag_info_text

    with pytest.raises(ValueError, match="U\\+000A"):
        bag_info_text([("Source-Organization", "X\nPayload-Oxum: 1.1")])


def _as_format_2(bundle: Path, keys: tuple[Path, Path], wrong_sha512: str | None = None) -> None:
    """The bundle as gpu-audit wrote it before format 3: a SHA-512 payload manifest beside the SHA-256 one, listed
    in the tag manifest and in MANIFEST.json (schema_version "2"), signed with the bundle's own key."""
    import hashlib

    from generator.bundle.bagit_format import digests, manifest_text
    from generator.core.system.safefiles import sha256_file

    payload = sorted(p.relative_to(bundle).as_posix() for p in (bundle / "data").rglob("*") if p.is_file())
    sums = {rel: digests(bundle / rel, ("sha512",))["sha512"] for rel in payload}
    if wrong_sha512 is not None:
        sums[wrong_sha512] = hashlib.sha512(b"other bytes").hexdigest()
    (bundle / "manifest-sha512.txt").write_text(manifest_text(sums), encoding="utf-8")
    listed = ["bag-info.txt", "bagit.txt", "manifest-sha256.txt", "manifest-sha512.txt"]
    (bundle / "tagmanifest-sha256.txt").write_text(manifest_text({t: sha256_file(bundle / t) for t in listed}),
                                                   encoding="utf-8")
    manifest = json.loads((bundle / "MANIFEST.json").read_text())
    manifest["schema_version"] = "2"
    manifest["tag_files"] = [{"path": t, "bytes": (bundle / t).stat().st_size, "sha256": sha256_file(bundle / t)}
                             for t in sorted([*listed, "tagmanifest-sha256.txt"])]
    data = (json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
    (bundle / "MANIFEST.json").write_bytes(data)
    (bundle / "MANIFEST.json.sig").write_bytes(signing.sign_bytes(signing.load_pem_identity(*keys), data))


def test_a_bundle_of_format_2_with_its_sha512_manifest_still_verifies_and_that_manifest_is_checked(
        genuine: Path, keys: tuple[Path, Path], tmp_path: Path) -> None:
    import shutil

    for name, wrong in (("v2", None), ("v2-wrong", "data/decision.json")):
        bundle = tmp_path / name
        shutil.copytree(genuine, bundle)
        _as_format_2(bundle, keys, wrong)
        done = subprocess.run([sys.executable, "-m", "generator", "verify", str(bundle), "--trust", str(keys[1])],
                              capture_output=True, text=True, cwd=REPO)
        if wrong is None:
            assert done.returncode == 0, done.stdout + done.stderr
        else:
            assert done.returncode == 1
            assert "sha512 checksum mismatch" in done.stdout and "data/decision.json" in done.stdout, done.stdout
    assert not (genuine / "manifest-sha512.txt").exists()  # format 3 writes none
