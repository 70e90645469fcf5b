"""A command in a fresh process, measured by the work it did (processor seconds, peak memory), never by the
wall clock, which a busy machine stretches."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# A small wrapper starts the command and reaps it with wait4: its rusage counts the command and the workers it
# reaped, and nothing of the test process (a child forked from it would inherit the test's own peak). The
# address-space cap is set in the wrapper's child before exec (the wrapper has one thread: no preexec hazard).
_WRAPPER = """
import json, os, resource, subprocess, sys
cap, report, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
limit = (lambda: resource.setrlimit(resource.RLIMIT_AS, (cap, cap))) if cap else None
proc = subprocess.Popen(argv, preexec_fn=limit)
_, status, usage = os.wait4(proc.pid, 0)
with open(report, "w") as fh:
    json.dump({"status": os.waitstatus_to_exitcode(status), "cpu": usage.ru_utime + usage.ru_stime,
               "peak_kib": usage.ru_maxrss}, fh)
"""


@dataclass(frozen=True)
class Measured:
    returncode: int
    out: str  # stdout and stderr, in the order written
    cpu_seconds: float  # user and system time of the command and the workers it waited for
    peak_bytes: int  # the largest resident set of the command or of one of its workers


def gpu_audit(*argv: str, cwd: Path, address_space: int = 0, timeout: float = 600) -> Measured:
    """`python -m generator ARGV` in a fresh process, optionally under an address-space cap (bytes).
    `timeout` is a hang guard only; bound the work with `cpu_seconds`."""
    report = cwd / "measured.json"
    report.unlink(missing_ok=True)
    command = [sys.executable, "-c", _WRAPPER, str(address_space), str(report), sys.executable, "-m", "generator",
               *argv]
    proc = subprocess.run(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False,
                          timeout=timeout)
    out = proc.stdout.decode("utf-8", "replace")
    assert report.exists(), out[-3000:]
    usage = json.loads(report.read_text())
    return Measured(usage["status"], out, usage["cpu"], usage["peak_kib"] * 1024)


def processor_seconds() -> float:
    """User and system time of this process and of the children it has waited for (a note parsed in a child)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
