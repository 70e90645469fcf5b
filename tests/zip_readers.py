"""Every reader a user opens a bundle zip with, run on one zip: `unzip`, `bsdtar` from the file and from a pipe,
Python's zipfile and 7-Zip, each into a folder of its own; and the tree each one made, to compare with the tree
`verify` extracted (generator.bundle.zip.zipsafe)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import zipfile
from pathlib import Path

READERS = ("unzip", "bsdtar", "bsdtar-pipe", "zipfile", "7zz")
# One shell for the four command-line readers: a fork each instead of four from Python.
_SCRIPT = """
z=$1; o=$2
unzip -qq -o "$z" -d "$o/unzip" >/dev/null 2>&1; echo "unzip $?"
mkdir -p "$o/bsdtar" "$o/bsdtar-pipe"
bsdtar -xf "$z" -C "$o/bsdtar" >/dev/null 2>&1; echo "bsdtar $?"
bsdtar -xf - -C "$o/bsdtar-pipe" <"$z" >/dev/null 2>&1; echo "bsdtar-pipe $?"
7zz x -y -bso0 -bse0 -bsp0 "-o$o/7zz" "$z" >/dev/null 2>&1; echo "7zz $?"
"""

Tree = dict[str, bytes | None]  # relative path -> the file's bytes, None for a folder


def available() -> bool:
    return all(shutil.which(tool) for tool in ("unzip", "bsdtar", "7zz"))


def tree(root: Path) -> Tree:
    """The files and folders under `root`; anything else (a link, a device, a setuid file) is named as such."""
    out: Tree = {}
    if not root.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISDIR(mode):
                out[rel] = None
            elif stat.S_ISREG(mode) and not mode & (stat.S_ISUID | stat.S_ISGID):
                out[rel] = path.read_bytes()
            else:
                out[rel] = f"<not a plain file: mode {mode:o}>".encode()
    return out


def read_all(zip_path: Path, work: Path) -> dict[str, tuple[int, Tree]]:
    """Each reader's exit status (0: no error or warning) and the tree it extracted."""
    work.mkdir(parents=True, exist_ok=True)
    run = subprocess.run(["sh", "-c", _SCRIPT, "sh", str(zip_path), str(work)], capture_output=True, text=True,
                         timeout=120, check=False)
    codes = dict(line.split() for line in run.stdout.split("\n") if line)
    out = {name: (int(code), tree(work / name)) for name, code in codes.items()}
    try:
        with zipfile.ZipFile(zip_path) as zf:
            zf.extractall(work / "zipfile")
        code = 0
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError):
        code = 1
    out["zipfile"] = (code, tree(work / "zipfile"))
    return out


def disagreements(checked: Tree, readers: dict[str, tuple[int, Tree]]) -> list[str]:
    """Where a reader failed, or extracted other paths or bytes than the tree `verify` checked."""
    problems = []
    for name in READERS:
        code, got = readers[name]
        if code != 0:
            problems.append(f"{name} exited {code}")
        elif got != checked:
            extra = sorted(set(got) - set(checked))[:3]
            missing = sorted(set(checked) - set(got))[:3]
            changed = sorted(p for p in set(got) & set(checked) if got[p] != checked[p])[:3]
            problems.append(f"{name}: extra {extra}, missing {missing}, different {changed}")
    return problems
