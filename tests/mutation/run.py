"""The mutation command: each one-line bug in the decision code, run against the tests that cover its line."""

from __future__ import annotations

import argparse
import ast
import functools
import hashlib
import json
import shutil
import subprocess
import sys
import threading
import time
import tomllib
from collections import Counter, defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from operators import Mutant, mutants

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
WORK = REPO / ".mutation"
CONFIG = tomllib.loads((HERE / "config.toml").read_text())
EQUIVALENT = tomllib.loads((HERE / "equivalent.toml").read_text())
_IGNORE = shutil.ignore_patterns(".git", ".venv", ".mutation", "__pycache__", ".hypothesis", ".mypy_cache",
                                 ".ruff_cache", ".pytest_cache", "out", "build")


def modules(only: list[str]) -> list[str]:
    """The configured modules (folders expand to their modules, sub-packages too), or those of `only` that are
    configured."""
    found: list[str] = []
    for entry in CONFIG["modules"]:
        path = REPO / entry
        found += [str(p.relative_to(REPO)) for p in sorted(path.rglob("*.py"))
                  if p.name != "__init__.py" and "__pycache__" not in p.parts] if path.is_dir() else [entry]
    return [m for m in found if not only or any(m.startswith(o) for o in only)]


def all_mutants(only: list[str]) -> Iterator[Mutant]:
    for module in modules(only):
        yield from mutants(module, (REPO / module).read_text())


def map_lines(extra: list[str]) -> int:
    """Run the suite (or the `extra` test files) under coverage, one context per test: which tests reach each line."""
    WORK.mkdir(exist_ok=True)
    sources = sorted({str(Path(m).parent) for m in modules([])})
    data = WORK / ("coverage-extra.db" if extra else "coverage.db")
    junit = WORK / ("junit-extra.xml" if extra else "junit.xml")
    command = [sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider", "--cov-context=test",
               "--cov-report=", f"--junitxml={junit}", *[f"--cov={s}" for s in sources], *extra]
    env = {**__import__("os").environ, "COVERAGE_FILE": str(data)}
    code = subprocess.run(command, cwd=REPO, env=env, check=False).returncode
    lines = _read_map(data)
    durations = _read_durations(junit)
    target = WORK / "lines.json"
    made_from = _sources()
    if extra and target.exists():
        old = json.loads(target.read_text())
        made_from = old.get("sources", {})  # the added tests' lines join a map made from these sources
        for module, by_line in lines.items():
            for line, tests in by_line.items():
                old["lines"].setdefault(module, {}).setdefault(line, [])
                old["lines"][module][line] = sorted(set(old["lines"][module][line]) | set(tests))
        old["durations"].update(durations)
        lines, durations = old["lines"], old["durations"]
    target.write_text(json.dumps({"lines": lines, "durations": durations, "sources": made_from}, sort_keys=True))
    return code


def _sources() -> dict[str, str]:
    """Each mutated module's SHA-256: the map's line numbers hold only for the sources it was made from."""
    return {m: hashlib.sha256((REPO / m).read_bytes()).hexdigest() for m in modules([])}


class StaleMapError(Exception):
    """The coverage map was made from other sources than the modules to mutate."""


def stale(mapping: dict[str, Any], only: list[str]) -> list[str]:
    """The modules changed since the map was made (all of them for a map that records no sources)."""
    made = mapping.get("sources", {})
    now = _sources()
    return [m for m in modules(only) if made.get(m) != now[m]]


def _read_map(data: Path) -> dict[str, dict[str, list[str]]]:
    from coverage import CoverageData

    covered = CoverageData(basename=str(data))
    covered.read()
    lines: dict[str, dict[str, list[str]]] = {}
    for filename in covered.measured_files():
        module = str(Path(filename).resolve().relative_to(REPO))
        by_line = covered.contexts_by_lineno(filename)
        lines[module] = {str(n): sorted({c.split("|")[0] for c in ctx if c}) for n, ctx in by_line.items()}
    return lines


def _read_durations(junit: Path) -> dict[str, float]:
    durations: dict[str, float] = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        durations[f"{classname}::{name}"] = float(case.get("time", "0") or 0)
    return durations


def _junit_name(nodeid: str) -> str:
    path, _, rest = nodeid.partition("::")
    parts = rest.split("::")
    return ".".join([path.removesuffix(".py").replace("/", "."), *parts[:-1]]) + "::" + parts[-1]


