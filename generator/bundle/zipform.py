"""A bundle zip's bytes, read as `unzip`, `bsdtar` and a PDF viewer read them: only the one canonical layout passes.

Readers disagree on a zip that is not plain: Python's zipfile takes the central directory and accepts data before
it, `bsdtar` in a pipe walks the local headers, `unzip` renames an entry after its Info-ZIP Unicode Path field,
and a PDF viewer looks for `%PDF-` in the first kilobyte. So a bundle zip must be what `build --zip` (or any
plain zip tool) writes: local entries back to back from byte 0, the central directory right after them, each
of its entries matching its local header, the end record last with an empty comment, no extra field that
renames an entry, and no two names that one file system would make one path. The layout is read from the
headers alone, before zipfile parses anything, so a central directory claiming millions of entries costs nothing.
"""

from __future__ import annotations

import stat
import struct
import unicodedata
from dataclasses import dataclass, replace
from typing import BinaryIO

from generator.bundle.bundlelayout import MAX_DEPTH
from generator.core.limits import Limits, limit_message

LOCAL, CENTRAL, END = b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06"
END64, LOCATOR64, DESCRIPTOR = b"PK\x06\x06", b"PK\x06\x07", b"PK\x07\x08"
PDF_WINDOW = 1024  # a PDF viewer accepts `%PDF-` anywhere in the first kilobyte
MAX_NAME_BYTES = 1024
RENAMING_EXTRAS = {0x7075: "an Info-ZIP Unicode Path field (unzip and bsdtar extract the entry under its name)"}
_FLAGS_ALLOWED = 0x0008 | 0x0800 | 0x0006  # data descriptor, UTF-8 names, deflate's compression-level bits
_U16, _U32 = 0xFFFF, 0xFFFFFFFF


class ZipLayoutError(Exception):
    """Why a zip is not a plain bundle zip: the entry (or '' for the archive) and the reason."""

    def __init__(self, entry: str, reason: str) -> None:
        super().__init__(reason)
        self.entry, self.reason = entry, reason


class ZipLimitError(ZipLayoutError):
    """A plain zip past one of the limits (--max-zip-entries): refused before its central directory is read."""


@dataclass(frozen=True)
class Entry:
    """One central-directory entry, as its bytes say: name, flags, method, CRC, sizes and local header offset."""

    name: str
    raw_name: bytes
    flags: int
    method: int
    crc: int
    compressed: int
    size: int
    offset: int
    extra: bytes
    external: int = 0  # the external attributes: a Unix mode in the upper 16 bits
    data_offset: int = 0  # where its compressed data starts, once its local header is read


def _read_at(fh: BinaryIO, offset: int, size: int) -> bytes:
    fh.seek(offset)
    data = fh.read(size)
    if len(data) != size:
        raise ZipLayoutError("", "the zip ends inside a header (truncated or damaged)")
    return data


def _extras(extra: bytes, entry: str) -> dict[int, bytes]:
    """The extra field's (id -> data) blocks; one overrunning the field, repeated, or renaming is refused."""
    out: dict[int, bytes] = {}
    pos = 0
    while pos < len(extra):
        if pos + 4 > len(extra):
            raise ZipLayoutError(entry, "its extra field is damaged (a block header is cut off)")
        ident, size = struct.unpack_from("<HH", extra, pos)
        if pos + 4 + size > len(extra) or ident in out:
            raise ZipLayoutError(entry, "its extra field is damaged (a block overruns it or is repeated)")
        if ident in RENAMING_EXTRAS:
            raise ZipLayoutError(entry, f"it carries {RENAMING_EXTRAS[ident]}: readers would disagree on its name")
        out[ident] = extra[pos + 4:pos + 4 + size]
        pos += 4 + size
    return out


def _zip64_sizes(blocks: dict[int, bytes], size: int, compressed: int, offset: int | None,
                 entry: str) -> tuple[int, int, int | None]:
    """Sizes (and offset) that the 32-bit fields leave to the ZIP64 extra block, in its fixed order."""
    data, pos = blocks.get(0x0001, b""), 0
    values = []
    for value in (size, compressed, offset):
        if value == _U32:
            if pos + 8 > len(data):
                raise ZipLayoutError(entry, "a size marked as ZIP64 has no ZIP64 extra field")
            value = struct.unpack_from("<Q", data, pos)[0]
            pos += 8
        values.append(value)
    return values[0] or 0, values[1] or 0, values[2]


def _name(raw: bytes, flags: int) -> str:
    shown = raw.decode("utf-8", "replace")
    if len(raw) > MAX_NAME_BYTES:
        raise ZipLayoutError(shown[:80], f"its name is longer than {MAX_NAME_BYTES} bytes")
    if flags & 0x0800:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ZipLayoutError(shown, "its name is flagged UTF-8 but is not") from None
    if not raw.isascii():  # zipfile reads cp437, unzip the locale's charset: two readers, two names
        raise ZipLayoutError(shown, "its name is not ASCII and is not flagged UTF-8: readers decode it differently")
    return raw.decode("ascii")


