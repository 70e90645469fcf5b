"""The IteraGPU Lab archive's MANIFEST.json, read for one thing: the size and SHA-256 it lists for the tariffs.

The seeds describe the manifest (the archive's nine items, the size and SHA-256 of its eight content files, no
checksum of itself) but not its keys, so it is read tolerantly: any JSON object, at any depth, that names a file
called `tarifs-forfaits.csv` (in a value, or as the key of the object describing it) together with a 64-hex
SHA-256 (a key containing `sha256` or `sha-256`, the value bare or as `sha256:HEX`) and a size in bytes (a key
`size`, `bytes`, `size_bytes`, `byte_size` or `length`, a whole number). Exactly one such entry is accepted;
none, an entry lacking its digest or size, or two that disagree leave the manifest refused, with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from generator.core.jsonvalue import JsonValue

TARIFFS_NAME = "tarifs-forfaits.csv"
_HEX64 = re.compile(r"(?:sha-?256:)?([0-9a-fA-F]{64})")
_SIZE_KEYS = frozenset({"size", "bytes", "size_bytes", "byte_size", "length", "filesize", "file_size"})

Json = JsonValue  # a JSON value as the strict reader gives it


@dataclass(frozen=True)
class ManifestEntry:
    """The tariffs file as the manifest lists it: the name it gives, its size and SHA-256 (lower-case hex)."""

    name: str
    size: int
    sha256: str


@dataclass(frozen=True)
class ManifestReading:
    """The entry the manifest lists for the tariffs file, or why none could be taken from it."""

    entry: ManifestEntry | None
    refused: str | None


def _is_tariffs_name(value: str) -> bool:
    return PurePosixPath(value.replace("\\", "/")).name == TARIFFS_NAME


def _digest(obj: dict[str, Json]) -> str | None | bool:
    """The object's SHA-256 in lower-case hex; None when it has no such key, False when its value is not one."""
    for key, value in obj.items():
        if re.sub(r"[^a-z0-9]", "", key.lower()) in ("sha256", "sha256sum", "sha256digest", "sha256hash"):
            found = _HEX64.fullmatch(value.strip()) if isinstance(value, str) else None
            return found.group(1).lower() if found else False
    return None


def _size(obj: dict[str, Json]) -> int | None | bool:
    """The object's size in bytes; None when it has no size key, False when its value is not a whole number."""
    for key, value in obj.items():
        if key.lower() in _SIZE_KEYS:
            return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else False
    return None


def _candidate(obj: dict[str, Json], name: str | None) -> ManifestEntry | str | None:
    """The entry an object describes, a reason it is incomplete, or None when it names no tariffs file."""
    if name is None:
        name = next((v for v in obj.values() if isinstance(v, str) and _is_tariffs_name(v)), None)
    if name is None:
        return None
    digest, size = _digest(obj), _size(obj)
    if not isinstance(digest, str):
        return f"its entry for {name!r} has no 64-hex SHA-256"
    if size is None or size is False or size is True:
        return f"its entry for {name!r} has no size in bytes"
    return ManifestEntry(name, size, digest)


def _walk(value: Json) -> list[ManifestEntry | str]:
    """Every entry (or incomplete entry) for the tariffs file in a JSON value, depth first, in document order."""
    found: list[ManifestEntry | str] = []
    stack: list[tuple[Json, str | None]] = [(value, None)]
    while stack:
        item, key_name = stack.pop()
        if isinstance(item, dict):
            hit = _candidate(item, key_name)
            if hit is not None:
                found.append(hit)
            children = [(v, k if _is_tariffs_name(k) else None) for k, v in item.items()]
        elif isinstance(item, list):
            children = [(v, None) for v in item]
        else:
            continue
        stack.extend(reversed(children))
    return found


def read_manifest(document: Json) -> ManifestReading:
    """The tariffs file's entry in a Lab manifest (its strict JSON already parsed), or why it is refused."""
    found = _walk(document)
    entries = {f for f in found if isinstance(f, ManifestEntry)}
    if not found:
        return ManifestReading(None, f"it names no file {TARIFFS_NAME}")
    if not entries:
        return ManifestReading(None, next(f for f in found if isinstance(f, str)))
    if len({(e.size, e.sha256) for e in entries}) > 1:
        listed = "; ".join(f"{e.size} bytes, SHA-256 {e.sha256}" for e in sorted(entries, key=lambda e: e.sha256))
        return ManifestReading(None, f"it lists {TARIFFS_NAME} more than once, differently ({listed})")
    return ManifestReading(min(entries, key=lambda e: e.name), None)