def tests_for(mutant: Mutant, mapping: dict[str, Any]) -> list[str]:
    """The tests that reach the mutated line (in-process), fastest first; else the module's configured fallback."""
    durations: dict[str, float] = mapping["durations"]
    by_line: dict[str, list[str]] = mapping["lines"].get(mutant.module, {})
    last = mutant.line + mutant.old.count("\n")
    tests = sorted({t for n in range(mutant.line, last + 1) for t in by_line.get(str(n), [])})
    if not tests:
        # a line run at import (a module constant): the tests that reach the lines reading the name it binds
        readers = _readers(mutant.module).get(mutant.line, set())
        tests = sorted({t for n in readers for t in by_line.get(str(n), [])})
        if not tests:
            # a constant read only where another module imports it: the tests that reach those readers
            tests = sorted({t for other, n in _imported_readers(mutant.module, mutant.line)
                            for line in {n} | _readers(other).get(n, set())
                            for t in mapping["lines"].get(other, {}).get(str(line), [])})
        tests += [t for t in CONFIG.get("fallback", {}).get(mutant.module, []) if t not in tests]
    # the most specific tests first (those reaching fewest lines: a unit test before a whole campaign's check),
    # the faster of two alike first
    reach = _reach(id(mapping), mapping)
    return sorted(tests, key=lambda t: (reach.get(t, 0) // 200, durations.get(_junit_name(t), 1.0), t))


_REACH: dict[int, dict[str, int]] = {}


def _reach(key: int, mapping: dict[str, Any]) -> dict[str, int]:
    """How many lines of the mutated modules each test reaches."""
    if key not in _REACH:
        counts: Counter[str] = Counter()
        for by_line in mapping["lines"].values():
            for tests in by_line.values():
                counts.update(tests)
        _REACH[key] = dict(counts)
    return _REACH[key]


@functools.cache
def _readers(module: str) -> dict[int, set[int]]:
    """For each line of a module-level assignment: the lines of the module that read a name it binds."""
    tree = ast.parse((REPO / module).read_text())
    loads: dict[str, set[int]] = defaultdict(set)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loads[node.id].add(node.lineno)
    readers: dict[int, set[int]] = {}
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # a default runs once at import: the tests that call the function (reach its body) use it
            body = {n.lineno for s in function.body for n in ast.walk(s) if hasattr(n, "lineno")}
            for default in [*function.args.defaults, *(d for d in function.args.kw_defaults if d)]:
                readers[default.lineno] = readers.get(default.lineno, set()) | body
    for statement in tree.body:
        if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.ClassDef)):
            # a class's defaults and field list run at import too: the tests that use the class reach them
            targets = statement.targets if isinstance(statement, ast.Assign) else [] \
                if isinstance(statement, ast.ClassDef) else [statement.target]
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            if isinstance(statement, ast.ClassDef):
                names = {statement.name}
            lines = {n for name in names for n in loads[name]}
            for line in range(statement.lineno, (statement.end_lineno or statement.lineno) + 1):
                readers[line] = readers.get(line, set()) | \
                    (lines - set(range(statement.lineno, (statement.end_lineno or 0) + 1)))
    return readers


@functools.cache
def _bound(module: str) -> dict[int, frozenset[str]]:
    """For each line of a module-level assignment: the names it binds."""
    bound: dict[int, frozenset[str]] = {}
    for statement in ast.parse((REPO / module).read_text()).body:
        if isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names = frozenset(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
            for line in range(statement.lineno, (statement.end_lineno or statement.lineno) + 1):
                bound[line] = names
    return bound


def _imported_readers(module: str, line: int) -> set[tuple[str, int]]:
    """(module, line) of each line in the package's other modules reading a name bound at `line` by import."""
    names = _bound(module).get(line, frozenset())
    dotted = module.removesuffix(".py").replace("/", ".")
    found: set[tuple[str, int]] = set()
    for other in sorted(str(p.relative_to(REPO)) for p in (REPO / "generator").rglob("*.py")) if names else []:
        tree = ast.parse((REPO / other).read_text())
        imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == dotted
                    for a in n.names if a.name in names}
        found |= {(other, n.lineno) for n in ast.walk(tree)
                  if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in imported}
    return found


def _copies(jobs: int) -> list[Path]:
    copies = []
    for n in range(jobs):
        copy = WORK / f"copy{n}"
        if copy.exists():
            shutil.rmtree(copy)
        shutil.copytree(REPO, copy, symlinks=True, ignore=_IGNORE)
        copies.append(copy)
    return copies


