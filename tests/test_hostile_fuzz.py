"""Property-based fuzzing (hypothesis) of every loader, `validate`, `check`, `verify` and a few `build`s.

The property (tests/fuzz/harness.py): exit 0, 1 or 2 with a message, within a time bound, never an uncaught
exception or a traceback, nothing from outside the campaign folder shown, no network, inputs unchanged. The
loaders themselves return findings for any text and never raise. CI settings: few examples, derandomized, no
deadline; `python tests/fuzz_long.py --minutes 20` is the long run.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conftest import EXAMPLE
from fuzz import harness, mutators
from hypothesis import HealthCheck, example, given, reject, settings
from hypothesis import strategies as st

from generator.audit.load.findings import Finding, Severity
from generator.audit.load.readers.csvtable import parse_table
from generator.audit.load.readers.jsondoc import parse_document

CI = settings(deadline=None, derandomize=True, database=None, print_blob=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])

CSV_SCHEMAS = ["raw-results-row", "tariffs-row", "expected-ids-row", "labels-row"]
JSON_SCHEMAS = ["protocol", "measurement", "manifest"]
GRID_TEXT = (EXAMPLE / "resultats-bruts.csv").read_text(encoding="utf-8")
PROTOCOL_TEXT = (EXAMPLE / "protocol.json").read_text(encoding="utf-8")


def _is_findings(items: object) -> bool:
    return isinstance(items, list) and all(isinstance(f, Finding) and isinstance(f.severity, Severity) for f in items)


def _assert_property(o: harness.Outcome, problems: list[str], what: list[str]) -> None:
    if problems and harness.known_bug(o, problems):
        reject()  # reported and pinned by a strict xfail case in tests/fuzz/cases/
    assert not problems, harness.describe(o, what, problems)


# ------------------------------------------------------------------------------------------ loaders


csv_text = st.one_of(
    st.text(max_size=300),
    st.text(alphabet=st.sampled_from(list(',"\n\r;\t=+-@0123456789.eE \x00\ufeffaz')), max_size=300),
    st.builds(lambda r: mutators.mutate_csv_text(r, GRID_TEXT)[0], st.randoms(use_true_random=False)),
)


@settings(CI, max_examples=60)
@given(text=csv_text, schema=st.sampled_from(CSV_SCHEMAS))
@example(text="\r0", schema="raw-results-row")  # a header ended by a lone CR (the delimiter check once raised)
@example(text="a;b\rexperiment_id;variant_id\n", schema="raw-results-row")
def test_csv_loader_returns_findings_for_any_text(text: str | bytes, schema: str) -> None:
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    table = parse_table(text, "x.csv", schema)
    assert _is_findings(table.findings)
    assert len(table.rows) == len(table.lines)


json_text = st.one_of(
    st.text(max_size=200),
    st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                 lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
                 max_leaves=20).map(json.dumps),
    st.builds(lambda r: mutators.dumps(mutators.hostile_json_value(r), r), st.randoms(use_true_random=False)),
    st.integers(min_value=1, max_value=3000).map(lambda n: "[" * n + "]" * n),
)


@settings(CI, max_examples=60)
@given(text=json_text, schema=st.sampled_from(JSON_SCHEMAS))
def test_json_loader_returns_findings_for_any_text(text: str, schema: str) -> None:
    doc = parse_document(text, "x.json", schema)
    assert _is_findings(doc.findings)
    assert doc.data is not None or doc.findings


@settings(CI, max_examples=25)
@given(rng=st.randoms(use_true_random=False))
def test_label_files_return_problems_for_any_content(rng: random.Random,
                                                     tmp_path_factory: pytest.TempPathFactory) -> None:
    from generator.audit.load.readers.predictions import read_labels

    path = tmp_path_factory.mktemp("labels") / "warm-1.csv"
    path.write_bytes((EXAMPLE / "predictions/b200-batch/b1/warm-1.csv").read_bytes())
    what = mutators.mutate_csv_file(rng, path)
    labels = read_labels(path, "warm-1.csv", {"games", "net"}, Severity.WARNING)
    assert _is_findings(labels.problems), what


# ------------------------------------------------------------------------------------------ validate, check


@settings(CI, max_examples=45)
@given(rng=st.randoms(use_true_random=False))
def test_validate_and_check_keep_the_property_on_mutated_campaigns(rng: random.Random) -> None:
    with harness.scratch() as work:
        campaign = harness.fresh_campaign(work)
        what = mutators.mutate_campaign(rng, campaign)
        commands: list[list[str | Path]] = [["validate", campaign], ["check", campaign],
                                            ["validate", "--json", campaign]]
        for argv in commands:
            o, problems = harness.check_command(argv, [campaign, work / "outside"])
            _assert_property(o, problems, what)


@settings(CI, max_examples=15)
@given(rng=st.randoms(use_true_random=False), limits=st.sampled_from([
    ["--max-file-bytes", "4K"], ["--max-json-depth", "3"], ["--max-findings", "1"], ["--max-file-bytes", "1"]]))
def test_limits_keep_the_property(rng: random.Random, limits: list[str]) -> None:
    with harness.scratch() as work:
        campaign = harness.fresh_campaign(work)
        what = mutators.mutate_campaign(rng, campaign)
        for cmd in ("validate", "check"):
            o, problems = harness.check_command([cmd, *limits, campaign], [campaign, work / "outside"])
            _assert_property(o, problems, what)
            if o.code == 2 and "exceeds the limit" in o.err:
                assert "--max-" in o.err


# ------------------------------------------------------------------------------------------ verify


def _payload(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink() and (p.name == "MANIFEST.json" or "data" in p.parts)}


@settings(CI, max_examples=30)
@given(rng=st.randoms(use_true_random=False))
def test_verify_keeps_the_property_on_mutated_bundles(rng: random.Random) -> None:
    eb = harness.example_bundle()
    with harness.scratch() as work:
        mutators.plant_outside(work)
        bundle = eb.copy(work)
        resigned: list[bool] = []

        def resign(root: Path) -> None:
            resigned.append(True)
            eb.resign(root)

        what = [mutators.mutate_bundle(rng, bundle, resign) for _ in range(rng.choice([1, 1, 2]))]
        extra = rng.choice([[], ["--trust", str(eb.cert)], ["--allow-unsigned"]])
        o, problems = harness.check_command(["verify", bundle, *extra], [bundle, work / "outside"])
        _assert_property(o, problems, what)
        if o.code == 0 and not resigned:  # a bundle that verifies holds exactly what was signed
            assert _payload(bundle) == _payload(eb.path), what


@settings(CI, max_examples=30)
@given(rng=st.randoms(use_true_random=False))
def test_verify_keeps_the_property_on_mutated_zips(rng: random.Random) -> None:
    eb = harness.example_bundle()
    with harness.scratch() as work:
        mutators.plant_outside(work)
        bundle = eb.copy(work)
        what = [mutators.mutate_bundle(rng, bundle, eb.resign)] if rng.random() < 0.3 else []
        z = work / "bundle.zip"
        what.append(mutators.zip_folder(rng, bundle, z))
        what.append(mutators.mutate_zip(rng, z))
        o, problems = harness.check_command(["verify", z], [z, work / "outside"])
        _assert_property(o, problems, what)


# ------------------------------------------------------------------------------------------ build (a few)


def _hostile_campaign(work: Path) -> Path:
    """Validates with error findings, yet builds: formulas, markup, odd Unicode and edge numbers in text cells."""
    from conftest import read_grid, write_grid

    campaign = harness.fresh_campaign(work)
    rows = read_grid(campaign)
    notes = rows[0].index("notes")
    for i, text in enumerate(["=HYPERLINK(\"http://example.invalid\")", "<img src=\"file:///etc/passwd\">",
                              "@SUM(A1)\u202e\u200b😀 e\u0301", "{{ 7*7 }} ]]> &amp; \x0b\x1b[31m",
                              "+cmd|' /C calc'!A0"], start=1):
        rows[i][notes] = text
    rows[6][rows[0].index("elapsed_seconds")] = "1e999"
    rows[7][rows[0].index("peak_allocated_bytes")] = "-1"
    write_grid(campaign, rows)
    proto = json.loads((campaign / "protocol.json").read_text())
    proto["title"] = "=1+1 <b>bold</b> \u0000 \ufeff"
    proto["notes"] = "x" * 10000
    (campaign / "protocol.json").write_text(json.dumps(proto), encoding="utf-8")
    return campaign


@pytest.mark.parametrize("shape", ["hostile-text", "unreadable-protocol"])
def test_build_keeps_the_property_and_its_bundle_verifies(shape: str) -> None:
    with harness.scratch() as work:
        if shape == "hostile-text":
            campaign = _hostile_campaign(work)
        else:
            campaign = harness.fresh_campaign(work)
            (campaign / "protocol.json").write_text("[" * 70 + "]" * 70, encoding="utf-8")
        out = work / "bundle"
        o, problems = harness.check_command(["build", campaign, "-o", out, "--unsigned", "--quiet"],
                                            [campaign, work / "outside"])
        assert not problems, harness.describe(o, [shape], problems)
        assert o.code == 1, o.out + o.err  # error findings: built, and the note shows them
        v = harness.run_main(["verify", out, "--allow-unsigned"])
        assert v.code == 0, v.out


def test_build_refused_by_a_limit_leaves_nothing() -> None:
    with harness.scratch() as work:
        campaign = harness.fresh_campaign(work)
        out = work / "bundle"
        o, problems = harness.check_command(["build", campaign, "-o", out, "--unsigned", "--max-file-bytes", "10K"],
                                            [campaign], expect=(2,))
        assert not problems, harness.describe(o, ["--max-file-bytes 10K"], problems)
        assert "exceeds the limit of 10240 (--max-file-bytes" in o.err
        assert sorted(p.name for p in work.iterdir()) == ["campaign", "outside"]
