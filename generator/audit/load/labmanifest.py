"""The IteraGPU Lab archive's MANIFEST.json, read for the items it lists and the tariffs file's size and SHA-256.

The seeds describe the manifest (the archive's nine items, the size and SHA-256 of its eight content files, no
checksum of itself) but not its keys, so it is read tolerantly: any JSON object, at any depth, that names a file
called `tarifs-forfaits.csv` (in a value, or as the key of the object describing it) together with a 64-hex
SHA-256 (a key containing `sha256` or `sha-256`, the value bare or as `sha256:HEX`) and a size in bytes (a key
`size`, `bytes`, `size_bytes`, `byte_size` or `length`, a whole number). Exactly one such entry is accepted;
none, an entry lacking its digest or size, or two that disagree leave the manifest refused, with the reason.
Every item it lists is read the same way (`ManifestItem`, with its JSON pointer), for `labarchive`'s structure rule.
What a manifest in the campaign folder says is the campaign's own statement: it authenticates nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from generator.core.jsonvalue import JsonValue

TARIFFS_NAME = "tarifs-forfaits.csv"
_HEX64 = re.compile(r"(?:sha-?256:)?([0-9a-fA-F]{64})")
_SIZE_KEYS = frozenset({"size", "bytes", "size_bytes", "byte_size", "length", "filesize", "file_size"})
# The keys an item's own name may stand under (`{"path": "iteragpu-lab-v1/LICENSE.txt", ...}`).
_NAME_KEYS = frozenset({"path", "name", "file", "filename", "file_name", "relpath", "relative_path"})
# The archive's nine items (004 Inhalt): the README the seeds are, seven files it lists, and the manifest itself.
LAB_FILES = ("mesure-memoire.ipynb", "mesure_memoire.py", "protocole-qualite.md", "resultats-bruts.csv",
             "calcul_forfaits.py", TARIFFS_NAME, "LICENSE.txt")
MANIFEST_NAME = "MANIFEST.json"
_FILE_LIKE = re.compile(r"[^\s]+\.[A-Za-z0-9]{1,8}")  # a key that may name an item: a file name with an extension
_README = re.compile(r"README(?:\.[A-Za-z0-9]{1,8})?", re.IGNORECASE)

Json = JsonValue  # a JSON value as the strict reader gives it


@dataclass(frozen=True)
class ManifestEntry:
    """The tariffs file as the manifest lists it: the name it gives, its size and SHA-256 (lower-case hex)."""

    name: str
    size: int
    sha256: str


@dataclass(frozen=True)
class ManifestItem:
    """One item the manifest lists: its file name (the last part of its path), where (a JSON pointer), and its size
    and SHA-256 keys with their values (None: no such key)."""

    name: str
    pointer: str
    size: tuple[str, Json] | None
    sha256: tuple[str, Json] | None

    def size_ok(self) -> bool:
        """Whether its size is a whole number of bytes."""
        value = self.size[1] if self.size is not None else None
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0

    def sha256_ok(self) -> bool:
        """Whether its SHA-256 is 64 hex digits, bare or as `sha256:HEX`."""
        value = self.sha256[1] if self.sha256 is not None else None
        return isinstance(value, str) and _HEX64.fullmatch(value.strip()) is not None

    def checksum(self) -> tuple[Json, str] | None:
        """Its size and SHA-256 (lower-case hex) when both are well formed."""
        if not (self.size_ok() and self.sha256_ok()) or self.size is None or self.sha256 is None:
            return None
        found = _HEX64.fullmatch(str(self.sha256[1]).strip())
        return (self.size[1], found.group(1).lower()) if found else None


def as_json(value: Json) -> str:
    """A value as the manifest writes it (`true`, `null`, `"12"`), never Python's spelling."""
    return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class ManifestReading:
    """The entry the manifest lists for the tariffs file, or why none could be taken from it; every item it lists."""

    entry: ManifestEntry | None
    refused: str | None
    items: tuple[ManifestItem, ...] = ()
    parsed: bool = True  # False: not strict JSON, no item could be read


def base_name(value: str) -> str:
    """A path's last part, whichever separator it uses."""
    return PurePosixPath(value.replace("\\", "/")).name


def _is_tariffs_name(value: str) -> bool:
    return base_name(value) == TARIFFS_NAME


def is_lab_name(value: str) -> bool:
    """Whether a path names one of the archive's nine items (its README under any extension)."""
    name = base_name(value)
    return name in LAB_FILES or name == MANIFEST_NAME or _README.fullmatch(name) is not None


