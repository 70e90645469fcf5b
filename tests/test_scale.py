"""Scale: the column-wise path gives exactly the findings of the straightforward one; the benchmark runs."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from generator.audit.check import check_campaign

sys.path.insert(0, str(REPO / "tests" / "benchmarks"))
make_campaign = importlib.import_module("bench_build").make_campaign  # a script folder, not a package


def _defective(root: Path) -> Path:
    """The benchmark's campaign (duplicate, unknown label, shuffled, partial failure) plus harder cases."""
    make_campaign(root, 3000)
    b1 = root / "predictions/bench/b1"
    lines = (b1 / "warm-1.csv").read_text().splitlines()
    lines[10] = "doc-x9,admin"            # an extra ID replaces an expected one
    lines[11] = " doc-00000010,admin"      # a space-padded ID
    lines[12] = lines[13]                  # a duplicate
    lines[14] = lines[14] + ",extra"       # a line with three fields
    (b1 / "warm-1.csv").write_text("\n".join(lines) + "\n")
    (b1 / "warm-5.csv").write_bytes((b1 / "warm-1.csv").read_bytes())  # a byte-identical defective repeat
    text = (b1 / "warm-2.csv").read_text().replace("\n", "\r\n")
    (b1 / "warm-2.csv").write_text(text.replace("doc-00000100,", '"doc-00000100",', 1))  # quoted cell, CRLF
    lines = (b1 / "warm-4.csv").read_text().splitlines()
    lines.insert(50, "")                   # a blank line shifts the line numbers
    lines[70] = "doc-\u00a0bad,admin"       # non-ASCII whitespace inside an ID
    lines[71] = lines[71].split(",")[0] + ",Utils"
    (b1 / "warm-4.csv").write_text("\n".join(lines) + "\n")
    b4 = root / "predictions/bench/b4"
    rows = (b4 / "warm-5.csv").read_text().splitlines()
    head, body = rows[0], rows[1:]
    (b4 / "warm-5.csv").write_text("\n".join([head] + body[::-1] + body[:3]) + "\n")  # reversed, 3 repeated
    (b4 / "warm-3.csv").write_bytes(b"\xef\xbb\xbf" + (b4 / "warm-3.csv").read_bytes())  # BOM
    b8 = root / "predictions/bench/b8"
    data = (b8 / "warm-2.csv").read_bytes()
    (b8 / "warm-2.csv").write_bytes(data.replace(b"doc-00000200,", b"doc-\xff0200,", 1))  # not UTF-8
    text = (b8 / "warm-3.csv").read_text()
    (b8 / "warm-3.csv").write_text(text.replace("doc-00000300,", "doc-\u00e90300,", 1))  # UTF-8, not ASCII
    return root


def _comparable(result) -> tuple[list[dict], dict]:
    decision = json.loads(json.dumps(result.decision))
    decision.pop("generated_at")
    return [f.to_dict() for f in result.findings], decision


@pytest.mark.parametrize("block", [None, 4096])
def test_fast_and_reference_paths_agree_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                block: int | None) -> None:
    """Also with 4 KiB parse blocks: every file is then streamed in some 15 batches, so that IDs that leave the
    expected ones in a later batch, a shuffled file and labels outside the classes far into a file are read
    across batch boundaries."""
    if block is not None:
        from generator.audit.load.readers import columnwise

        monkeypatch.setattr(columnwise, "PARSE_BLOCK", block)
    root = _defective(tmp_path / "c")
    b4 = root / "predictions/bench/b4"
    lines = (b4 / "warm-1.csv").read_text().splitlines()
    lines[2500] = lines[2500].split(",")[0] + ",kernel"  # a label outside the classes in a late batch
    lines[2600] = "doc-late-extra,admin"  # an extra ID in a late batch
    (b4 / "warm-1.csv").write_text("\n".join(lines) + "\n")
    fast, reference = check_campaign(root), check_campaign(root, fast=False)
    fast_findings, fast_decision = _comparable(fast)
    ref_findings, ref_decision = _comparable(reference)
    assert fast_findings == ref_findings
    assert fast_decision == ref_decision
    codes = {f["code"] for f in fast_findings}
    # the defects were really planted and seen, so the comparison is not between two empty reports
    assert {"ids-match-mismatch", "field-count", "invalid-id", "unknown-label", "invalid-encoding"} <= codes
    runs = {(r["phase"], r["run_index"], c["variant_id"]): r["recomputed"]
            for c in fast_decision["configurations"] for r in c["runs"]}
    assert runs[("warm", 5, "b4")]["duplicates"] == 3 and runs[("warm", 5, "b4")]["ids_match"] is False
    assert runs[("warm", 4, "b8")]["quality_value"] is not None  # the shuffled file is still scored
    # the identical repeat has the same findings under its own name, and its own acceptance entry
    own = {name: sorted((f["code"], f["line"], f["value"]) for f in fast_findings if f["file"] == name)
           for name in ("predictions/bench/b1/warm-1.csv", "predictions/bench/b1/warm-5.csv")}
    assert own["predictions/bench/b1/warm-1.csv"] == own["predictions/bench/b1/warm-5.csv"] != []
    repeat, first = runs[("warm", 5, "b1")], runs[("warm", 1, "b1")]
    assert repeat["prediction_file"] == "predictions/bench/b1/warm-5.csv"
    assert {**repeat, "prediction_file": first["prediction_file"]} == first


