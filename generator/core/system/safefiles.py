"""Files read and written safely: key, certificate and trust files; new files written all or none; digests."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from generator.core.errors import (
    OutputExistsError,
    ReadableKeyError,
    UnreadableInputError,
    UnsafeFileError,
)

__all__ = ["MAX_KEY_FILE_BYTES", "SmallFile", "open_regular", "read_key_file", "sha256_file", "write_new_file",
           "write_new_files"]

# A PEM certificate chain or a PKCS#12 file is a few kilobytes; a megabyte is generous and still bounds memory.
MAX_KEY_FILE_BYTES = 1 << 20


@dataclass(frozen=True)
class SmallFile:
    """The bytes of a key, certificate or trust file, and its permission bits."""

    path: Path
    data: bytes
    mode: int

    def refuse_if_readable(self, what: str) -> None:
        """Refuse a private key that group or others may read (as ssh does): it is no longer a secret."""
        if self.mode & 0o077:
            raise ReadableKeyError(
                f"{self.path}: the {what} is readable by other users (mode {self.mode:04o}); make it private "
                f"with `chmod 600 {self.path}`", str(self.path), self.mode)


def read_key_file(path: Path, what: str, *, max_bytes: int = MAX_KEY_FILE_BYTES) -> SmallFile:
    """Read a key, certificate, PKCS#12 or trust file: a regular file of at most `max_bytes`, nothing else.

    It is opened without blocking and checked with fstat before any byte is read, so a named pipe never
    hangs the command and a device (/dev/zero) never fills its memory; `what` names the file in messages.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise UnreadableInputError(f"{path}: the {what} does not exist; give the path of the file") from None
    except IsADirectoryError:
        raise UnsafeFileError(f"{path}: is a folder; give the {what} itself") from None
    except OSError as exc:
        raise UnreadableInputError(f"{path}: the {what} cannot be read ({exc.strerror}); check its permissions"
                                   ) from None
    with os.fdopen(fd, "rb") as fh:
        try:
            info = os.fstat(fh.fileno())
            if stat.S_ISDIR(info.st_mode):
                raise UnsafeFileError(f"{path}: is a folder; give the {what} itself")
            if not stat.S_ISREG(info.st_mode):
                raise UnsafeFileError(f"{path}: is not a regular file (a pipe, socket or device); give the {what} "
                                      "itself")
            if info.st_size > max_bytes:
                raise UnsafeFileError(f"{path}: {info.st_size} bytes, more than the {max_bytes} a {what} can "
                                      "take; give the right file")
            data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise UnreadableInputError(f"{path}: the {what} cannot be read ({exc.strerror})") from None
    if len(data) > max_bytes:  # it grew while being read
        raise UnsafeFileError(f"{path}: more than the {max_bytes} bytes a {what} can take; give the right file")
    return SmallFile(path=path, data=data, mode=stat.S_IMODE(info.st_mode))


def write_new_files(folder: Path, files: dict[str, tuple[bytes, int]], what: str = "file") -> list[Path]:
    """Write each file (name: bytes and mode) into `folder`, all or none; an existing name is never replaced.

    The folder (and its parents) is made when missing. Every file is first written in full under a
    temporary name in the same folder, with a mode no wider than its final one (a key is never readable by
    others, not even for a moment), then linked to its name; any failure (a full disk, a name that
    appeared meanwhile, Ctrl-C) removes the temporary files, the names already linked and the folders
    made, so that the next attempt finds nothing in its way.
    """
    created = _missing_folders(folder)
    written: dict[str, tuple[str, tuple[int, int]]] = {}  # name -> temporary path, its (device, inode)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, (data, mode) in files.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
            with os.fdopen(fd, "wb") as fh:
                info = os.fstat(fh.fileno())
                written[name] = (tmp, (info.st_dev, info.st_ino))
                os.fchmod(fh.fileno(), mode)  # whatever the umask
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())  # a full disk shows here at the latest, not after the names exist
        for name, (tmp, _) in written.items():
            try:
                os.link(tmp, folder / name)  # never replaces a name, not even one that appeared meanwhile
            except FileExistsError:
                raise OutputExistsError(f"{folder / name} already exists; a {what} is never overwritten") from None
    except BaseException:
        for name, (_, identity) in written.items():
            _unlink_if_ours(folder / name, identity)
        for tmp, _ in written.values():
            Path(tmp).unlink(missing_ok=True)
        for made in created:  # the folders this call made, innermost first, if nothing else went into them
            try:
                made.rmdir()
            except OSError:
                break
        raise
    for tmp, _ in written.values():
        Path(tmp).unlink(missing_ok=True)
    return [folder / name for name in files]


def write_new_file(path: Path, data: bytes, *, mode: int = 0o644, what: str = "file") -> Path:
    """Write one new file as `write_new_files` does: in full or not at all, never over an existing name."""
    return write_new_files(path.parent, {path.name: (data, mode)}, what)[0]


def open_regular(path: Path) -> BinaryIO:
    """`path` opened for reading only if it is a regular file, never following a link nor blocking on a pipe:
    a file swapped for a FIFO or a link after it was listed is an OSError, not a hang or a read elsewhere."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return os.fdopen(fd, "rb")


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    """The SHA-256 of a file's bytes as hexadecimal, read a chunk at a time (memory stays bounded)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _missing_folders(folder: Path) -> list[Path]:
    """The folders that do not exist yet on the way to `folder`, innermost first."""
    missing = []
    for candidate in (folder, *folder.parents):
        if candidate.exists() or candidate.is_symlink():
            break
        missing.append(candidate)
    return missing


def _unlink_if_ours(path: Path, identity: tuple[int, int]) -> None:
    """Remove `path` only if it is the file this process linked there (the same inode), never another's."""
    try:
        info = os.lstat(path)
    except OSError:
        return
    if (info.st_dev, info.st_ino) == identity:
        path.unlink(missing_ok=True)
