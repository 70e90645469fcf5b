"""Safe extraction of a bundle zip: no path escaping the folder, no links, no absurd sizes (zip bombs)."""

from __future__ import annotations

import os
import re
import stat
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from generator.bundle.verdict import Problem, os_artefact
from generator.bundle.zip import zipform
from generator.core.limits import Limits, limit_message, resolve

CHUNK = 1 << 20
WHOLE_RATIO_FLOOR = 64 << 20  # a zip may always expand to this much, whatever its own size
CODE = "unsafe-zip"  # the code of every problem this module finds: `verify` lists them as they are
# The fix a refused layout's line ends with, unless its reason calls for one of its own.
REZIP = ("zip the bundle folder again with `gpu-audit build --zip`, `zip -r`, `bsdtar -a -cf`, 7-Zip or Python's "
         "shutil.make_archive, or give the folder")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
# What a damaged or hostile archive makes zipfile raise while reading an entry (beyond OSError).
_READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError,
                OverflowError, UnicodeDecodeError)


def _problem(entry: str, message: str) -> Problem:
    return Problem(CODE, entry, message)


def _name_problem(name: str) -> str | None:
    if name == "./":  # the top folder itself, as `bsdtar -C dir .` writes it
        return None
    pure = PurePosixPath(name)
    if (name.startswith("/") or "\\" in name or ".." in pure.parts or (len(name) > 1 and name[1] == ":")
            or "\x00" in name):
        return "entry path escapes the extraction folder"
    if not name or not pure.parts or pure.parts == (".",):
        return "entry has no file name"
    if _CONTROL.search(name):
        # gpu-audit never writes such a name; printed raw, a CR or an escape sequence rewrites the terminal
        return "entry name holds control characters (shown escaped)"
    return None


def _entry_problem(info: zipfile.ZipInfo, seen: dict[str, str], max_total: int, lim: Limits) -> str | None:
    """Why one entry is refused on its own (its name, its kind, its size or ratio), else None."""
    name = info.filename
    bad_name = _name_problem(name)
    if bad_name:
        return bad_name
    if stat.S_ISLNK(info.external_attr >> 16):
        return "entry is a symbolic link; bundles hold plain files only"
    key = name.rstrip("/")
    if key in seen:
        return f"entry appears twice (as a {seen[key]} and a {'folder' if info.is_dir() else 'file'})"
    bomb = f"entry would expand to {info.file_size} bytes from {info.compress_size}: refused as a possible zip bomb; "
    if info.file_size > max_total:
        return bomb + limit_message("max_bundle_bytes", lim, "its size")
    if info.compress_size and info.file_size / info.compress_size > lim.max_zip_ratio and info.file_size > CHUNK:
        return bomb + limit_message("max_zip_ratio", lim, "its compression ratio")
    return None


def _layout_problems(infos: list[zipfile.ZipInfo], max_total: int, lim: Limits, where: str) -> list[Problem]:
    """Every entry checked before a byte is written: names, kinds, sizes, entries under files, the total."""
    problems: list[Problem] = []
    seen: dict[str, str] = {}  # entry name without its trailing '/': "file" or "folder"
    total = 0
    for info in infos:
        message = _entry_problem(info, seen, max_total, lim)
        if message is not None:
            problems.append(_problem(info.filename, message))
        seen.setdefault(info.filename.rstrip("/"), "folder" if info.is_dir() else "file")
        total += info.file_size
    for name in seen:
        parent = str(PurePosixPath(name).parent)
        while parent not in (".", "", "/"):
            if seen.get(parent) == "file":
                problems.append(_problem(name, f"entry lies under {parent!r}, which is a file"))
                break
            parent = str(PurePosixPath(parent).parent)
    if total > max_total:
        problems.append(_problem(where, limit_message("max_bundle_bytes", lim, f"{total} bytes uncompressed")))
    return problems


def _inflate_to(fh: BinaryIO, e: zipform.Entry, target: Path) -> str | None:
    """Write one entry's data, inflated from its own bytes, and check it ends as the central directory says: its
    deflate stream ends exactly at its compressed size (bytes after it are what a streaming reader such as
    `bsdtar` in a pipe reads as further entries), with its declared size and CRC; else why not."""
    fh.seek(e.data_offset)
    left, written, crc = e.compressed, 0, 0
    inflate = zlib.decompressobj(-15) if e.method == zipfile.ZIP_DEFLATED else None
    with target.open("xb") as out:
        while left:
            pending = fh.read(min(CHUNK, left))
            if not pending:
                return "entry is cut short: the zip ends inside its data"
            left -= len(pending)
            while pending:
                # never more than one byte past the declared size: a bomb stops here
                block = pending if inflate is None else inflate.decompress(pending, e.size + 1 - written)
                pending = b"" if inflate is None else inflate.unconsumed_tail
                written += len(block)
                if written > e.size:
                    return "entry is larger than its header declares"
                crc = zlib.crc32(block, crc)
                out.write(block)
    if inflate is not None and (not inflate.eof or inflate.unused_data):
        return ("its deflate stream does not end exactly where its compressed size ends (a streaming reader "
                "would read the bytes after it as other entries)")
    if written != e.size or crc != e.crc:
        return "entry's data does not match the size and CRC its header declares"
    return None