def test_identical_prediction_files_are_parsed_once(tmp_path: Path, monkeypatch) -> None:
    import hashlib

    import generator.audit.check as check

    root = tmp_path / "c"
    make_campaign(root, 2000)
    files = sorted((root / "predictions").rglob("*.csv"))
    distinct = {hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    assert len(distinct) < len(files)  # repeats of a deterministic model: byte-identical files
    parsed: list[str] = []
    real = check.parse_label_bytes

    def counting(data: bytes, display: str, *args, **kwargs):
        parsed.append(display)
        return real(data, display, *args, **kwargs)

    monkeypatch.setattr(check, "parse_label_bytes", counting)
    check_campaign(root)
    assert len(parsed) == len(distinct)
    parsed.clear()
    check_campaign(root, fast=False)  # the straightforward path reads every file itself
    assert len(parsed) == len(files)


def test_findings_stay_bounded_with_many_bad_rows(tmp_path: Path) -> None:
    root = tmp_path / "c"
    make_campaign(root, 20000)
    path = root / "predictions/bench/b1/warm-1.csv"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0]] + [ln.split(",")[0] + ",nonsense" for ln in lines[1:]]) + "\n")
    result = check_campaign(root)
    unknown = [f for f in result.findings if f.code == "unknown-label" and f.file.endswith("b1/warm-1.csv")]
    assert len(unknown) == 1
    assert unknown[0].value == 20000
    assert unknown[0].message.startswith("20000 labels outside the declared classes (first: line 2: 'nonsense'")


def test_smoke_benchmark_runs_and_reports_ratios(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(REPO / "tests/benchmarks/bench_build.py"), "--n", "2000",
                           "--rounds", "1", "--no-peer", "--skip-build"],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["n"] == 2000 and summary["check_over_floor"] > 0
    assert "floor" in proc.stdout and "check" in proc.stdout


def test_build_shows_progress_only_on_a_terminal(tmp_path: Path, run_cli) -> None:
    import os
    import pty

    from conftest import EXAMPLE

    r = run_cli("build", str(EXAMPLE), "-o", str(tmp_path / "quiet"), "--unsigned")
    assert r.code == 0 and r.err == "warning: the bundle is UNSIGNED\n"  # stderr is no terminal: no bar
    pid, fd = pty.fork()
    if pid == 0:  # child: stdout and stderr are the terminal
        os.execv(sys.executable, [sys.executable, "-m", "generator", "build", str(EXAMPLE), "-o",
                                  str(tmp_path / "tty"), "--unsigned"])
    seen = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.waitpid(pid, 0)
    text = seen.decode("utf-8", "replace")
    assert "recomputing prediction files     [" in text
    assert "copying inputs and rendering..." in text and "signing..." in text


def test_a_file_of_the_expected_ids_shares_their_array_and_keeps_one_byte_codes(tmp_path: Path) -> None:
    """docs/performance.md: a prediction file listing the expected IDs in their order costs no ID column of its own,
    and its labels are kept as one-byte class codes, not strings; a file in another order gets its own IDs."""
    import numpy as np

    from generator.audit.load.findings import Severity
    from generator.audit.load.load import load_campaign
    from generator.audit.load.readers.predictions import ColumnRules, known_ids, read_labels

    root = tmp_path / "c"
    make_campaign(root, 2000)
    inputs = load_campaign(root)
    assert inputs.expected is not None
    known = known_ids(inputs.expected, ColumnRules.from_schema("labels-row", inputs.classes))
    assert known is not None
    in_order = read_labels(root / "predictions/bench/b1/warm-1.csv", "warm-1.csv", inputs.classes, Severity.WARNING,
                           known=known)
    assert in_order.ids is known.ids and in_order.labels is None
    assert in_order.label_codes.dtype == np.int8 and len(in_order.label_codes) == 2000
    shuffled = read_labels(root / "predictions/bench/b8/warm-4.csv", "warm-4.csv", inputs.classes, Severity.WARNING,
                           known=known)
    assert shuffled.ids is not known.ids and sorted(shuffled.ids.to_pylist()) == known.ids.to_pylist()


