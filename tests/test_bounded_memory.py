"""Memory bounded by design (docs/performance.md): a sparse or line-less id/label file is refused early, a finding."""

from __future__ import annotations

import importlib
import os
import random
import sys
from pathlib import Path

import measured
import pytest

from generator.audit.load.findings import Severity
from generator.audit.load.readers.boundedread import BLOCK, MAX_LINE_BYTES, read_bounded
from generator.audit.load.readers.predictions import read_labels

GIB = 2**30
RUN = "predictions/b200-batch/b1"
# The command may not take more address space than this: without the bound, the old reader's 15 GB peak
# would stop at a MemoryError here instead of taking the machine with it.
AS_CAP = 8 * GIB
CPU_BOUND = 30  # processor seconds: a refusal reads a block or a line, not the file


def _run(*argv: str, cwd: Path) -> tuple[int, str, int, float]:
    """Exit status, output, peak RSS (bytes) and processor seconds of one `gpu-audit` command."""
    done = measured.gpu_audit(*argv, cwd=cwd, address_space=AS_CAP)
    return done.returncode, done.out, done.peak_bytes, done.cpu_seconds


def _single_line(path: Path, size: int = 500_000_000) -> None:
    """`id,label` and then one line of `size` bytes, written in blocks (nothing that large in memory)."""
    with path.open("wb") as fh:
        fh.write(b"id,label\n")
        chunk = b"a" * BLOCK
        for _ in range(size // BLOCK):
            fh.write(chunk)
        fh.write(b"a" * (size % BLOCK))


def _assert_bounded(rc: int, out: str, peak: int, seconds: float, finding: str, status: int | None = 1) -> None:
    assert finding in out, out[-3000:]
    if status is not None:
        assert rc == status, out[-3000:]
    assert "Traceback" not in out and "MemoryError" not in out
    assert peak < GIB, f"peak RSS {peak / 2**20:.0f} MiB"
    assert seconds < CPU_BOUND, f"{seconds:.1f} s of processor time"


def test_check_refuses_a_2gib_sparse_prediction_file(campaign: Path, tmp_path: Path) -> None:
    os.truncate(campaign / RUN / "warm-3.csv", 2 * GIB)  # holes: no disk used
    rc, out, peak, seconds = _run("check", str(campaign), cwd=tmp_path)
    _assert_bounded(rc, out, peak, seconds, f"{RUN}/warm-3.csv: 2147483648 bytes: more than any file")


def test_check_refuses_a_500mb_single_line(campaign: Path, tmp_path: Path) -> None:
    _single_line(campaign / RUN / "warm-4.csv")
    rc, out, peak, seconds = _run("check", str(campaign), cwd=tmp_path)
    _assert_bounded(rc, out, peak, seconds, f"{RUN}/warm-4.csv: 500000009 bytes: more than any file")


@pytest.mark.parametrize("shape", ["sparse", "line"])
def test_check_refuses_line_less_expected_ids(campaign: Path, tmp_path: Path, shape: str) -> None:
    # The expected IDs define the corpus: no size limit for them, the line limit stops the read.
    target = campaign / "expected-ids.csv"
    if shape == "sparse":
        os.truncate(target, 2 * GIB)
        line = 1002  # 1,000 IDs under the header, then NUL bytes without a line break
    else:
        target.write_bytes(b"id\n" + b"a" * 500_000_000)
        line = 2
    rc, out, peak, seconds = _run("check", str(campaign), cwd=tmp_path)
    _assert_bounded(rc, out, peak, seconds,
                    f"expected-ids.csv:{line}: line {line} is longer than {MAX_LINE_BYTES} bytes")


def test_validate_applies_the_same_limits(campaign: Path, tmp_path: Path) -> None:
    os.truncate(campaign / RUN / "warm-3.csv", 2 * GIB)
    rc, out, peak, seconds = _run("validate", str(campaign), cwd=tmp_path)
    # A prediction file's problems are warnings in `validate`: its exit status is not the point here.
    _assert_bounded(rc, out, peak, seconds, f"{RUN}/warm-3.csv: 2147483648 bytes: more than any file", None)
    os.truncate(campaign / RUN / "warm-3.csv", 0)
    _single_line(campaign / "expected-ids.csv")
    rc, out, peak, seconds = _run("validate", str(campaign), cwd=tmp_path)
    _assert_bounded(rc, out, peak, seconds, "expected-ids.csv:2: line 2 is longer than")


def test_build_applies_the_same_limits(campaign: Path, tmp_path: Path) -> None:
    # The 500 MB line rather than the sparse file: the bundle holds a real copy of every input.
    _single_line(campaign / RUN / "warm-4.csv")
    rc, out, peak, seconds = _run("build", str(campaign), "--unsigned", "-o", str(tmp_path / "bundle"), cwd=tmp_path)
    _assert_bounded(rc, out, peak, seconds, f"{RUN}/warm-4.csv: 500000009 bytes: more than any file")


def test_a_long_line_under_the_size_limit_is_refused_with_its_line(campaign: Path) -> None:
    path = campaign / RUN / "warm-2.csv"
    lines = path.read_bytes().split(b"\n")
    lines[40] = b"doc-x," + b"b" * (MAX_LINE_BYTES + 10)
    path.write_bytes(b"\n".join(lines))
    result = read_labels(path, "warm-2.csv", {"a"}, Severity.WARNING, max_bytes=10**9)
    assert not result.readable
    (finding,) = result.problems
    assert (finding.code, finding.line, finding.severity) == ("line-too-long", 41, Severity.WARNING)
    assert result.sha256 is not None and result.size == path.stat().st_size


@pytest.mark.parametrize("whole", [False, True])
def test_the_line_check_agrees_with_the_plain_one(tmp_path: Path, whole: bool) -> None:
    """Random lines around the limit, at block edges too; read whole (a size limit given) and in blocks."""
    rng = random.Random(20261201)
    path = tmp_path / "f.csv"
    for _ in range(60):
        lengths = [rng.choice([3, 20, MAX_LINE_BYTES // 2, MAX_LINE_BYTES - 1, MAX_LINE_BYTES,
                               MAX_LINE_BYTES + 1, 3 * MAX_LINE_BYTES, rng.randrange(BLOCK // 2)])
                   for _ in range(rng.randrange(1, 12))]
        if rng.random() < 0.5:
            lengths = [rng.randrange(60) for _ in range(rng.randrange(BLOCK // 40))] + lengths
        data = b"\n".join(b"x" * n for n in lengths) + (b"\n" if rng.random() < 0.5 else b"")
        path.write_bytes(data)
        expected = next((i + 1 for i, n in enumerate(lengths) if n > MAX_LINE_BYTES), None)
        raw = read_bounded(path, "f.csv", max_bytes=len(data) if whole else None)
        got = raw.refusal.line if raw.refusal is not None else None
        assert got == expected, lengths
        assert raw.size == len(data)
        assert (raw.data is None) == (expected is not None)


def test_peak_memory_grows_with_the_corpus_as_documented(tmp_path: Path) -> None:
    """docs/performance.md: peak RSS of `check` under the documented bound (bench_build.memory_bound_mib: 256 MiB
    + 150 bytes per expected ID with 19-byte rows), every prediction file different."""
    sys.path.insert(0, str(Path(__file__).resolve().parent / "benchmarks"))
    bench = importlib.import_module("bench_build")

    n = 200_000
    bench.make_campaign(tmp_path / "c", n, distinct=True)
    rc, out, peak, _ = _run("check", str(tmp_path / "c"), cwd=tmp_path)
    assert rc == 1, out[-3000:]  # the benchmark plants defects
    assert peak < bench.memory_bound_mib(n) * 2**20, f"peak RSS {peak / 2**20:.0f} MiB"
