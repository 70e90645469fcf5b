"""Leftovers of interrupted builds: the hidden temporary folders, partial zips and locks a `kill -9` leaves."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
from pathlib import Path

# What `build` writes beside its target while it works (generator.bundle.build.build): `.NAME.tmp-XXXXXXXX` (mkdtemp's
# eight characters), `.NAME.partial` and `.NAME.gpu-audit-lock`.
_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.(?:tmp-[a-z0-9_]{8}|partial|gpu-audit-lock)$")
LOCK_SUFFIX = ".gpu-audit-lock"


def lock_path(parent: Path, name: str) -> Path:
    """The lock a build of `parent/name` holds while it writes."""
    return parent / f".{name}{LOCK_SUFFIX}"


def _held(lock: Path) -> bool:
    """Whether a running build holds this lock (an unheld lock file is what a killed build left)."""
    try:
        fd = os.open(lock, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing releases a lock this probe took
    return False


def find_leftovers(parent: Path) -> list[Path]:
    """Everything a killed build left in `parent`, sorted; what a running build is writing is not listed."""
    try:
        entries = sorted(parent.iterdir())
    except OSError:
        return []
    out = []
    for entry in entries:
        match = _TEMPORARY.match(entry.name)
        if match is None or entry.is_symlink():
            continue
        if entry.name.endswith(LOCK_SUFFIX) and not entry.is_file():
            continue
        if not _held(lock_path(parent, match.group("name"))):
            out.append(entry)
    return out


def remove_leftovers(parent: Path) -> list[Path]:
    """Remove what `find_leftovers` lists and return it; a symbolic link is never followed."""
    removed = []
    for entry in find_leftovers(parent):
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed
