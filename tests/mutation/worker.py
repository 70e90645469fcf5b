"""A mutation worker: keeps its own copy of the repository, applies one mutant at a time and runs its tests."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

# Imported once here so that each forked run starts warm; the package itself is imported fresh by each child.
import pytest

for _name in ("pyarrow", "pyarrow.csv", "numpy", "jsonschema", "cryptography.x509", "jinja2", "babel",
              "pyhanko.sign", "pypdf", "hypothesis", "sklearn.metrics"):
    try:
        __import__(_name)
    except ImportError:  # an optional library the tests skip without
        pass

_PYTEST = ["-x", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-o", "addopts=",
           "--disable-socket", "--allow-unix-socket", "-W", "ignore"]


def _child(copy: Path, tests: list[str], log: Path) -> None:
    os.setsid()  # its own process group: a timeout kills the CLI processes it started too
    os.chdir(copy)  # the tests' paths are relative to the repository
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    sys.path[:0] = [str(copy), str(copy / "tests")]
    os.environ["PYTHONPATH"] = str(copy)
    code = pytest.main([*_PYTEST, *tests])
    os._exit(int(code))


def _write(target: Path, source: str) -> None:
    """Write a module and drop its compiled copy: a mutant of the same size written within the same second
    would otherwise pass the byte-code cache's check (size and whole-second time) and run the other source."""
    target.write_text(source)
    for compiled in (target.parent / "__pycache__").glob(f"{target.stem}.*.pyc"):
        compiled.unlink()


def _run(copy: Path, job: dict[str, object]) -> dict[str, object]:
    target = copy / str(job["module"])
    original = target.read_text()
    source = original[:int(job["start"])] + str(job["new"]) + original[int(job["end"]):]  # type: ignore[call-overload]
    _write(target, source)
    log = copy / ".mutant.log"
    began = time.monotonic()
    try:
        pid = os.fork()
        if pid == 0:
            _child(copy, list(job["tests"]), log)  # type: ignore[call-overload]
        deadline = began + float(job["timeout"])  # type: ignore[arg-type]
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                code = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                code = -9
                break
            time.sleep(0.05)
    finally:
        _write(target, original)
    tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
    return {"key": job["key"], "exit": code, "seconds": round(time.monotonic() - began, 2), "tail": tail}


def main() -> None:
    copy = Path(sys.argv[1])
    # Each run is a fresh child: without byte-code files it would compile every package module and rewrite every
    # test module's asserts again. They are kept in the copy (the mutated module's own are dropped at each write).
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    for line in sys.stdin:
        print(json.dumps(_run(copy, json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
