"""The BagIt 1.0 (RFC 8493) files, written and read deterministically: sorted paths, '/' separators."""

from __future__ import annotations

import hashlib
from pathlib import Path

BAGIT_TXT = "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n"
PAYLOAD_ALGORITHMS = ("sha256", "sha512")
TAG_ALGORITHM = "sha256"
CHUNK = 1 << 20


def encode_path(path: str) -> str:
    """Percent-encode what RFC 8493 requires in manifest paths (%, CR, LF)."""
    return path.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def decode_path(path: str) -> str:
    """Undo encode_path."""
    return path.replace("%0D", "\r").replace("%0A", "\n").replace("%0d", "\r").replace("%0a", "\n").replace("%25", "%")


def digests(path: Path, algorithms: tuple[str, ...]) -> dict[str, str]:
    """Hex digests of one file for several algorithms, reading it once."""
    hashers = {a: hashlib.new(a) for a in algorithms}
    with path.open("rb") as fh:
        while block := fh.read(CHUNK):
            for h in hashers.values():
                h.update(block)
    return {a: h.hexdigest() for a, h in hashers.items()}


def manifest_text(entries: dict[str, str]) -> str:
    """`digest  path` lines sorted by path."""
    return "".join(f"{digest}  {encode_path(path)}\n" for path, digest in sorted(entries.items()))


def parse_manifest(text: str) -> tuple[dict[str, str], list[str]]:
    """Entries {path: digest} of a manifest, and the lines that could not be read."""
    entries: dict[str, str] = {}
    bad: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.split(maxsplit=1)
        if len(parts) != 2:
            bad.append(line)
            continue
        entries[decode_path(parts[1].strip())] = parts[0].lower()
    return entries, bad


def bag_info_text(fields: list[tuple[str, str]]) -> str:
    """`Label: value` lines in the given order."""
    return "".join(f"{label}: {value}\n" for label, value in fields)


def parse_bag_info(text: str) -> dict[str, str]:
    """Labels and values of bag-info.txt (continuation lines joined)."""
    info: dict[str, str] = {}
    last = None
    for line in text.splitlines():
        if line[:1] in (" ", "\t") and last:
            info[last] += " " + line.strip()
        elif ":" in line:
            label, value = line.split(":", 1)
            last = label.strip()
            info[last] = value.strip()
    return info