def _write_entries(fh: BinaryIO, entries: list[zipform.Entry], dest: Path) -> list[Problem]:
    """The checked entries written under `dest` from the zip's own bytes; any departure is a problem."""
    for e in entries:
        target = dest / e.name
        try:
            if e.name.endswith("/"):
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            problem = _inflate_to(fh, e, target)
        except (OSError, zlib.error) as exc:
            problem = f"entry cannot be extracted: {type(exc).__name__}: {exc}"
        if problem is not None:
            return [_problem(e.name, problem)]
    return []


def extract(zip_path: Path, dest: Path, *, max_total: int | None = None,
            limits: Limits | None = None) -> list[Problem]:
    """Extract into `dest` after checking every entry; returns the problems, code `unsafe-zip` (nothing is
    extracted if the checks find any).

    The zip must have the one plain layout every reader agrees on (generator.bundle.zip.zipform), read from its
    headers before zipfile parses it. The limits (`limits`, else the active ones) bound the zip's own size, the
    entries, the total and per-entry size (`max_total` overrides `max_bundle_bytes`) and the compression
    ratio, of each entry and of the whole zip; a damaged archive is a problem, never an exception.
    """
    lim = resolve(limits)
    if zip_path.suffix.lower() == ".pdf":
        return [_problem(str(zip_path), "it is named .pdf but is no PDF (a bundle zip, or a file that is both): a PDF "
                                        "viewer may show another document than the one verify checks; rename it "
                                        f"{zip_path.stem}.zip if it is a bundle zip, or give the note PDF itself")]
    if max_total is None:
        max_total = lim.max_bundle_bytes
    where = str(zip_path)
    try:
        with zip_path.open("rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return [_problem(where, "not a regular file")]
            if size > max_total:
                return [_problem(where, limit_message("max_bundle_bytes", lim, f"its size, {size} bytes,"))]
            entries = zipform.check_layout(fh, lim)
            return _extract_checked(fh, entries, size, dest, max_total, lim, where)
    except zipform.ZipLimitError as exc:
        return [_problem(where, exc.reason)]
    except zipform.ZipLayoutError as exc:
        return [_problem(exc.entry or where, f"not a plain bundle zip: {exc.reason}; {exc.fix or REZIP}")]
    except OSError as exc:
        return [_problem(where, f"cannot be read ({exc.strerror})")]


def _extract_checked(fh: BinaryIO, entries: list[zipform.Entry], size: int, dest: Path, max_total: int,
                     lim: Limits, where: str) -> list[Problem]:
    """zipfile's reading of a zip whose layout passed: the same entries, then the per-entry checks, then out."""
    total = sum(e.size for e in entries)
    if total > max(WHOLE_RATIO_FLOOR, size * lim.max_zip_ratio):
        return [_problem(where, f"{total} bytes would be written from a zip of {size}: refused as a possible zip "
                                f"bomb; " + limit_message("max_zip_ratio", lim, "its compression ratio"))]
    try:
        zf = zipfile.ZipFile(fh)
    except _READ_ERRORS as exc:
        return [_problem(where, f"not a readable zip file: {exc}")]
    with zf:
        infos = zf.infolist()
    seen = [(i.filename, i.header_offset, i.CRC, i.compress_size, i.file_size, i.compress_type) for i in infos]
    if seen != [(e.name, e.offset, e.crc, e.compressed, e.size, e.method) for e in entries]:
        return [_problem(where, "not a plain bundle zip: zipfile reads other entries than its headers list")]
    return _layout_problems(infos, max_total, lim, where) or _write_entries(fh, entries, dest)


def bag_root(dest: Path) -> tuple[Path, list[str]]:
    """The extracted bag (the single top folder, or dest itself when bagit.txt lies at the top) and, sorted, the
    top-level entries beside it that an operating system added (Finder's `__MACOSX/`, `._NAME`), for `verify` to
    name with the command that removes them."""
    children = sorted(p.name for p in dest.iterdir())
    outside = [name for name in children if os_artefact(name) is not None]
    if (dest / "bagit.txt").is_file():
        return dest, []
    rest = [name for name in children if name not in outside]
    if len(rest) == 1 and (dest / rest[0]).is_dir():
        return dest / rest[0], outside
    return dest, []