def _end_record(fh: BinaryIO, file_size: int, lim: Limits) -> tuple[int, int, int]:
    """(entries, central directory offset, its size) from the end record (and its ZIP64 form), which must end
    the file: the zip comment is empty, and nothing follows."""
    if file_size < 22:
        raise ZipLayoutError("", "too short to be a zip")
    tail = _read_at(fh, file_size - 22, 22)
    if tail[:4] != END or tail[20:22] != b"\0\0":
        raise ZipLayoutError("", "the zip's end record is not its last 22 bytes: it has a comment or bytes after "
                                 "its end (a zip comment or appended data can make it a PDF as well)")
    disk, cd_disk, here, entries, cd_size, cd_offset = struct.unpack_from("<HHHHII", tail, 4)
    end = file_size - 22
    if _U16 in (here, entries) or _U32 in (cd_size, cd_offset):
        locator = _read_at(fh, file_size - 42, 20)
        if locator[:4] != LOCATOR64:
            raise ZipLayoutError("", "the zip marks ZIP64 sizes but has no ZIP64 end locator")
        end = struct.unpack_from("<Q", locator, 8)[0]
        if end != file_size - 42 - 56:
            raise ZipLayoutError("", "the ZIP64 end record is not where it must be, right before its locator")
        record = _read_at(fh, end, 56)
        if record[:4] != END64:
            raise ZipLayoutError("", "the ZIP64 end record is damaged")
        disk, cd_disk, here, entries, cd_size, cd_offset = struct.unpack_from("<IIQQQQ", record, 16)
    if disk or cd_disk or here != entries:
        raise ZipLayoutError("", "a zip split over several disks is not a bundle zip")
    if entries > lim.max_zip_entries:
        raise ZipLimitError("", limit_message("max_zip_entries", lim, f"{entries} entries"))
    if cd_offset + cd_size != end:
        raise ZipLayoutError("", "the central directory does not end where the end record starts (bytes before "
                                 "the zip, or between its parts)")
    return entries, cd_offset, cd_size


def _central(fh: BinaryIO, entries: int, cd_offset: int, cd_size: int) -> list[Entry]:
    data = _read_at(fh, cd_offset, cd_size)
    out, pos = [], 0
    for _ in range(entries):
        if data[pos:pos + 4] != CENTRAL or pos + 46 > len(data):
            raise ZipLayoutError("", "the central directory holds fewer entries than its end record counts")
        (flags, method, crc, compressed, size, n_name, n_extra, n_comment, disk, external, offset) = \
            struct.unpack_from("<4xHH4xIIIHHHH2xII", data, pos + 4)
        if pos + 46 + n_name + n_extra + n_comment > len(data):
            raise ZipLayoutError("", "a central directory entry overruns the central directory")
        raw = data[pos + 46:pos + 46 + n_name]
        extra = data[pos + 46 + n_name:pos + 46 + n_name + n_extra]
        name = _name(raw, flags)
        if n_comment or disk:
            raise ZipLayoutError(name, "the entry has a comment or lies on another disk")
        size, compressed, at = _zip64_sizes(_extras(extra, name), size, compressed, offset, name)
        _mode_check(name, external >> 16)
        out.append(Entry(name, raw, flags, method, crc, compressed, size, at or 0, extra, external))
        pos += 46 + n_name + n_extra
    if pos != len(data):
        raise ZipLayoutError("", "the central directory holds more than its end record counts")
    return out


def _mode_check(name: str, mode: int) -> None:
    """A Unix mode (when one is written) of a plain file or folder, without setuid, setgid or sticky bits:
    `bsdtar` extracts an entry as the device node, link or setuid program its mode says."""
    kind = stat.S_IFMT(mode)
    if kind == stat.S_IFLNK:
        raise ZipLayoutError(name, "entry is a symbolic link; bundles hold plain files only")
    wanted = stat.S_IFDIR if name.endswith("/") else stat.S_IFREG
    if mode and (kind not in (0, wanted) or mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX)):
        raise ZipLayoutError(name, f"its mode {mode:o} is not a plain {'folder' if name.endswith('/') else 'file'}'s "
                                   "(a device, link or setuid program to bsdtar)")


