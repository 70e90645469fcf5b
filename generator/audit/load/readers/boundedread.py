"""Reading an id/label file in blocks: refused early, as a finding, when a line or the file is too long."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.readers.csvtable import open_regular, refuse_secret
from generator.core.errors import AuditError, UnreadableInputError
from generator.core.limits import Limits, resolve
from generator.core.system.pemkeys import holds_private_key

# No valid row comes near this: a 500-character ID and a 200-character label (the schemas' maxLength), every
# character 4 bytes of UTF-8, a comma and CRLF make 2,803 bytes. A longer line is a broken or hostile file
# (a sparse file of NUL bytes has no line break at all): it is refused after this many bytes, not parsed.
MAX_LINE_BYTES = 4096
BLOCK = 1 << 20
PEEK_BYTES = 4096
# A PEM private key is a few kilobytes: each block is searched together with this much of the one before.
_KEY_OVERLAP = 64 * 1024
_RULE = "format: one row per expected ID"


@dataclass
class BoundedRead:
    """A whole file's bytes and fingerprint, or (data None) the finding that refused it unparsed."""

    data: bytes | None
    size: int
    sha256: str
    refusal: Finding | None = None


def _may_hold_long_line(data: bytes, start: int, end: int, max_line: int) -> bool:
    """Whether some window of data[start:end], aligned on `start`, lacks a line break: one memchr per window.

    Windows are half a line long, so a line longer than `max_line` always covers a whole one; a window
    without a break but no such line (a line of 2 to 4 KiB) only costs the exact look of `_long_line`.
    """
    width = max(1, (max_line + 1) // 2)
    stops = range(start + width, end + 1, width)
    return min(map(data.find, repeat(b"\n"), range(start, end - width + 1, width), stops), default=0) < 0


def _long_line(block: memoryview, carried: int, max_line: int) -> tuple[int, int]:
    """(index in `block` of the first line longer than `max_line`, or -1; its length so far). `carried`
    is the length of the line the block continues."""
    breaks = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
    if not len(breaks):
        length = carried + len(block)
        return (0 if length > max_line else -1), length
    # Lengths without the line break: the first line goes on from the block before.
    lengths = np.diff(breaks, prepend=-1 - carried) - 1
    over = np.flatnonzero(lengths > max_line)
    if len(over):
        return int(over[0]), int(lengths[over[0]])
    tail = len(block) - int(breaks[-1]) - 1
    return (len(breaks) if tail > max_line else -1), tail


def _line_refusal(display: str, severity: Severity, line: int, length: int, max_line: int) -> Finding:
    return make_finding("line-too-long", severity, display,
                        f"line {line} is longer than {max_line} bytes ({length} read); the file is not parsed",
                        line=line, value=length, rule=f"{_RULE}: at most {max_line} bytes per line",
                        fix="end every row with a line break; an ID holds at most 500 characters and a label 200 "
                            "(is it a text file at all? a file of NUL bytes has no line break)")


def _finish_refused(fh: BinaryIO, digest: Any, display: str, tail: bytes) -> None:
    """Hash the rest of a refused file one block at a time (its fingerprint is still listed), and refuse a
    private key in it as `read_bytes` does (the file is still copied into a bundle)."""
    while block := fh.read(BLOCK):
        digest.update(block)
        window = tail + block
        if holds_private_key(window):
            refuse_secret(window, display)
        tail = window[-_KEY_OVERLAP:]


def _read_whole(fh: BinaryIO, size: int, display: str, severity: Severity, max_line: int) -> BoundedRead:
    """A file already known to be within the corpus's size limit: one read, no copy, then the line check."""
    data = fh.read(size + 1)
    if len(data) != size:
        raise UnreadableInputError(f"{display}: changed while being read; read it when it is complete")
    digest = hashlib.sha256(data).hexdigest()
    refuse_secret(data, display)
    if _may_hold_long_line(data, 0, size, max_line):
        over, length = _long_line(memoryview(data), 0, max_line)
        if over >= 0:
            return BoundedRead(None, size, digest, _line_refusal(display, severity, over + 1, length, max_line))
    return BoundedRead(data, size, digest)


def read_bounded(path: Path, display: str, *, max_bytes: int | None = None, max_line: int = MAX_LINE_BYTES,
                 limits: Limits | None = None, severity: Severity = Severity.ERROR) -> BoundedRead:
    """Read an id/label file, hash it and refuse it unparsed when a line or the whole is too long.

    A file larger than `max_bytes` (what the corpus could need, see `predictions.size_limit`) is refused
    before any of it is kept; one within it is read whole (memory: bounded by the corpus). Without
    `max_bytes` (the expected IDs, which define the corpus) the file is read in blocks and a line longer
    than `max_line` bytes refuses it as soon as it is seen. A refused file's rest is only hashed, one block
    at a time. The regular-file, `--max-file-bytes` and private-key rules of `read_bytes` apply.
    """
    lim = resolve(limits)
    digest = hashlib.sha256()
    try:
        fh, info = open_regular(path, display, lim)
        with fh:
            if max_bytes is not None and info.st_size > max_bytes:
                refusal = make_finding("file-too-large", severity, display,
                                       f"{info.st_size} bytes: more than any file of this corpus can need "
                                       f"({max_bytes}); not parsed", value=info.st_size,
                                       rule=f"{_RULE}: at most {max_bytes} bytes for this corpus",
                                       fix="write one id,label row per expected ID, nothing else (is it the right "
                                           "file?)")
                _finish_refused(fh, digest, display, b"")
                return BoundedRead(None, info.st_size, digest.hexdigest(), refusal)
            if max_bytes is not None:
                return _read_whole(fh, info.st_size, display, severity, max_line)
            blocks: list[bytes] = []
            carried, size = 0, 0
            while block := fh.read(BLOCK):
                digest.update(block)
                size += len(block)
                if size > lim.max_file_bytes:
                    raise UnreadableInputError(f"{display}: grew while being read; read it when it is complete")
                first, last = block.find(b"\n"), block.rfind(b"\n")
                long_first = carried + (first if first >= 0 else len(block)) > max_line
                if long_first or _may_hold_long_line(block, 0, len(block), max_line):
                    over, length = _long_line(memoryview(block), carried, max_line)
                    if over >= 0:
                        refuse_secret(block, display)
                        line = sum(b.count(b"\n") for b in blocks) + over + 1
                        _finish_refused(fh, digest, display, block[-_KEY_OVERLAP:])
                        return BoundedRead(None, info.st_size, digest.hexdigest(),
                                           _line_refusal(display, severity, line, length, max_line))
                carried = carried + len(block) if last < 0 else len(block) - last - 1
                blocks.append(block)
    except OSError as exc:
        raise UnreadableInputError(f"{display}: cannot be read ({exc.strerror}); check its permissions") from None
    data = blocks[0] if len(blocks) == 1 else b"".join(blocks)
    del blocks
    refuse_secret(data, display)
    return BoundedRead(data, len(data), digest.hexdigest())


def second_line_starts(path: Path, display: str, start: bytes) -> bool:
    """Whether the file's second line (the first row after the header) starts with `start`, from a look at its
    first few kilobytes; False when it cannot be read (reading it whole reports why). For ordering work only."""
    try:
        fh, _ = open_regular(path, display, resolve(None))
        with fh:
            head = fh.read(PEEK_BYTES)
    except (AuditError, OSError):
        return False
    lines = head.split(b"\n", 2)
    return len(lines) > 2 and lines[1].startswith(start)
