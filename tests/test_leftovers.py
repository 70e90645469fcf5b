"""Leftovers of a build killed with `kill -9`: named by the next build, removed by --clean-leftovers."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import EXAMPLE, REPO

from generator.bundle.build.leftovers import find_leftovers, lock_path


def _killed_build(parent: Path) -> None:
    """Start a build into parent/bundle and kill it with SIGKILL once its temporary folder exists."""
    proc = subprocess.Popen([sys.executable, "-m", "generator", "build", str(EXAMPLE), "-o", str(parent / "bundle"),
                             "--unsigned", "--quiet"], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not any(p.name.startswith(".bundle.tmp-") for p in parent.iterdir()):
        assert proc.poll() is None and time.monotonic() < deadline, "the build ended before it could be killed"
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def test_a_killed_build_is_reported_and_cleaned(run_cli, tmp_path: Path) -> None:
    _killed_build(tmp_path)
    left = find_leftovers(tmp_path)
    names = sorted(p.name for p in left)
    assert not (tmp_path / "bundle").exists()
    assert ".bundle.gpu-audit-lock" in names and any(n.startswith(".bundle.tmp-") for n in names), names
    r = run_cli("build", str(EXAMPLE), "-o", str(tmp_path / "other"), "--unsigned", "--quiet")
    assert r.code == 0
    assert f"warning: {len(left)} leftover{'' if len(left) == 1 else 's'} of interrupted builds: " in r.err
    assert all(str(p) in r.err for p in left) and "--clean-leftovers" in r.err
    assert {p.name for p in find_leftovers(tmp_path)} == set(names)  # reporting removes nothing
    r = run_cli("build", str(EXAMPLE), "-o", str(tmp_path / "third"), "--unsigned", "--quiet", "--clean-leftovers")
    assert r.code == 0
    assert r.err.count("removed the leftover of an interrupted build: ") == len(left)
    assert find_leftovers(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other", "third"]


def test_a_running_build_is_not_a_leftover(tmp_path: Path) -> None:
    lock = lock_path(tmp_path, "bundle")
    tmp = tmp_path / ".bundle.tmp-abcd1234"
    tmp.mkdir()
    fd = os.open(lock, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running build holds it
        assert find_leftovers(tmp_path) == []
    finally:
        os.close(fd)
    assert [p.name for p in find_leftovers(tmp_path)] == [".bundle.gpu-audit-lock", ".bundle.tmp-abcd1234"]


def test_other_hidden_files_are_never_leftovers(tmp_path: Path) -> None:
    for name in (".git", ".bundle.tmp-short", ".notes.txt", "bundle.partial"):
        (tmp_path / name).mkdir()
    (tmp_path / ".x.gpu-audit-lock").mkdir()  # a folder under a lock's name is not gpu-audit's
    assert find_leftovers(tmp_path) == []
