"""The BagIt 1.0 (RFC 8493) files, written and read deterministically: sorted paths, '/' separators."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from generator.core.system.safefiles import open_regular

BAGIT_TXT = "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n"
PAYLOAD_ALGORITHMS = ("sha256",)  # the payload manifests build writes (bundlelayout)
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
    with open_regular(path) as fh:
        while block := fh.read(CHUNK):
            for h in hashers.values():
                h.update(block)
    return {a: h.hexdigest() for a, h in hashers.items()}


def manifest_text(entries: dict[str, str]) -> str:
    """`digest  path` lines sorted by path."""
    return "".join(f"{digest}  {encode_path(path)}\n" for path, digest in sorted(entries.items()))


def parse_manifest(text: str) -> tuple[dict[str, str], list[str], list[str]]:
    """Entries {path: digest} of a manifest, the lines that could not be read, and the paths listed more than
    once (bagit.py refuses such a bag; a reader taking the first line and one taking the last would disagree)."""
    entries: dict[str, str] = {}
    bad: list[str] = []
    repeated: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.split(maxsplit=1)
        if len(parts) != 2:
            bad.append(line)
            continue
        path = decode_path(parts[1].strip())
        if path in entries:
            repeated.append(path)
        entries.setdefault(path, parts[0].lower())
    return entries, bad, repeated


# A character that would end a bag-info line early or hide what follows it: the C0 and C1 controls (CR and LF
# start a new field: `X\nPayload-Oxum: 1.1`), DEL, and the Unicode line and paragraph separators.
_LINE_BREAKING = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def field_value_problem(value: str) -> str | None:
    """Why `value` cannot be a bag-info.txt value (a control character or line break in it), else None."""
    bad = _LINE_BREAKING.search(value)
    if bad is not None:
        return f"it holds the control character U+{ord(bad.group(0)):04X} (a line break would add a field)"
    if value != value.strip():
        return "it starts or ends with white space"
    return None


def bag_info_text(fields: list[tuple[str, str]]) -> str:
    """`Label: value` lines in the given order; a value that would break its line raises ValueError."""
    for label, value in fields:
        problem = field_value_problem(value)
        if problem is not None or ":" in label or field_value_problem(label) is not None:
            raise ValueError(f"bag-info.txt field {label!r}: {problem or 'not a valid label'}")
    return "".join(f"{label}: {value}\n" for label, value in fields)


def parse_bag_info_strict(text: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The fields of a bag-info.txt as gpu-audit writes it (`Label: value` lines ending in LF), in order, and
    the lines that are not of that form (continuation lines, CR, a line without a label)."""
    fields: list[tuple[str, str]] = []
    bad: list[str] = []
    lines = text.split("\n")
    if lines[-1] != "":
        bad.append(lines[-1])  # the last line has no line end
    for line in lines[:-1]:
        label, sep, value = line.partition(": ")
        if not sep or not label or field_value_problem(label) or field_value_problem(value) or ":" in label:
            bad.append(line)
        else:
            fields.append((label, value))
    return fields, bad

