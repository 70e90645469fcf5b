"""The bundle's formats as `verify` reads them (issue 16): the signed manifest's schema, one bundle ID, a light
`verify`, names escaped for the terminal, and bag-info.txt lines that cannot be split."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLE, REPO

from generator.bundle import signing
from generator.cli.main import main


@pytest.fixture(scope="module")
def genuine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    key, cert = signing.keygen(tmp_path_factory.mktemp("keys"), "Example Org")
    out = tmp_path_factory.mktemp("genuine") / "bundle"
    assert main(["build", str(EXAMPLE), "-o", str(out), "--key", str(key), "--cert", str(cert), "--quiet"]) == 0
    return out


def test_the_manifest_matches_its_schema(genuine: Path) -> None:
    import jsonschema

    schema = json.loads((REPO / "schemas/manifest.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(json.loads((genuine / "MANIFEST.json").read_text()))


def test_bundle_id_has_one_definition() -> None:
    from generator.bundle.bundleid import bundle_id
    from generator.bundle.bundlelayout import PDF_NAME
    from generator.render import note, view

    assert view.bundle_id is bundle_id
    assert note.PDF_NAME == PDF_NAME


def test_verify_imports_neither_the_renderer_nor_the_audit_side() -> None:
    heavy = ("jinja2", "weasyprint", "pyarrow", "numpy", "jsonschema", "pandas", "matplotlib", "generator.render",
             "generator.bundle.build", "generator.audit.check", "pyhanko")
    proc = subprocess.run([sys.executable, "-c", "import sys, generator.cli.main, generator.bundle.verify; "
                           f"print([m for m in {heavy!r} if m in sys.modules])"],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def test_a_finding_names_a_file_with_control_characters_escaped() -> None:
    from generator.audit.findings import Finding, Severity
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
