"""Benchmark `gpu-audit render` on the example against the import floor of its libraries, in the same run.

    python tests/benchmarks/bench_render.py [--rounds 7] [--campaign inputs/example]

Makes the campaign's decision.json with `gpu-audit check`, then times in alternating order, each in a fresh
process (one warm-up round, then --rounds rounds): the import floor (a plain `import weasyprint,
matplotlib.figure, jinja2`) and `gpu-audit render`. Then times `render_note` in this process with the
libraries already loaded and a chart worker that has had time to import matplotlib, as in `build`, which
preloads both while it checks the campaign. Prints a table and one JSON line. Not part of the default test run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
IMPORTS = "import weasyprint, matplotlib.figure, jinja2"
WORKER_HEAD_START = 2.0  # seconds: in `build` the chart worker imports matplotlib while the campaign is checked


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds after one warm-up (default 7)")
    parser.add_argument("--campaign", type=Path, default=REPO / "inputs" / "example", help="campaign folder")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="gpu-audit-bench-render-"))
    py = sys.executable
    try:
        decision = work / "decision.json"
        subprocess.run([py, "-m", "generator", "check", str(args.campaign), "--out", str(decision)],
                       stdout=subprocess.DEVNULL, check=False)
        commands = {
            "imports": lambda i: [py, "-c", IMPORTS],
            "render": lambda i: [py, "-m", "generator", "render", str(decision), "-o", str(work / f"note-{i}"),
                                 "--campaign", str(args.campaign)],
        }
        results: dict[str, list[float]] = {k: [] for k in commands}
        names = list(commands)
        for rnd in range(args.rounds + 1):
            for name in names[rnd % 2:] + names[: rnd % 2]:
                seconds = timed(commands[name](rnd))
                if rnd:
                    results[name].append(seconds)
        from generator.core.worker import JsonWorker
        from generator.render.note import campaign_evidence, render_note

        raw = decision.read_bytes()
        loaded = json.loads(raw)
        evidence = campaign_evidence(args.campaign, raw)
        in_process = []
        for rnd in range(args.rounds + 1):
            with JsonWorker("generator.render.charts") as charts:
                time.sleep(WORKER_HEAD_START)
                start = time.perf_counter()
                render_note(loaded, evidence, signature_status="benchmark", charts=charts)
                if rnd:
                    in_process.append(time.perf_counter() - start)
        results["in-process"] = in_process
        print(f"{'what':<12}{'median s':>10}{'min s':>10}{'max s':>10}")
        for name, values in results.items():
            print(f"{name:<12}{statistics.median(values):>10.2f}{min(values):>10.2f}{max(values):>10.2f}")
        med = {k: statistics.median(v) for k, v in results.items()}
        print(json.dumps({"rounds": args.rounds, "render_s": round(med["render"], 3),
                          "imports_s": round(med["imports"], 3),
                          "render_beyond_imports_s": round(med["render"] - med["imports"], 3),
                          "in_process_s": round(med["in-process"], 3)}))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
