"""Benchmark what the note's caps bound: long texts in the inputs against the same inputs with short ones.

    python tests/benchmarks/bench_long_notes.py [--rounds 2]

Two pairs, each timed in fresh processes in alternating order, the least processor time (the child's user and
system time: layout is processor-bound) of --rounds rounds kept:
- `build --unsigned` of inputs/example plus 100 attempts whose grid notes are 9,000 characters of words,
  against the same campaign with short notes (the same rows, findings and files);
- `render` of the example's decision.json with a 100,000-character word in four of its texts, against the
  decision.json as it is.
Prints one JSON line with the seconds and the ratios long/short. Before the caps the build took 4 times as long
and the render minutes. Not part of the default test run (tests/test_long_text.py checks what the note shows).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))

from test_long_text import _long_notes_campaign  # noqa: E402 - the same campaigns as the tests

REPO = TESTS.parent


def cpu_seconds(*argv: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "generator", *argv], cwd=REPO, capture_output=True, check=False,
                   timeout=900)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def lengthen(decision: dict[str, Any]) -> dict[str, Any]:
    word = "x" * 100_000  # one unbroken run: the worst case of line breaking
    decision["campaign"]["notes"] = decision["campaign"]["question"] = word
    decision["campaign"]["corpus"]["name"] = word
    decision["experiments"][0]["warmup"]["inputs"] = word
    return decision


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _long_notes_campaign(root / "short", note_length=len("row 99: run"))
        _long_notes_campaign(root / "long")
        subprocess.run([sys.executable, "-m", "generator", "build", str(REPO / "inputs" / "example"), "-o",
                        str(root / "example"), "--unsigned", "--quiet"], cwd=REPO, check=False, timeout=900,
                       capture_output=True)
        decision = json.loads((root / "example" / "data" / "decision.json").read_text(encoding="utf-8"))
        (root / "short.json").write_text(json.dumps(decision), encoding="utf-8")
        (root / "long.json").write_text(json.dumps(lengthen(decision)), encoding="utf-8")
        times: dict[str, list[float]] = {k: [] for k in ("build-short", "build-long", "render-short", "render-long")}
        for n in range(args.rounds):
            for case in ("short", "long"):
                times[f"build-{case}"].append(cpu_seconds("build", str(root / case), "-o", str(root / f"b-{case}-{n}"),
                                                          "--unsigned", "--quiet"))
                times[f"render-{case}"].append(cpu_seconds("render", str(root / f"{case}.json"), "-o",
                                                           str(root / f"r-{case}-{n}")))
    best = {k: round(min(v), 2) for k, v in times.items()}
    print(json.dumps({**best, "build_ratio": round(best["build-long"] / best["build-short"], 2),
                      "render_ratio": round(best["render-long"] / best["render-short"], 2)}))


if __name__ == "__main__":
    main()
