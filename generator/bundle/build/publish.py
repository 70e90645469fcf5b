"""Putting a finished bundle in place: the target name claimed for one build, the folder renamed into place,
or zipped beside it and linked to its name; nothing is ever written over a file that appeared meanwhile."""

from __future__ import annotations

import fcntl
import os
import shutil
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from generator.bundle.build.leftovers import lock_path
from generator.core.errors import OutputExistsError, UsageError


@contextmanager
def claim(target: Path) -> Iterator[None]:
    """Hold an exclusive lock for the target name, so two builds racing for it cannot both write it."""
    lock = lock_path(target.parent, target.name)
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as exc:
        raise UsageError(f"cannot create the build lock {lock} ({exc.strerror}); choose a bundle path in a "
                         "folder you can write, with a shorter name") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OutputExistsError(f"another build is writing {target}; nothing is overwritten") from None
        if target.exists() or target.is_symlink():
            raise OutputExistsError(f"{target} already exists; choose a new bundle path (nothing is overwritten)")
        try:
            yield
        finally:
            lock.unlink(missing_ok=True)
    finally:
        os.close(fd)


def zip_folder(root: Path, zip_path: Path, top: str, when: datetime) -> None:
    """A deterministic zip: one top folder, sorted entries, the decision's time on every entry."""
    stamp = (max(when.year, 1980), when.month, when.day, when.hour, when.minute, when.second)
    with zipfile.ZipFile(zip_path, "x", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(f"{top}/{path.relative_to(root).as_posix()}", date_time=stamp)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, path.read_bytes())


def partial_zip(target: Path) -> Path:
    """Where the zip is written before it is linked to its name (a later build names it as a leftover)."""
    return target.parent / f".{target.name}.partial"


def publish_zip(tmp: Path, target: Path, generated_at: str) -> None:
    """The finished folder zipped beside the target, then linked to its name: never over a file that appeared."""
    partial = partial_zip(target)
    partial.unlink(missing_ok=True)
    zip_folder(tmp, partial, target.stem, datetime.fromisoformat(generated_at.replace("Z", "+00:00")))
    os.chmod(partial, FILE_MODE)
    try:
        os.link(partial, target)  # never replaces a file that appeared meanwhile
    except FileExistsError:
        raise OutputExistsError(f"{target} appeared during the build; nothing is overwritten") from None
    partial.unlink()
    shutil.rmtree(tmp)


# A bundle is shared (a drive, a mail, an invoice): its folders and files are readable by all, whatever the
# umask; it holds no secret (the signing key is never copied into it). Built in a 0700 folder until then.
FOLDER_MODE, FILE_MODE = 0o755, 0o644


def shareable(root: Path) -> None:
    """Set every folder of `root` (itself included) to FOLDER_MODE and every file to FILE_MODE."""
    os.chmod(root, FOLDER_MODE)
    for folder, folders, files in os.walk(root):
        for name in folders:
            os.chmod(os.path.join(folder, name), FOLDER_MODE)
        for name in files:
            os.chmod(os.path.join(folder, name), FILE_MODE)


def publish_folder(tmp: Path, target: Path) -> None:
    """The finished folder, made readable by all (`shareable`), renamed to the target: never over a file or
    folder that appeared meanwhile."""
    shareable(tmp)
    if target.exists() or target.is_symlink():
        raise OutputExistsError(f"{target} appeared during the build; nothing is overwritten")
    try:
        os.rename(tmp, target)
    except OSError as exc:  # a folder or file that appeared meanwhile: never replaced
        raise OutputExistsError(f"{target} appeared during the build ({exc.strerror}); nothing is "
                                "overwritten") from None
