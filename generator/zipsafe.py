"""Safe extraction of a bundle zip: no path escaping the folder, no links, no absurd sizes (zip bombs)."""

from __future__ import annotations

import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MAX_ENTRIES = 200_000
MAX_TOTAL_BYTES = 8 * 2**30
MAX_RATIO = 200  # uncompressed / compressed, per entry
CHUNK = 1 << 20


@dataclass(frozen=True)
class ZipProblem:
    """Why a zip was refused."""

    entry: str
    message: str


def extract(zip_path: Path, dest: Path, *, max_total: int = MAX_TOTAL_BYTES) -> list[ZipProblem]:
    """Extract into `dest` after checking every entry; returns the problems (nothing extracted if any)."""
    problems: list[ZipProblem] = []
    try:
        zf = zipfile.ZipFile(zip_path)
    except (zipfile.BadZipFile, OSError) as exc:
        return [ZipProblem(str(zip_path), f"not a readable zip file: {exc}")]
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_ENTRIES:
            return [ZipProblem(str(zip_path), f"{len(infos)} entries exceed the limit of {MAX_ENTRIES}")]
        total = 0
        for info in infos:
            name = info.filename
            pure = PurePosixPath(name)
            mode = info.external_attr >> 16
            if name.startswith("/") or "\\" in name or ".." in pure.parts or (len(name) > 1 and name[1] == ":"):
                problems.append(ZipProblem(name, "entry path escapes the extraction folder"))
            elif stat.S_ISLNK(mode):
                problems.append(ZipProblem(name, "entry is a symbolic link; bundles hold plain files only"))
            elif info.file_size > max_total or (info.compress_size and info.file_size / info.compress_size > MAX_RATIO
                                                and info.file_size > CHUNK):
                problems.append(ZipProblem(name, f"entry would expand to {info.file_size} bytes from "
                                                 f"{info.compress_size}: refused as a possible zip bomb"))
            total += info.file_size
        if total > max_total:
            problems.append(ZipProblem(str(zip_path), f"{total} bytes uncompressed exceed the limit of {max_total}"))
        if problems:
            return problems
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
    return []


def bag_root(dest: Path) -> Path:
    """The extracted bag: the single top folder, or dest itself when bagit.txt lies at the top."""
    if (dest / "bagit.txt").is_file():
        return dest
    children = [p for p in dest.iterdir()]
    if len(children) == 1 and children[0].is_dir():
        return children[0]
    return dest
