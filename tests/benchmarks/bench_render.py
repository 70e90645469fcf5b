"""Benchmark `gpu-audit render` on the example against the import floor of its libraries, in the same run.

    python tests/benchmarks/bench_render.py [--rounds 7] [--campaign inputs/example] [--against OTHER_TREE]

Makes the campaign's decision.json with `gpu-audit check`, then times in alternating order, each in a fresh
process (one warm-up round, then --rounds rounds): the import floor (a plain `import weasyprint,
matplotlib.figure, jinja2`), `gpu-audit render` with `--campaign` and without it. Then times `render_note`
with the libraries already loaded and a chart worker that has had time to import matplotlib, as in `build`,
which preloads both while it checks the campaign (a fresh process per round: one warm-up render, one timed).

With --against, the same measurements run in another checkout of gpu-audit (its own `.venv`, or the Python
--against-python names), interleaved round by round with this one, so that both see the same load: a before
and after in one run. Prints a table and one JSON line. Not part of the default test run.
"""

from __future__ import annotations

import argparse
import json
import resource
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
# One in-process render after a warm-up one; the worker's module moved in issue 18, so both paths are tried.
IN_PROCESS = f"""
import json, sys, time
from pathlib import Path
try:
    from generator.core.system.worker import JsonWorker
except ImportError:
    from generator.worker import JsonWorker
from generator.cli.evidence import campaign_evidence
from generator.render.page.note import render_note
raw = Path(sys.argv[1]).read_bytes()
decision, evidence = json.loads(raw), campaign_evidence(Path(sys.argv[2]), raw)
for rnd in range(2):
    with JsonWorker("generator.render.page.charts") as charts:
        time.sleep({WORKER_HEAD_START})
        start = time.perf_counter()
        render_note(decision, evidence, charts=charts)
        seconds = time.perf_counter() - start
print(json.dumps(seconds))
"""


class Tree:
    """One checkout of gpu-audit and the Python that runs it; every command runs in its folder."""

    def __init__(self, label: str, root: Path, python: str, work: Path) -> None:
        self.label, self.root, self.python, self.work = label, root, python, work / label
        self.work.mkdir()
        self.decision = self.work / "decision.json"

    def run(self, args: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run([self.python, *args], cwd=self.root, check=True, capture_output=True, text=True)

    def timed(self, args: list[str]) -> tuple[float, float]:
        """Wall seconds, and processor seconds of the command and of the processes it waited for (the chart
        worker): on a loaded machine the second varies far less than the first."""
        start, cpu = time.perf_counter(), _children_cpu()
        self.run(args)
        return time.perf_counter() - start, _children_cpu() - cpu


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def measure(tree: Tree, campaign: Path, rnd: int) -> dict[str, float]:
    """One round of every fresh-process measurement in this tree, in an order that rotates with the round."""
    commands = {
        "imports": ["-c", IMPORTS],
        "render": ["-m", "generator", "render", str(tree.decision), "-o", str(tree.work / f"note-{rnd}"),
                   "--campaign", str(campaign)],
        "render-bare": ["-m", "generator", "render", str(tree.decision), "-o", str(tree.work / f"bare-{rnd}")],
    }
    names = list(commands)
    names = names[rnd % len(names):] + names[: rnd % len(names)]
    times: dict[str, float] = {}
    for name in names:
        times[name], times[f"{name} cpu"] = tree.timed(commands[name])
    return times


def report(trees: list[Tree], results: dict[str, dict[str, list[float]]], rounds: int) -> None:
    print(f"{'tree':<10}{'what':<18}{'median s':>10}{'min s':>10}{'max s':>10}")
    summary: dict[str, dict[str, float]] = {}
    for tree in trees:
        summary[tree.label] = {}
        for name, values in results[tree.label].items():
            summary[tree.label][name] = round(statistics.median(values), 3)
            print(f"{tree.label:<10}{name:<18}{statistics.median(values):>10.2f}{min(values):>10.2f}"
                  f"{max(values):>10.2f}")
    line: dict[str, object] = {"rounds": rounds}
    for label, med in summary.items():
        line[label] = {"render_s": med["render"], "render_cpu_s": med["render cpu"],
                       "render_bare_s": med["render-bare"], "render_bare_cpu_s": med["render-bare cpu"],
                       "imports_s": med["imports"], "imports_cpu_s": med["imports cpu"],
                       "render_beyond_imports_s": round(med["render"] - med["imports"], 3),
                       "in_process_s": med["in-process"]}
    if len(trees) == 2:
        this, other = (summary[t.label] for t in trees)
        line["this_minus_against_s"] = {k: round(this[k] - other[k], 3) for k in this}
    print(json.dumps(line))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds after one warm-up (default 7)")
    parser.add_argument("--campaign", type=Path, default=REPO / "inputs" / "example", help="campaign folder")
    parser.add_argument("--against", type=Path, help="another gpu-audit checkout, measured alternately")
    parser.add_argument("--against-python", help="its Python (default: OTHER_TREE/.venv/bin/python)")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="gpu-audit-bench-render-"))
    campaign = args.campaign.resolve()
    try:
        trees = [Tree("this", REPO, sys.executable, work)]
        if args.against is not None:
            python = args.against_python or str(args.against.resolve() / ".venv" / "bin" / "python")
            trees.append(Tree("against", args.against.resolve(), python, work))
        for tree in trees:
            subprocess.run([tree.python, "-m", "generator", "check", str(campaign), "--out", str(tree.decision)],
                           cwd=tree.root, stdout=subprocess.DEVNULL, check=False)
        results: dict[str, dict[str, list[float]]] = {t.label: {} for t in trees}
        for rnd in range(args.rounds + 1):
            for tree in trees[rnd % len(trees):] + trees[: rnd % len(trees)]:
                times = measure(tree, campaign, rnd)
                times["in-process"] = float(tree.run(["-c", IN_PROCESS, str(tree.decision), str(campaign)]).stdout)
                for name, seconds in times.items():
                    if rnd:  # round 0 warms the caches
                        results[tree.label].setdefault(name, []).append(seconds)
        report(trees, results, args.rounds)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