def _is_digest_key(key: str) -> bool:
    return re.sub(r"[^a-z0-9]", "", key.lower()) in ("sha256", "sha256sum", "sha256digest", "sha256hash")


def _digest(obj: dict[str, Json]) -> str | None:
    """The object's SHA-256 in lower-case hex; None when its first SHA-256 key is absent or holds no 64-hex digest."""
    for key, value in obj.items():
        if _is_digest_key(key):
            found = _HEX64.fullmatch(value.strip()) if isinstance(value, str) else None
            return found.group(1).lower() if found else None
    return None


def _size(obj: dict[str, Json]) -> int | None:
    """The object's size in bytes; None when its first size key is absent or holds no whole number of bytes."""
    for key, value in obj.items():
        if key.lower() in _SIZE_KEYS:
            return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
    return None


def _candidate(obj: dict[str, Json], name: str | None) -> ManifestEntry | str | None:
    """The entry an object describes, a reason it is incomplete, or None when it names no tariffs file."""
    if name is None:
        name = next((v for v in obj.values() if isinstance(v, str) and _is_tariffs_name(v)), None)
    if name is None:
        return None
    digest, size = _digest(obj), _size(obj)
    if digest is None:
        return f"its entry for {name!r} has no 64-hex SHA-256"
    if size is None:
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


def _key_of(obj: dict[str, Json], sizes: bool) -> tuple[str, Json] | None:
    """The first size key (sizes) or SHA-256 key of an object, with its value."""
    return next(((k, v) for k, v in obj.items() if (k.lower() in _SIZE_KEYS if sizes else _is_digest_key(k))), None)


def _item(obj: dict[str, Json] | None, name: str | None, pointer: str) -> ManifestItem | None:
    """The item an object describes (named by its key, a name key, or a value naming a Lab file), or None: an
    object counts as an item when it gives a size or a SHA-256, or names one of the archive's nine items."""
    obj = obj or {}
    if name is None:
        names = [v for k, v in obj.items() if k.lower() in _NAME_KEYS and isinstance(v, str)]
        labs = [v for v in obj.values() if isinstance(v, str) and is_lab_name(v)]
        name = next(iter([n for n in names if is_lab_name(n)] + labs + names), None)
    size, digest = _key_of(obj, True), _key_of(obj, False)
    if name is None or (size is None and digest is None and not is_lab_name(name)):
        return None
    return ManifestItem(base_name(name), pointer, size, digest)


def _pointer_part(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _named_by_key(key: str, value: Json) -> bool:
    """Whether a key names the item its value describes (`{"LICENSE.txt": {"size": ..., "sha256": ...}}`)."""
    if isinstance(value, dict):
        has_own_name = any(k.lower() in _NAME_KEYS for k in value)
        file_like = _FILE_LIKE.fullmatch(base_name(key)) is not None and _item(value, key, "") is not None
        return not has_own_name and (is_lab_name(key) or file_like)
    return value is None and is_lab_name(key)


def list_items(document: Json) -> list[ManifestItem]:
    """Every item a manifest lists, in document order, each with its JSON pointer."""
    found: list[ManifestItem] = []
    stack: list[tuple[Json, str, str | None]] = [(document, "", None)]
    while stack:
        value, pointer, key_name = stack.pop()
        if isinstance(value, dict) or (value is None and key_name is not None):
            obj = value if isinstance(value, dict) else None
            item = _item(obj, key_name, pointer)
            if item is not None:
                found.append(item)
            children = [(v, f"{pointer}/{_pointer_part(k)}", k if _named_by_key(k, v) else None)
                        for k, v in (obj or {}).items()]
        elif isinstance(value, list):
            children = [(v, f"{pointer}/{i}", None) for i, v in enumerate(value)]
        else:
            continue
        stack.extend(reversed(children))
    return found


def read_manifest(document: Json) -> ManifestReading:
    """The tariffs file's entry in a Lab manifest (its strict JSON already parsed), or why it is refused."""
    found, items = _walk(document), tuple(list_items(document))
    entries = {f for f in found if isinstance(f, ManifestEntry)}
    if not found:
        return ManifestReading(None, f"it names no file {TARIFFS_NAME}", items)
    if not entries:
        return ManifestReading(None, next(f for f in found if isinstance(f, str)), items)
    if len({(e.size, e.sha256) for e in entries}) > 1:
        listed = "; ".join(f"{e.size} bytes, SHA-256 {e.sha256}" for e in sorted(entries, key=lambda e: e.sha256))
        return ManifestReading(None, f"it lists {TARIFFS_NAME} more than once, differently ({listed})", items)
    return ManifestReading(min(entries, key=lambda e: e.name), None, items)