def test_files_whose_first_row_is_not_the_first_expected_id_are_sent_to_the_workers_first(tmp_path: Path) -> None:
    """A file out of order costs a sort of all its IDs: sent first, it does not leave a worker idle at the end.
    The others keep the grid's order; the outcomes do not depend on it (the fast and reference paths agree)."""
    from generator.audit.check import _PredictionFiles
    from generator.audit.load.load import load_campaign
    from generator.audit.validate.validate import validate_inputs

    root = tmp_path / "c"
    make_campaign(root, 2000)
    inputs = validate_inputs(load_campaign(root))
    names = [inputs.run_files[i].relpath for i in _PredictionFiles(inputs, None, True, None).sending_order()]
    shuffled = "predictions/bench/b8/warm-4.csv"
    assert names == [shuffled] + [r.relpath for r in inputs.run_files if r.relpath != shuffled]


def test_the_reference_columns_are_released_once_the_truth_holds_them(tmp_path: Path) -> None:
    root = tmp_path / "c"
    make_campaign(root, 2000)
    result = check_campaign(root)
    reference = result.inputs.reference
    assert reference is not None and len(reference.ids) == 0 and reference.labels is None
    assert reference.sha256 is not None  # its fingerprint stays, for decision.json's inputs
    assert any(i["path"] == "reference.csv" and i["sha256"] == reference.sha256 for i in result.decision["inputs"])


def test_campaign_commands_give_freed_columns_back_through_jemalloc() -> None:
    import pyarrow

    try:
        pyarrow.jemalloc_memory_pool()
    except NotImplementedError:
        import pytest

        pytest.skip("this pyarrow is built without jemalloc: the default pool stays")
    code = ("from generator.cli.options import reading_campaigns; import pyarrow; "
            "before = pyarrow.default_memory_pool().backend_name; reading_campaigns(); "
            "print(before, pyarrow.default_memory_pool().backend_name)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.split()[1] == "jemalloc", done.stdout


def test_the_id_pattern_read_from_the_buffers_agrees_with_re2_on_every_ascii_character() -> None:
    """The schema's ID pattern, checked from the column's bytes, flags exactly the IDs RE2 flags: every ASCII
    character at the start, inside and at the end, empty IDs, over-long ones, and a sliced column."""
    import pyarrow as pa

    from generator.audit.load.readers.idpattern import EDGE_PATTERN, bad_ids
    from generator.audit.load.readers.predictions import ColumnRules

    rules = ColumnRules.from_schema("labels-row", None)
    assert rules.id_pattern == EDGE_PATTERN  # else the fast path is never taken and this test proves nothing
    values = ["", "a", "ab", "x" * rules.id_max_length, "y" * (rules.id_max_length + 1)]
    for code in range(128):
        c = chr(code)
        values += [c, c + "a", "a" + c, "a" + c + "b", c + c, "doc-" + c + "-1"]
    values = values * 3
    ids = pa.array(values, type=pa.string())
    same_semantics = r"^\S(?:.*\S)?$"  # not EDGE_PATTERN: RE2 reads this one
    for column in (ids, ids.slice(7, 400), ids.slice(len(ids) - 5)):
        fast = bad_ids(column, EDGE_PATTERN, rules.id_max_length)
        regex = bad_ids(column, same_semantics, rules.id_max_length)
        assert fast == regex
    count, first = bad_ids(ids, EDGE_PATTERN, rules.id_max_length)
    assert count == 3 * sum(1 for v in values[: len(values) // 3]
                            if v == "" or v[0] in "\t\n\f\r " or v[-1] in "\t\n\f\r " or "\n" in v
                            or len(v) > rules.id_max_length)
    assert first == [0, 4, 59, 60, 61]  # "", the over-long ID, then "\t", "\ta", "a\t" (a NUL is \S to RE2)
