"""Benchmark `gpu-audit check` and `build` on a large seeded campaign against the I/O floor and a peer validator.

    python tests/benchmarks/bench_build.py [--n 1000000] [--rounds 5] [--keep DIR] [--distinct]
    python tests/benchmarks/bench_build.py --distinct --sizes 100000,1000000,3000000 [--rounds 3]

Generates (seed 20261129) a SYNTHETIC campaign of N expected IDs, 3 variants x (5 warm + 1 cold) = 18
prediction files with planted defects (repeats byte-identical, as a deterministic model writes them, except
the defective ones; with --distinct every file differs by a few labels), then times,
each in a fresh process and in alternating order
(one warm-up round, then --rounds rounds): the floor (SHA-256 of every input plus pyarrow's CSV reader on
every prediction file), `gpu-audit check`, `gpu-audit build`, and the peer (`frictionless validate` of one
prediction file against an equivalent Table Schema, times 18). Prints a table and one JSON line with the
ratios check/floor, build/floor, peer/check and the peak RSS of build. Not part of the default test run.
"""

from __future__ import annotations

import argparse
import compileall
import functools
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

SEED = 20261129
CLASSES = ["admin", "games", "graphics", "net", "science", "sound", "text", "utils"]
VARIANTS = [("b1", 1), ("b4", 4), ("b8", 8)]
# The grid's columns come from their single source, the schema.
GRID_SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "raw-results-row.schema.json"
GRID_COLUMNS = json.loads(GRID_SCHEMA.read_text())["x-csv-columns"]
SYNTHETIC = "SYNTHETIC benchmark data (tests/benchmarks/bench_build.py); not a measurement"
PACKAGE = Path(__file__).resolve().parents[2] / "generator"


def compile_package() -> None:
    """Byte-compile the checkout's package, as `pip install` does for an installed one: with
    PYTHONDONTWRITEBYTECODE set (as on these machines) every timed command would otherwise compile some 60
    modules from source again, a tenth of a second the floor, which imports only pyarrow, never pays."""
    compileall.compile_dir(PACKAGE, quiet=1)


