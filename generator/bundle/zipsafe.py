"""Safe extraction of a bundle zip: no path escaping the folder, no links, no absurd sizes (zip bombs)."""

from __future__ import annotations

import re
import stat
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from generator.core.limits import DEFAULT, Limits, limit_message, resolve

MAX_ENTRIES = DEFAULT.max_zip_entries  # defaults; Limits (--max-zip-entries, --max-bundle-bytes, --max-zip-ratio)
MAX_TOTAL_BYTES = DEFAULT.max_bundle_bytes
MAX_RATIO = DEFAULT.max_zip_ratio  # uncompressed / compressed, per entry
CHUNK = 1 << 20
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
# What a damaged or hostile archive makes zipfile raise while reading an entry (beyond OSError).
_READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError,
                OverflowError, UnicodeDecodeError)


@dataclass(frozen=True)
class ZipProblem:
    """Why a zip was refused."""

    entry: str
    message: str


def _name_problem(name: str) -> str | None:
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


def extract(zip_path: Path, dest: Path, *, max_total: int | None = None,
            limits: Limits | None = None) -> list[ZipProblem]:
    """Extract into `dest` after checking every entry; returns the problems (nothing extracted if any).

    The limits (`limits`, else the active ones) bound the entries, the total and per-entry size
    (`max_total` overrides `max_bundle_bytes`) and the compression ratio; a damaged archive is a problem,
    never an exception.
    """
    lim = resolve(limits)
    if max_total is None:
        max_total = lim.max_bundle_bytes
    problems: list[ZipProblem] = []
    try:
        zf = zipfile.ZipFile(zip_path)
    except (OSError, *_READ_ERRORS) as exc:
        return [ZipProblem(str(zip_path), f"not a readable zip file: {exc}")]
    with zf:
        infos = zf.infolist()
        if len(infos) > lim.max_zip_entries:
            return [ZipProblem(str(zip_path), limit_message("max_zip_entries", lim, f"{len(infos)} entries"))]
        total = 0
        seen: dict[str, str] = {}
        for info in infos:
            name = info.filename
            mode = info.external_attr >> 16
            kind = "folder" if info.is_dir() else "file"
            key = name.rstrip("/")
            bad_name = _name_problem(name)
            if bad_name:
                problems.append(ZipProblem(name, bad_name))
            elif stat.S_ISLNK(mode):
                problems.append(ZipProblem(name, "entry is a symbolic link; bundles hold plain files only"))
            elif key in seen:
                problems.append(ZipProblem(name, f"entry appears twice (as a {seen[key]} and a {kind})"))
            elif info.file_size > max_total:
                problems.append(ZipProblem(name, f"entry would expand to {info.file_size} bytes from "
                                                 f"{info.compress_size}: refused as a possible zip bomb; "
                                                 + limit_message("max_bundle_bytes", lim, "its size")))
            elif info.compress_size and info.file_size / info.compress_size > lim.max_zip_ratio and info.file_size > CHUNK:
                problems.append(ZipProblem(name, f"entry would expand to {info.file_size} bytes from "
                                                 f"{info.compress_size}: refused as a possible zip bomb; "
                                                 + limit_message("max_zip_ratio", lim, "its compression ratio")))
            seen.setdefault(key, kind)
            total += info.file_size
        for name, kind in seen.items():
            parent = str(PurePosixPath(name).parent)
            while parent not in (".", "", "/"):
                if seen.get(parent) == "file":
                    problems.append(ZipProblem(name, f"entry lies under {parent!r}, which is a file"))
                    break
                parent = str(PurePosixPath(parent).parent)
        if total > max_total:
            problems.append(ZipProblem(str(zip_path), limit_message("max_bundle_bytes", lim,
                                                                    f"{total} bytes uncompressed")))
        if problems:
            return problems
        try:
            for info in infos:
                target = dest / info.filename
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                written = 0
                with zf.open(info) as src, target.open("wb") as out:
                    # Trust no header: stop at the declared size even if the stream says otherwise.
                    while block := src.read(CHUNK):
                        written += len(block)
                        if written > info.file_size:
                            return [ZipProblem(info.filename, "entry is larger than its header declares")]
                        out.write(block)
        except (OSError, *_READ_ERRORS) as exc:
            return [ZipProblem(info.filename, f"entry cannot be extracted: {type(exc).__name__}: {exc}")]
    return []


def bag_root(dest: Path) -> Path:
    """The extracted bag: the single top folder, or dest itself when bagit.txt lies at the top."""
    if (dest / "bagit.txt").is_file():
        return dest
    children = [p for p in dest.iterdir()]
    if len(children) == 1 and children[0].is_dir():
        return children[0]
    return dest
