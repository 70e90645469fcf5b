"""The documented limits (generator/core/limits.py; docs/security.md, "Limits and hostile input"): each one, past
its value, says which limit and how to raise it; the options reach the library as a Limits value, never a global."""

from __future__ import annotations

import json
import os
import re
import zipfile
from pathlib import Path

import pytest
from conftest import GRID, read_grid, set_cell, write_grid
from fuzz import harness

from generator.audit.load.readers.csvtable import read_bytes, read_table
from generator.audit.load.readers.jsondoc import parse_document
from generator.bundle.verify.verify import verify_bundle
from generator.core import limits as limits_mod
from generator.core.errors import LimitExceededError
from generator.core.limits import DEFAULT, GiB, Limits, applied, current


def test_defaults_are_the_documented_ones() -> None:
    assert DEFAULT == Limits(max_file_bytes=2 * GiB, max_json_depth=64, max_findings=200,
                             max_bundle_bytes=8 * GiB, max_zip_entries=10_000, max_zip_ratio=200,
                             max_pdf_bytes=64 * 2**20, max_pdf_seconds=5, max_pdf_objects=100_000,
                             max_pdf_references=100_000, max_pdf_fields=1000)
    doc = (harness.REPO / "docs" / "security.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Limits and hostile input"):]
    for name in ("--max-file-bytes", "--max-json-depth", "--max-findings", "--max-bundle-bytes",
                 "--max-zip-entries", "--max-zip-ratio", "tests/fuzz_long.py --minutes 20"):
        assert name in section, name
    for name, default in (("--max-pdf-bytes", "64 MiB"), ("--max-pdf-seconds", "5 s"), ("--max-pdf-objects", "100000"),
                          ("--max-pdf-references", "100000"), ("--max-pdf-fields", "1000")):
        assert re.search(rf"\| {re.escape(default)} \| `{name} N`", section), name


def test_a_limit_is_a_positive_whole_number() -> None:
    with pytest.raises(ValueError, match="--max-json-depth must be at least 1"):
        Limits(max_json_depth=0)
    with pytest.raises(ValueError, match="--max-file-bytes must be a whole number"):
        Limits(max_file_bytes=1.5)  # type: ignore[arg-type]


def test_applied_limits_are_restored_after_the_block() -> None:
    small = Limits(max_file_bytes=10)
    with applied(small):
        assert current() is small
        with applied(DEFAULT):
            assert current() is DEFAULT
        assert current() is small
    assert current() is DEFAULT


# ------------------------------------------------------------------------------------------ file size


def test_file_size_limit_names_the_file_the_limit_and_the_option(run_cli, campaign: Path) -> None:
    size = (campaign / "expected-ids.csv").stat().st_size
    assert 12 * 1024 < size < 13 * 1024
    r = run_cli("validate", "--max-file-bytes", "12K", str(campaign))
    assert r.code == 2
    assert r.err == (f"gpu-audit: error: expected-ids.csv: {size} bytes exceeds the limit of 12288 (--max-file-bytes, "
                     f"default 2147483648); if the input is genuine, raise it with --max-file-bytes N\n")
    assert r.out == ""
    assert run_cli("validate", "--max-file-bytes", "64K", str(campaign)).code == 0


def test_default_file_size_limit_refuses_a_sparse_2_gib_file_without_reading_it(run_cli, campaign: Path) -> None:
    big = campaign / "tarifs-forfaits.csv"
    os.truncate(big, 2 * GiB + 1)  # sparse: nothing is written, and nothing may be read
    r = run_cli("check", str(campaign))
    assert r.code == 2
    assert "tarifs-forfaits.csv: 2147483649 bytes exceeds the limit of 2147483648 (--max-file-bytes" in r.err