def run(only: list[str], jobs: int, timeout: float, keys: set[str] | None,
        first: int | None) -> dict[str, dict[str, object]]:
    mapping = json.loads((WORK / "lines.json").read_text())
    changed = stale(mapping, only)
    if changed:
        # a line number read from a map of other sources picks the wrong tests: a mutant then "survives"
        raise StaleMapError(f"the coverage map is older than {', '.join(changed)}: run `map` again first")
    results_file = WORK / "results.json"
    results: dict[str, dict[str, object]] = json.loads(results_file.read_text()) if results_file.exists() else {}
    # without --open, a run goes on where the last one stopped: the mutants with no result yet
    todo = [m for m in all_mutants(only) if m.key not in EQUIVALENT
            and (m.key in keys if keys is not None else m.key not in results)]
    lock = threading.Lock()
    queue = list(reversed(todo))
    began = time.monotonic()

    def work(copy: Path) -> None:
        worker = subprocess.Popen([sys.executable, str(HERE / "worker.py"), str(copy)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, cwd=copy)
        assert worker.stdin and worker.stdout
        while True:
            with lock:
                if not queue:
                    break
                mutant = queue.pop()
            reach = tests_for(mutant, mapping)
            tests = reach[:first] if first else reach
            if not tests:
                outcome: dict[str, object] = {"exit": None, "seconds": 0, "tail": "no test reaches this line"}
            else:
                job = {"key": mutant.key, "module": mutant.module, "start": mutant.start, "end": mutant.end,
                       "new": mutant.new, "tests": tests, "timeout": timeout}
                worker.stdin.write(json.dumps(job) + "\n")
                worker.stdin.flush()
                outcome = json.loads(worker.stdout.readline())
            status = _status(outcome)
            if status == "survived" and len(tests) < len(reach):
                status = "survived-fastest"  # survived the fastest tests only: `run --open` runs them all
            outcome.update(status=status, module=mutant.module, line=mutant.line,
                           operator=mutant.operator, old=mutant.old, new=mutant.new, tests=len(tests))
            with lock:
                results[mutant.key] = outcome
                done = len(todo) - len(queue)
                if outcome["status"] != "killed":
                    print(f"[{done}/{len(todo)} {time.monotonic() - began:.0f}s] {outcome['status']}: "
                          f"{mutant.module}:{mutant.line} {mutant.old!r} -> {mutant.new!r}", flush=True)
                results_file.write_text(json.dumps(results, indent=1, sort_keys=True))
        worker.stdin.close()
        worker.wait()

    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(work, _copies(jobs)))
    results_file.write_text(json.dumps(results, indent=1, sort_keys=True))
    return results


def _status(outcome: dict[str, object]) -> str:
    code = outcome["exit"]
    if code is None:
        return "uncovered"
    if code == 0:
        return "survived"
    if code == -9:
        return "timeout"
    if code == 5:
        return "no-tests"  # the map names tests that no longer exist: map again
    return "killed"


def report(only: list[str]) -> int:
    """Per module: mutants, killed, equivalent, survived; then each survivor. Exit 1 while any survives."""
    results = json.loads((WORK / "results.json").read_text()) if (WORK / "results.json").exists() else {}
    by_module: dict[str, Counter[str]] = defaultdict(Counter)
    open_: list[tuple[str, dict[str, object]]] = []
    for mutant in all_mutants(only):
        status = "equivalent" if mutant.key in EQUIVALENT else results.get(mutant.key, {}).get("status", "not-run")
        by_module[mutant.module][status] += 1
        if status not in ("killed", "equivalent"):
            open_.append((mutant.key, {"status": status, "line": mutant.line, "old": mutant.old,
                                       "new": mutant.new}))
    total: Counter[str] = Counter()
    print(f"{'module':<48} {'mutants':>7} {'killed':>7} {'equiv.':>7} {'open':>5}")
    for module, counts in sorted(by_module.items()):
        total += counts
        still = sum(counts.values()) - counts["killed"] - counts["equivalent"]
        print(f"{module:<48} {sum(counts.values()):>7} {counts['killed']:>7} {counts['equivalent']:>7} {still:>5}")
    still = sum(total.values()) - total["killed"] - total["equivalent"]
    seconds = sum(float(r.get("seconds", 0)) for r in results.values())
    print(f"{'total':<48} {sum(total.values()):>7} {total['killed']:>7} {total['equivalent']:>7} {still:>5}"
          f"   ({seconds:.0f} s of test runs)")
    for key, info in open_:
        print(f"{info['status']}: {key} line {info['line']}: {info['old']!r} -> {info['new']!r}")
    # an equivalent whose mutant is no longer made (its code changed) is said, so the list stays true
    made = {m.key for m in all_mutants([])}
    stale = sorted(k for k in EQUIVALENT if k not in made)
    for key in stale:
        print(f"stale equivalent (no such mutant now): {key}")
    return 1 if open_ or stale else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tests/mutation/run.py", description=__doc__)
    parser.add_argument("command", choices=["map", "run", "report", "list"])
    parser.add_argument("paths", nargs="*", help="modules or folders to limit to (map: test files to add)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds one mutant's tests may take")
    parser.add_argument("--open", action="store_true", help="run only the mutants not yet killed")
    parser.add_argument("--first", type=int, help="a quick pass: run only the N fastest tests reaching each line")
    args = parser.parse_args(argv)
    if args.command == "map":
        return map_lines(args.paths)
    if args.command == "list":
        for m in all_mutants(args.paths):
            print(f"{m.key} line {m.line}: {m.old!r} -> {m.new!r}")
        return 0
    if args.command == "run":
        keys = None
        if args.open and (WORK / "results.json").exists():
            old = json.loads((WORK / "results.json").read_text())
            keys = {m.key for m in all_mutants(args.paths) if old.get(m.key, {}).get("status") != "killed"}
        try:
            run(args.paths, args.jobs, args.timeout, keys, args.first)
        except StaleMapError as exc:
            print(exc, file=sys.stderr)
            return 2
    return report(args.paths)


if __name__ == "__main__":
    sys.exit(main())