def _descriptor(fh: BinaryIO, at: int, e: Entry) -> int:
    """The length of the data descriptor after an entry's data, which must repeat its CRC and sizes."""
    head = _read_at(fh, at, min(24, _size(fh) - at))
    body = head[4:] if head[:4] == DESCRIPTOR else head
    sig = 4 if head[:4] == DESCRIPTOR else 0
    for width, fmt in ((8, "<IQQ"), (4, "<III")):
        if len(body) >= 4 + 2 * width and struct.unpack_from(fmt, body) == (e.crc, e.compressed, e.size):
            return sig + 4 + 2 * width
    raise ZipLayoutError(e.name, "its data descriptor does not repeat the CRC and sizes of the central directory")


def _size(fh: BinaryIO) -> int:
    return fh.seek(0, 2)


def _local(fh: BinaryIO, at: int, e: Entry) -> int:
    """Check the local header at `at` against the central entry; the offset where the next entry must start."""
    if e.offset != at:
        raise ZipLayoutError(e.name, "the entry does not start where the one before it ends (hidden bytes or "
                                     "an entry outside the central directory)")
    head = _read_at(fh, at, 30)
    if head[:4] != LOCAL:
        raise ZipLayoutError(e.name, "no local header where the central directory places the entry")
    flags, method, _, _, crc, compressed, size, n_name, n_extra = struct.unpack_from("<HHHHIIIHH", head, 6)
    raw = _read_at(fh, at + 30, n_name)
    blocks = _extras(_read_at(fh, at + 30 + n_name, n_extra), e.name)
    if raw != e.raw_name or flags != e.flags or method != e.method:
        raise ZipLayoutError(e.name, "its local header and its central directory entry disagree on the name, "
                                     "flags or method")
    if e.flags & ~_FLAGS_ALLOWED or e.method not in (0, 8):
        raise ZipLayoutError(e.name, "it is encrypted, or stored with a method other than stored or deflate")
    if e.method == 0 and flags & 0x0008:  # a streaming reader searches a stored entry's data for its descriptor
        raise ZipLayoutError(e.name, "it is stored uncompressed with a data descriptor, whose end only a search of "
                                     "its data finds")
    end = at + 30 + n_name + n_extra + e.compressed
    size, compressed, _ = _zip64_sizes(blocks, size, compressed, None, e.name)
    deferred = bool(flags & 0x0008)  # a streaming writer leaves a value 0 here and gives it after the data
    if any(v != want and not (deferred and v == 0) for v, want in ((crc, e.crc), (compressed, e.compressed),
                                                                   (size, e.size))):
        raise ZipLayoutError(e.name, "its local header and its central directory entry disagree on its CRC or "
                                     f"sizes (local {compressed}/{size}, central {e.compressed}/{e.size})")
    return end + _descriptor(fh, end, e) if deferred else end


def path_key(name: str) -> str:
    """The one path a file system could make of a name: components split on '/', empty and '.' ones dropped,
    Unicode-normalised (NFC) and case-folded (a case-insensitive disk)."""
    parts = [p for p in name.split("/") if p not in ("", ".")]
    return unicodedata.normalize("NFC", "/".join(parts)).casefold()


def _names(entries: list[Entry]) -> None:
    seen: dict[str, str] = {}
    for e in entries:
        parts = e.name.rstrip("/").split("/")
        if any(p in ("", ".") for p in parts):
            raise ZipLayoutError(e.name, "its path has an empty or '.' part ('//' or '/./'): readers resolve it "
                                         "to another entry's path")
        if len(parts) > MAX_DEPTH:
            raise ZipLayoutError(e.name[:80], f"its path is more than {MAX_DEPTH} folders deep")
        key = path_key(e.name)
        if key in seen:
            raise ZipLayoutError(e.name, f"it and {seen[key]!r} name one path (after case folding and Unicode "
                                         "normalisation): an extractor keeps one of them")
        seen[key] = e.name


def check_layout(fh: BinaryIO, lim: Limits) -> list[Entry]:
    """The entries of a plain bundle zip, from its headers; ZipLayoutError names the first departure."""
    file_size = _size(fh)
    if b"%PDF-" in _read_at(fh, 0, min(PDF_WINDOW, file_size)):
        raise ZipLayoutError("", "a PDF header lies in its first kilobyte: PDF viewers would open it as a PDF")
    if _read_at(fh, 0, 4) != LOCAL:
        raise ZipLayoutError("", "it does not start with a zip entry (bytes before the zip)")
    count, cd_offset, cd_size = _end_record(fh, file_size, lim)
    entries = _central(fh, count, cd_offset, cd_size)
    _names(entries)
    at, placed = 0, []
    for e in entries:
        start, at = at, _local(fh, at, e)
        placed.append(replace(e, data_offset=_data_offset(fh, start)))
    if at != cd_offset:
        raise ZipLayoutError("", "bytes lie between the last entry and the central directory")
    return placed


def _data_offset(fh: BinaryIO, header: int) -> int:
    n_name, n_extra = struct.unpack_from("<HH", _read_at(fh, header + 26, 4))
    return header + 30 + n_name + n_extra