@pytest.mark.parametrize("command", ["validate", "check"])  # check reads them in a worker thread, in a copied context
def test_file_size_limit_applies_to_prediction_files_through_the_active_limits(run_cli, campaign: Path,
                                                                                command: str) -> None:
    pred = campaign / "predictions/b200-batch/b1/warm-1.csv"
    pred.write_bytes(pred.read_bytes() + b"2048,games\n" * 1000)  # the other inputs stay under 20 KiB
    r = run_cli(command, "--max-file-bytes", "20K", str(campaign))
    assert r.code == 2
    assert r.err.startswith(f"gpu-audit: error: predictions/b200-batch/b1/warm-1.csv: {pred.stat().st_size} bytes "
                            "exceeds the limit of 20480 (--max-file-bytes")


def test_library_callers_pass_limits_explicitly(campaign: Path) -> None:
    with pytest.raises(LimitExceededError, match="--max-file-bytes"):
        read_bytes(campaign / GRID, GRID, Limits(max_file_bytes=100))
    assert read_table(campaign / GRID, GRID, "raw-results-row", Limits(max_file_bytes=10**6)).rows


@pytest.mark.parametrize("value, expected", [("4096", 4096), ("64K", 64 * 1024), ("512m", 512 * 2**20),
                                             ("2GiB", 2 * GiB), (" 3 G ", 3 * GiB)])
def test_size_options_take_units(value: str, expected: int) -> None:
    from generator.cli.options import positive_amount

    assert positive_amount(value) == expected


@pytest.mark.parametrize("value", ["0", "-5", "abc", "1.5G", "12T", "", "1" * 30])
def test_bad_limit_values_are_usage_errors(run_cli, campaign: Path, value: str) -> None:
    r = run_cli("validate", "--max-file-bytes", value, str(campaign))
    assert r.code == 2
    assert "argument --max-file-bytes: " in r.err and "is not a positive whole number" in r.err


def test_max_findings_must_be_positive_for_verify_too(run_cli, tmp_path: Path) -> None:
    r = run_cli("verify", "--max-findings", "0", str(tmp_path))
    assert r.code == 2
    assert r.err == "gpu-audit: error: --max-findings must be at least 1\n"


# ------------------------------------------------------------------------------------------ JSON depth


def _nested_protocol(campaign: Path, depth: int) -> None:
    proto = json.loads((campaign / "protocol.json").read_text())
    text = json.dumps(proto)
    (campaign / "protocol.json").write_text(text[:-1] + ', "deep": ' + "[" * depth + "]" * depth + "}")


def test_json_depth_limit_is_a_finding_that_names_the_option(run_cli, campaign: Path) -> None:
    _nested_protocol(campaign, 80)
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    assert "protocol.json: JSON nested deeper than 64 levels [error too-deep]\n" \
           "  rule: nesting depth <= 64 (--max-json-depth)\n" \
           "  fix: flatten the document; if it is genuine, raise the limit with --max-json-depth N" in r.out
    r = run_cli("validate", "--max-json-depth", "100", str(campaign))
    assert "too-deep" not in r.out
    assert "protocol.json: /: Additional properties are not allowed ('deep' was unexpected)" in r.out


def test_json_nested_beyond_the_parser_is_a_finding_too() -> None:
    doc = parse_document("[" * 100_000 + "]" * 100_000, "m.json", "measurement", Limits(max_json_depth=10**6))
    assert [f.code for f in doc.findings] == ["too-deep"]
    assert "or than the parser can follow" in doc.findings[0].message


def test_json_numbers_beyond_a_float_and_lone_surrogates_are_findings() -> None:
    codes = {text: [f.code for f in parse_document(text, "x.json", "manifest").findings]
             for text in ("[1e999]", "[-1E400]", "[" + "9" * 301 + "]", '["\\ud800"]', '{"\\udfff": 1}')}
    assert codes == {"[1e999]": ["number-too-large"], "[-1E400]": ["number-too-large"],
                     "[" + "9" * 301 + "]": ["number-too-large"], '["\\ud800"]': ["invalid-unicode"],
                     '{"\\udfff": 1}': ["invalid-unicode"]}