def make_campaign(root: Path, n: int, seed: int = SEED, distinct: bool = False) -> dict[str, int]:
    """Write a large synthetic campaign with planted defects; returns the planted counts.

    Repeated runs write the same predictions, as a deterministic model does, unless `distinct`: then every
    run changes a few labels of its own (one in a thousand), as nondeterministic kernels can.
    """
    rng = random.Random(seed)
    root.mkdir(parents=True)
    ids = [f"doc-{i:08d}" for i in range(n)]
    truth = [CLASSES[rng.randrange(len(CLASSES))] for _ in range(n)]
    (root / "expected-ids.csv").write_text("id\n" + "\n".join(ids) + "\n", encoding="utf-8")
    reference = "\n".join(f"{i},{t}" for i, t in zip(ids, truth, strict=True))
    (root / "reference.csv").write_text("id,label\n" + reference + "\n", encoding="utf-8")
    (root / "tarifs-forfaits.csv").write_text(
        "gpu,model_name,duration_days,price_per_lot_usd_minor,gpus_per_lot,snapshot_date,price_status\n"
        "rtx-4090,GeForce RTX 4090,7,11000,1,2026-09-24,published\n", encoding="utf-8")
    base = [t if rng.random() > 0.1 else CLASSES[rng.randrange(len(CLASSES))] for t in truth]
    planted = {"duplicate": 0, "unknown_label": 0, "shuffled": 0, "failed": 0}
    rows = []
    (root / "measurements").mkdir()
    for variant, batch in VARIANTS:
        phases = []
        for phase, run in [("cold", 1)] + [("warm", r) for r in range(1, 6)]:
            pairs = list(zip(ids, base, strict=True))
            if distinct:
                for j in rng.sample(range(n), max(1, n // 1000)):
                    label = CLASSES[(CLASSES.index(pairs[j][1]) + 1 + rng.randrange(len(CLASSES) - 1)) % len(CLASSES)]
                    pairs[j] = (pairs[j][0], label)
            notes = SYNTHETIC
            observed, ids_match, fmt = n, "true", "true"
            elapsed = f"{rng.uniform(50, 60) / batch:.3f}"
            if (variant, phase, run) == ("b4", "warm", 2):  # a duplicate hides a missing ID; the row claims a match
                pairs[n // 2] = pairs[n // 2 + 1]
                planted["duplicate"] += 1
            if (variant, phase, run) == ("b1", "warm", 3):  # a label outside the classes, honestly reported
                pairs[n // 3] = (pairs[n // 3][0], "kernel")
                fmt = "false"
                planted["unknown_label"] += 1
            if (variant, phase, run) == ("b8", "warm", 4):  # out of order, still correct
                rng.shuffle(pairs)
                planted["shuffled"] += 1
            if (variant, phase, run) == ("b8", "warm", 5):  # out of memory after 40 % of the corpus
                pairs = pairs[: (2 * n) // 5]
                observed, ids_match, elapsed = len(pairs), "false", ""
                notes += f"; outcome=oom; completed={len(pairs)}"
                planted["failed"] += 1
            path = root / "predictions" / "bench" / variant / f"{phase}-{run}.csv"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("id,label\n" + "\n".join(f"{i},{lab}" for i, lab in pairs) + "\n", encoding="utf-8")
            mem = (268435456, 270532608, 268435456 + batch * 2**30, 268435456 + batch * 2**30 + 2**28)
            phases.append((phase, run, mem, elapsed == ""))
            rows.append(["bench", variant, "bench-corpus-r1", "synthetic-model-r1", "synthetic-tok-r1", 1,
                         "NVIDIA GeForce RTX 4090", 1, "cuda:0", "570.86.15", "3.12.3", "2.11.0+cu128", "12.8",
                         "bfloat16", batch, 512, phase, run, 2 if phase == "warm" else 0, n, observed, ids_match, fmt,
                         "macro_f1", 0.8, 0.05, "", "", elapsed, *mem, 7, 1, 11000, "", notes])
        doc = {"schema_version": "1", "tool": "bench_build.py (synthetic)", "synthetic_data": True,
               "run": {"experiment_id": "bench", "variant_id": variant},
               "environment": {"python_version": "3.12.3", "torch_version": "2.11.0+cu128", "runtime": "cuda",
                               "runtime_version": "12.8", "driver_version": "570.86.15", "device": "cuda:0",
                               "gpu_available": True, "gpu_name": "NVIDIA GeForce RTX 4090",
                               "gpu_total_memory_bytes": 24 * 2**30, "visible_device_count": 1, "devices_used": 1},
               "configuration": {"device": "cuda:0", "batch": batch, "context": 512, "dtype": "bfloat16",
                                 "warmup": 2, "repeats": 5},
               "model": {"name": "synthetic benchmark classifier"},
               "phases": [_phase("model_load", None, (0, 0, 268435456, 270532608)),
                          _phase("inputs", None, (268435456, 270532608, 268435456, 270532608)),
                          _phase("cold_forward", None, phases[0][2]), _phase("warmup", None, phases[0][2], 2)]
               + [_phase("warm_forward", r, mem, failed=failed) for (_, r, mem, failed) in phases[1:]]}
        (root / "measurements" / f"{variant}.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
    with (root / "resultats-bruts.csv").open("w", encoding="utf-8", newline="") as fh:
        import csv

        w = csv.writer(fh, lineterminator="\n")
        w.writerow(GRID_COLUMNS)
        w.writerows(rows)
    protocol = {
        "schema_version": "1", "title": "Benchmark campaign (SYNTHETIC)", "question": "Which batch is cheapest?",
        "scenario": "offline-corpus", "registered_at": "2026-10-01T09:00:00+00:00", "synthetic_data": True,
        "notes": SYNTHETIC, "corpus": {"name": "bench", "revision": "bench-corpus-r1", "size": n},
        "classes": CLASSES, "output_format": {"columns": ["id", "label"], "encoding": "utf-8", "delimiter": ","},
        "quality": {"metric": "macro_f1", "threshold": 0.8, "tolerance": 0.05, "direction": "higher_is_better",
                    "reference": {"name": "synthetic reference", "value": 0.85}},
        "experiments": [{"id": "bench", "variable": "batch",
                         "variants": [{"id": v, "value": b, "measurement": f"measurements/{v}.json"}
                                      for v, b in VARIANTS],
                         "fixed": {"corpus_revision": "bench-corpus-r1", "input_order": "expected-ids.csv order",
                                   "model_revision": "synthetic-model-r1", "tokenizer_revision": "synthetic-tok-r1",
                                   "precision": "bfloat16", "context": 512, "padding": "longest",
                                   "truncation": "none", "seed": 1},
                         "runs_per_variant": 5, "cold_runs_per_variant": 1, "order": "rotated",
                         "warmup": {"iterations": 2, "inputs": "first 64 texts"},
                         "rental": {"gpu": "rtx-4090", "duration_days": 7, "lots": 1}}],
        "timer": {"covers": ["read_corpus", "inference", "materialize_predictions"], "description": "synthetic"},
        "window": {"start": "2026-10-05T09:00", "end": "2026-10-09T09:00", "timezone": "UTC"},
        "deadline": "2026-10-09T18:00",
        "files": {"expected_ids": "expected-ids.csv", "reference": "reference.csv",
                  "raw_results": "resultats-bruts.csv",
                  "tariffs": "tarifs-forfaits.csv",
                  "predictions": "predictions/{experiment_id}/{variant_id}/{phase}-{run_index}.csv"},
    }
    (root / "protocol.json").write_text(json.dumps(protocol, indent=1), encoding="utf-8")
    return planted


def _phase(name: str, repeat: int | None, mem: tuple[int, int, int, int], iterations: int = 1,
           failed: bool = False) -> dict[str, object]:
    ba, br, pa_, pr = mem
    return {"phase": name, "repeat": repeat, "iterations": iterations, "status": "failed" if failed else "ok",
            "error": "CUDA out of memory (synthetic)" if failed else None, "elapsed_seconds": None if failed else 0.5,
            "baseline_allocated_bytes": ba, "baseline_reserved_bytes": br, "final_allocated_bytes": ba,
            "final_reserved_bytes": pr, "peak_allocated_bytes": pa_, "peak_reserved_bytes": pr}


FLOOR = """
import hashlib, sys
from pathlib import Path
import pyarrow as pa, pyarrow.csv as pacsv
root = Path(sys.argv[1])
for p in sorted(root.rglob("*")):
    if p.is_file():
        h = hashlib.sha256()
        with p.open("rb") as fh:
            while b := fh.read(1 << 20):
                h.update(b)
        if p.parts[-4:-3] == ("predictions",) or "predictions" in p.parts:
            pacsv.read_csv(p)
"""

PEER_SCHEMA = {"fields": [{"name": "id", "type": "string", "constraints": {"required": True, "pattern": r"\S(.*\S)?"}},
                          {"name": "label", "type": "string", "constraints": {"required": True, "enum": CLASSES}}]}


# Starts the measured command and reports its wall seconds, exit status and peak RSS. The command is forked
# from this small process, not from the benchmark: a child forked from a large process counts the parent's
# pages in its peak RSS until it execs (after generating 3 million IDs this script holds some 840 MiB, which
# every child then reported as its own peak).
_WRAPPER = """
import os, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.Popen(sys.argv[2:], cwd=sys.argv[1] or None, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(proc.pid, 0)
print(time.perf_counter() - start, os.waitstatus_to_exitcode(status), usage.ru_maxrss,
      usage.ru_utime + usage.ru_stime)
"""


def timed(cmd: list[str], cwd: Path | None = None) -> tuple[float, int, int, float]:
    """Wall seconds, exit status, peak RSS (KiB) and processor seconds of one fresh process (started by a small
    wrapper; the processor time counts the workers it started and waited for, as Linux's wait4 does)."""
    done = subprocess.run([sys.executable, "-c", _WRAPPER, str(cwd or ""), *cmd], capture_output=True, text=True,
                          check=True)
    elapsed, code, peak, cpu = done.stdout.split()
    return float(elapsed), int(code), int(peak), float(cpu)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="expected IDs (default 1,000,000)")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds after one warm-up (default 5)")
    parser.add_argument("--no-peer", action="store_true", help="skip the frictionless peer")
    parser.add_argument("--skip-build", action="store_true", help="time only the floor and check (smoke test)")
    parser.add_argument("--keep", type=Path, help="generate the campaign here and keep it")
    parser.add_argument("--distinct", action="store_true",
                        help="every prediction file differs (a few labels each): no identical repeat to reuse")
    parser.add_argument("--sizes", help="comma-separated expected-ID counts (e.g. 100000,1000000,3000000): one row "
                        "per size with floor, check, build, verify and `sha256sum -c`, ratios, peak RSS and the "
                        "processor time build takes beyond check")
    args = parser.parse_args(argv)
    compile_package()
    if args.sizes:
        return run_sizes([int(x) for x in args.sizes.split(",")], args.rounds, args.distinct)
    work = Path(tempfile.mkdtemp(prefix="gpu-audit-bench-"))
    py = sys.executable
    try:
        campaign = args.keep or work / "campaign"
        t0 = time.perf_counter()
        planted = make_campaign(campaign, args.n, distinct=args.distinct)
        print(f"generated N={args.n:,} in {time.perf_counter() - t0:.1f} s: {planted}", file=sys.stderr)
        keys = work / "keys"
        subprocess.run([py, "-m", "generator", "keygen", str(keys)], check=True, stdout=subprocess.DEVNULL)
        peer = None
        if not args.no_peer:
            try:
                import frictionless  # noqa: F401

                (work / "schema.json").write_text(json.dumps(PEER_SCHEMA))
                # frictionless refuses absolute paths as unsafe: give it the folder as basepath
                peer = [py, "-c", "import json, sys, frictionless as f; r = f.Resource(path=sys.argv[2], "
                        "basepath=sys.argv[1], schema=f.Schema.from_descriptor(json.load(open(sys.argv[3])))"
                        ").validate(); assert r.tasks[0].stats['rows'] > 0, r.flatten(['type', 'note'])",
                        str(campaign / "predictions/bench/b1"), "warm-1.csv", str(work / "schema.json")]
            except ImportError:
                print("frictionless not installed: no peer (pip install frictionless)", file=sys.stderr)
        commands = {
            "floor": lambda i: [py, "-c", FLOOR, str(campaign)],
            "check": lambda i: [py, "-m", "generator", "check", str(campaign)],
            "build": lambda i: [py, "-m", "generator", "build", str(campaign), "-o", str(work / f"bundle-{i}"),
                                "--key", str(keys / "signer-key.pem"), "--cert", str(keys / "signer.pem"), "--quiet"],
        }
        if peer:
            commands["peer"] = lambda i: peer
        if args.skip_build:
            del commands["build"]
        results: dict[str, list[float]] = {k: [] for k in commands}
        rss: list[int] = []
        names = list(commands)
        for rnd in range(args.rounds + 1):
            order = names[rnd % len(names):] + names[: rnd % len(names)]  # alternate who goes first
            for name in order:
                seconds, code, peak, _ = timed(commands[name](rnd))
                if (name in ("check", "build") and code not in (0, 1)) or (name in ("floor", "peer") and code):
                    raise SystemExit(f"{name} failed with exit status {code}")
                if name == "build":
                    shutil.rmtree(work / f"bundle-{rnd}", ignore_errors=True)
                if rnd == 0:
                    continue  # warm-up: page cache and imports
                results[name].append(seconds * (18 if name == "peer" else 1))
                if name == "build":
                    rss.append(peak)
        print(f"{'what':<8}{'median s':>10}{'min s':>10}{'max s':>10}")
        for name, values in results.items():
            print(f"{name:<8}{statistics.median(values):>10.2f}{min(values):>10.2f}{max(values):>10.2f}")
        med = {k: statistics.median(v) for k, v in results.items()}
        summary = {"n": args.n, "rounds": args.rounds, "distinct_files": args.distinct,
                   "check_over_floor": round(med["check"] / med["floor"], 2),
                   "build_over_floor": round(med["build"] / med["floor"], 2) if "build" in med else None,
                   "peer_over_check": round(med["peer"] / med["check"], 1) if "peer" in med else None,
                   "build_peak_rss_mib": round(max(rss) / 1024, 1) if rss else None,
                   "medians_s": {k: round(v, 3) for k, v in med.items()}}
        print(json.dumps(summary))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


# docs/performance.md: the documented bound on the peak RSS of `check` and `build` with 19-byte rows, which each
# size's row is checked against (and `tests/test_bounded_memory.py` at 200,000 IDs).
MEMORY_BASE_MIB = 256
MEMORY_BYTES_PER_ID = 150


def memory_bound_mib(n: int) -> float:
    """The documented peak: MEMORY_BASE_MIB plus MEMORY_BYTES_PER_ID bytes per expected ID."""
    return MEMORY_BASE_MIB + MEMORY_BYTES_PER_ID * n / 2**20


def _fit(sizes: list[float], peaks: list[float]) -> dict[str, float] | None:
    """Least-squares A + B x IDs through the measured peaks (MiB, bytes per ID); None below two sizes."""
    if len(set(sizes)) < 2:
        return None
    slope, intercept = statistics.linear_regression(sizes, peaks)
    return {"base_mib": round(intercept, 1), "bytes_per_id": round(slope * 2**20, 1)}


def _median_run(cmd: list[str], rounds: int, cwd: Path | None = None, accept: tuple[int, ...] = (0,),
                before: Callable[[int], None] | None = None) -> tuple[float, float, float]:
    """Median wall seconds, the largest peak RSS (MiB) and the median processor seconds of `rounds` fresh runs,
    after one warm-up run.

    Each run starts with nothing left to write back (os.sync): a build leaves its copies of the inputs in
    the page cache (1.1 GB at 3,000,000 IDs), and the command timed next would otherwise pay for writing
    them out (at 3,000,000 IDs, 6.4 s for a build that takes 5.6 s on a quiet disk).
    """
    seconds, peaks, cpus = [], [], []
    for rnd in range(rounds + 1):
        if before is not None:
            before(rnd)
        os.sync()
        elapsed, code, peak, cpu = timed(cmd if before is None else [c.replace("{i}", str(rnd)) for c in cmd], cwd)
        if code not in accept:
            raise SystemExit(f"{' '.join(cmd)} failed with exit status {code}")
        if rnd:
            seconds.append(elapsed)
            peaks.append(peak / 1024)
            cpus.append(cpu)
    return statistics.median(seconds), max(peaks), statistics.median(cpus)


def _remove_bundles(work: Path, _round: int = 0) -> None:
    """Remove the bundles of the rounds before (`_round`: the round about to run, as `before` is given it): each
    build writes a new one, and none is timed beside another."""
    for bundle in work.glob("bundle-[0-9]*"):
        shutil.rmtree(bundle, ignore_errors=True)


def run_sizes(sizes: list[int], rounds: int, distinct: bool) -> int:
    """One row per size: floor, check, build, verify and `sha256sum -c` (the verify floor) in fresh processes,
    the ratios the targets use, and the peak RSS of check and build. The JSON line carries every size."""
    py = sys.executable
    rows = []
    print(f"{'IDs':>10}{'floor s':>9}{'check s':>9}{'x':>7}{'build s':>9}{'x':>7}{'verify s':>9}{'sha256 s':>9}"
          f"{'x':>8}{'check MiB':>10}{'build MiB':>10}{'bound MiB':>10}{'build-check cpu s':>18}")
    for n in sizes:
        work = Path(tempfile.mkdtemp(prefix="gpu-audit-bench-"))
        try:
            campaign, keys = work / "campaign", work / "keys"
            make_campaign(campaign, n, distinct=distinct)
            subprocess.run([py, "-m", "generator", "keygen", str(keys)], check=True, stdout=subprocess.DEVNULL)
            floor, _, _ = _median_run([py, "-c", FLOOR, str(campaign)], rounds)
            check, check_rss, check_cpu = _median_run([py, "-m", "generator", "check", str(campaign)], rounds,
                                                      accept=(0, 1))

            build, build_rss, build_cpu = _median_run([py, "-m", "generator", "build", str(campaign), "-o",
                                            str(work / "bundle-{i}"), "--key", str(keys / "signer-key.pem"),
                                            "--cert", str(keys / "signer.pem"), "--quiet"], rounds, accept=(0, 1),
                                           before=functools.partial(_remove_bundles, work))
            _remove_bundles(work)
            bundle = work / "bundle-verify"
            subprocess.run([py, "-m", "generator", "build", str(campaign), "-o", str(bundle), "--key",
                            str(keys / "signer-key.pem"), "--cert", str(keys / "signer.pem"), "--quiet"],
                           check=False, stdout=subprocess.DEVNULL)
            verify, _, _ = _median_run([py, "-m", "generator", "verify", str(bundle), "--trust",
                                        str(keys / "signer.pem")], rounds)
            sums, _, _ = _median_run(["sha256sum", "-c", "--quiet", "manifest-sha256.txt"], rounds, cwd=bundle)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        row = {"n": n, "floor_s": round(floor, 3), "check_s": round(check, 3), "build_s": round(build, 3),
               "verify_s": round(verify, 3), "sha256sum_s": round(sums, 3), "check_cpu_s": round(check_cpu, 3),
               "build_cpu_s": round(build_cpu, 3), "build_minus_check_cpu_s": round(build_cpu - check_cpu, 3),
               "check_over_floor": round(check / floor, 2), "build_over_floor": round(build / floor, 2),
               "verify_over_sha256sum": round(verify / sums, 2), "check_peak_rss_mib": round(check_rss, 1),
               "build_peak_rss_mib": round(build_rss, 1), "memory_bound_mib": round(memory_bound_mib(n), 1),
               "within_memory_bound": max(check_rss, build_rss) <= memory_bound_mib(n)}
        rows.append(row)
        print(f"{n:>10,}{floor:>9.2f}{check:>9.2f}{row['check_over_floor']:>7.2f}{build:>9.2f}"
              f"{row['build_over_floor']:>7.2f}{verify:>9.2f}{sums:>9.2f}{row['verify_over_sha256sum']:>8.2f}"
              f"{check_rss:>10.0f}{build_rss:>10.0f}{memory_bound_mib(n):>9.0f}"
              f"{'' if row['within_memory_bound'] else '!':1}{build_cpu - check_cpu:>17.2f}", flush=True)
    ns = [float(r["n"]) for r in rows]
    fits = {"check": _fit(ns, [r["check_peak_rss_mib"] for r in rows]),
            "build": _fit(ns, [r["build_peak_rss_mib"] for r in rows])}
    for what, fit in fits.items():
        if fit is not None:
            print(f"{what} peak RSS ~ {fit['base_mib']:.0f} MiB + {fit['bytes_per_id']:.0f} bytes x IDs (least "
                  f"squares; documented bound: {MEMORY_BASE_MIB} MiB + {MEMORY_BYTES_PER_ID} bytes x IDs)")
    print(json.dumps({"rounds": rounds, "distinct_files": distinct, "sizes": rows, "memory_fit": fits,
                      "memory_bound": {"base_mib": MEMORY_BASE_MIB, "bytes_per_id": MEMORY_BYTES_PER_ID}}))
    return 0 if all(r["within_memory_bound"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
