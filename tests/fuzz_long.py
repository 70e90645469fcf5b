"""The long fuzzing run (not collected by pytest): hostile campaigns, bundles and zips for N minutes.

    python tests/fuzz_long.py --minutes 20             # the documented run (docs/security.md, limits)
    python tests/fuzz_long.py --replay 123456789       # one input again, by the seed it printed

Each input is a copy of inputs/example (or of a signed bundle of it, or a zip of that) damaged by 1 to 3
mutations from tests/fuzz/mutators.py, driven by `random.Random(seed)`; so every input is reproducible from
its seed. Campaigns go through `validate` and `check` (and, now and then, `build --unsigned`, whose bundle
must then verify), bundles and zips through `verify`. The property is the CI suite's (tests/fuzz/harness.py):
exit 0, 1 or 2 with a message, within a time bound, no uncaught exception, nothing from outside the folder
shown, no network, inputs unchanged. A failing input is saved as a case folder (the format of tests/fuzz/cases/)
under --found, and the run goes on. Crashes already reported in files others own (harness.KNOWN_BUGS) are
counted apart. At the end it prints the inputs tried, the commands run and the failures; exit 1 if any.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent))

from fuzz import harness, mutators  # noqa: E402

KINDS = (("campaign", 0.62), ("bundle", 0.2), ("zip", 0.18))
BUILD_EVERY = 150  # one campaign input in this many is also built (a build takes seconds)


def _kind(rng: random.Random) -> str:
    r = rng.random()
    for kind, weight in KINDS:
        if r < weight:
            return kind
        r -= weight
    return KINDS[-1][0]


def reset_peak_rss() -> None:
    """Start a new peak: Linux resets this process's VmHWM when 5 is written to clear_refs."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def peak_rss_mib() -> int | None:
    """This process's peak resident memory since the last reset, in MiB (None where /proc is not there)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024
    except OSError:
        return None
    return None


def one_input(seed: int, index: int, found: Path, stats: collections.Counter, failures: list[str],
              known: collections.Counter, verbose: bool = False, max_rss_mib: int = 1024) -> None:
    """Make the input of `seed`, run its commands, record what went wrong."""
    rng = random.Random(seed)
    kind = _kind(rng)
    stats[f"inputs:{kind}"] += 1
    with harness.scratch() as work:
        mutators.plant_outside(work)
        if kind == "campaign":
            root = harness.fresh_campaign(work)
            base = harness.EXAMPLE
            what = mutators.mutate_campaign(rng, root)
            commands = [["validate", str(root)], ["check", str(root)]]
            if rng.random() < 0.2:
                commands.append(["validate", "--json", str(root)])
            if stats["inputs:campaign"] % BUILD_EVERY == 1:
                commands.append(["build", str(root), "-o", str(work / "out"), "--unsigned", "--quiet"])
        else:
            eb = harness.example_bundle()
            root = eb.copy(work)
            base = eb.path
            what = [mutators.mutate_bundle(rng, root, eb.resign) for _ in range(rng.choice([1, 1, 2, 3]))]
            if kind == "zip":
                z = work / "bundle.zip"
                what.append(mutators.zip_folder(rng, root, z))
                if rng.random() < 0.85:
                    what.append(mutators.mutate_zip(rng, z))
                root = z
            extra = rng.choice([[], [], ["--trust", str(eb.cert)], ["--allow-unsigned"], ["--max-findings", "3"]])
            commands = [["verify", str(root), *extra]]
        for argv in commands:
            stats[f"commands:{argv[0]}"] += 1
            reset_peak_rss()
            o, problems = harness.check_command(argv, [root, work / "outside"])
            peak = peak_rss_mib()
            if peak is not None and peak > max_rss_mib:
                problems = [*problems, f"peak RSS {peak} MiB exceeds the cap of {max_rss_mib} MiB"]
            if not problems and argv[0] == "build" and o.code in (0, 1):
                v = harness.run_main(["verify", str(work / "out"), "--allow-unsigned"])
                stats["commands:verify-built"] += 1
                if v.code != 0 or v.crash:
                    problems = [f"the bundle built from this input does not verify: {v.out[-500:]}{v.crash or ''}"]
            if not problems:
                stats[f"exit:{argv[0]}:{o.code}"] += 1
                continue
            bug = harness.known_bug(o, problems)
            if bug is not None:
                known[bug] += 1
                continue
            name = f"{kind}-{argv[0]}-{seed}"
            failures.append(f"seed {seed}: {name}\n" + harness.describe(o, what, problems)[:4000])
            print(failures[-1], flush=True)
            if kind != "zip":
                harness.save_case(found / name, base, root, kind=kind,
                                  command=[a.replace(str(root), "{root}").replace(str(work), "{work}") for a in argv],
                                  note=f"seed {seed}: {what}")
            else:
                (found / name / "files").mkdir(parents=True, exist_ok=True)
                (found / name / "files" / "bundle.zip").write_bytes(Path(root).read_bytes())
                (found / name / "case.json").write_text(
                    json.dumps({"kind": "zip", "commands": [["verify", "{root}"]], "expect": [0, 1, 2],
                                "note": f"seed {seed}"}) + "\n")
            if verbose:
                print(f"saved {found / name}", flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Long fuzzing run of gpu-audit's loaders, check and verify.")
    p.add_argument("--minutes", type=float, default=20.0, help="how long to run (default 20)")
    p.add_argument("--seed", type=int, default=None, help="base seed (default: from the clock; printed)")
    p.add_argument("--found", default=os.environ.get("TMPDIR", "/tmp") + "/gpu-audit-fuzz-found",
                   help="folder for the failing inputs (case folders)")
    p.add_argument("--replay", type=int, default=None, metavar="SEED", help="run the one input of this seed")
    p.add_argument("--progress", type=float, default=60.0, help="seconds between progress lines (default 60)")
    p.add_argument("--max-rss-mib", type=int, default=1024,
                   help="peak resident memory a command may reach, in MiB; above it is a failure (default 1024)")
    args = p.parse_args(argv)
    found = Path(args.found)
    stats: collections.Counter = collections.Counter()
    known: collections.Counter = collections.Counter()
    failures: list[str] = []
    harness_errors: list[str] = []  # a mutator or the harness itself failed: not a finding about gpu-audit
    start = time.monotonic()
    if args.replay is not None:
        one_input(args.replay, 0, found, stats, failures, known, verbose=True, max_rss_mib=args.max_rss_mib)
        print(dict(stats), dict(known))
        return 1 if failures else 0
    base = args.seed if args.seed is not None else int(time.time())
    print(f"gpu-audit long fuzz: {args.minutes} min, base seed {base}, RSS cap {args.max_rss_mib} MiB per command, "
          f"failing inputs saved under {found}", flush=True)
    harness.example_bundle()  # built once, before the clock matters
    deadline = start + args.minutes * 60
    index = 0
    last = start
    while time.monotonic() < deadline:
        seed = base * 1_000_003 + index
        try:
            one_input(seed, index, found, stats, failures, known, max_rss_mib=args.max_rss_mib)
        except Exception as exc:  # noqa: BLE001 - a harness problem must not end the run silently
            harness_errors.append(f"seed {seed}: harness error {type(exc).__name__}: {exc}")
            print(harness_errors[-1], flush=True)
        index += 1
        if time.monotonic() - last >= args.progress:
            last = time.monotonic()
            print(f"[{(last - start) / 60:5.1f} min] inputs {index}, failures {len(failures)}, "
                  f"known bugs hit {sum(known.values())}, harness errors {len(harness_errors)}", flush=True)
    minutes = (time.monotonic() - start) / 60
    commands = sum(v for k, v in stats.items() if k.startswith("commands:"))
    print("=" * 72)
    print(f"inputs tried: {index} in {minutes:.1f} min (base seed {base}); commands run: {commands}")
    def counts(prefix: str) -> str:
        return ", ".join(f"{k.split(':', 1)[1]} {v}" for k, v in sorted(stats.items()) if k.startswith(prefix))

    print("by kind: " + counts("inputs:"))
    print("commands: " + counts("commands:"))
    print("exit statuses: " + counts("exit:"))
    print(f"known bugs hit (reported, in files others own): {sum(known.values())}")
    for bug, n in known.most_common():
        print(f"  {n} x {bug}")
    print(f"failures: {len(failures)}")
    for f in failures:
        print("  " + f.splitlines()[0])
    print(f"harness errors (the fuzzer's own, not gpu-audit's): {len(harness_errors)}")
    for f in harness_errors:
        print("  " + f)
    return 1 if failures or harness_errors else 0


if __name__ == "__main__":
    sys.exit(main())