def test_csv_numbers_beyond_a_float_are_findings(run_cli, campaign: Path) -> None:
    set_cell(campaign, 3, "elapsed_seconds", "1e999")
    set_cell(campaign, 4, "peak_allocated_bytes", "9" * 101)
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    assert "resultats-bruts.csv:4: elapsed_seconds: '1e999' is beyond the range of a number (about 1.8e308) " \
           "[error number-too-large]" in r.out
    assert "resultats-bruts.csv:5: peak_allocated_bytes: 99999999999999999999... has too many digits " \
           "[error number-too-large]" in r.out


# ------------------------------------------------------------------------------------------ findings listed


def test_findings_beyond_the_cap_are_counted_and_the_option_named(run_cli, campaign: Path) -> None:
    rows = read_grid(campaign)
    for row in rows[1:]:
        row[rows[0].index("ids_match")] = "maybe"
    write_grid(campaign, rows)
    r = run_cli("check", "--max-findings", "2", str(campaign))
    assert r.code == 1
    assert "(raise --max-findings to list them)" in r.out


def test_verify_problems_beyond_the_cap_are_counted(run_cli, tmp_path: Path) -> None:
    bundle = harness.example_bundle().copy(tmp_path)
    for p in sorted((bundle / "data" / "inputs" / "predictions").rglob("*.csv"))[:5]:
        p.write_bytes(b"changed")
    r = run_cli("verify", "--max-findings", "3", str(bundle))
    assert r.code == 1
    lines = r.out.splitlines()
    assert lines[3].startswith("... and ") and lines[3].endswith(" more problems")
    assert lines[4].startswith("integrity: FAILED: ") and lines[-1].startswith("FAILED: ")  # then the summary


# ------------------------------------------------------------------------------------------ bundles and zips


def test_verify_file_size_limit_names_the_option(run_cli, tmp_path: Path) -> None:
    bundle = harness.example_bundle().copy(tmp_path)
    r = run_cli("verify", "--max-file-bytes", "1K", str(bundle))
    assert r.code == 1
    assert "MANIFEST.json: its size, " in r.out and "exceeds the limit of 1024 (--max-file-bytes" in r.out


def _zip_of(bundle: Path, z: Path) -> None:
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(bundle.rglob("*")):
            if p.is_file():
                zf.write(p, "b/" + p.relative_to(bundle).as_posix())


@pytest.mark.parametrize("option, value, text", [
    ("--max-zip-entries", "10", "entries exceeds the limit of 10 (--max-zip-entries"),
    ("--max-bundle-bytes", "100K", "bytes, exceeds the limit of 102400 (--max-bundle-bytes"),
])
def test_zip_limits_name_their_option(run_cli, tmp_path: Path, option: str, value: str, text: str) -> None:
    z = tmp_path / "bundle.zip"
    _zip_of(harness.example_bundle().path, z)
    assert run_cli("verify", str(z), "--trust", str(harness.example_bundle().cert)).code == 0
    r = run_cli("verify", option, value, str(z))
    assert r.code == 1
    assert text in r.out, r.out


def test_zip_bomb_ratio_names_its_option(run_cli, tmp_path: Path) -> None:
    z = tmp_path / "bomb.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("b/data/zeros", b"\0" * (3 * 2**20))
    r = run_cli("verify", str(z))
    assert r.code == 1
    assert ("b/data/zeros: entry would expand to 3145728 bytes from " in r.out
            and ": refused as a possible zip bomb; its compression ratio exceeds the limit of 200 (--max-zip-ratio, "
                "default 200); if the input is genuine, raise it with --max-zip-ratio N [unsafe-zip]" in r.out)
    r = run_cli("verify", "--max-zip-ratio", "100000", str(z))
    assert r.code == 1 and "zip bomb" not in r.out and "bagit.txt: missing" in r.out


def test_verify_takes_limits_from_the_library_caller(tmp_path: Path) -> None:
    report = verify_bundle(harness.example_bundle().path, limits=Limits(max_file_bytes=100))
    assert not report.ok
    assert any(p.code == "too-large" for p in report.problems)
    assert limits_mod.current() is DEFAULT
