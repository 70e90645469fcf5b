"""A bundle zip's bytes walked from byte 0: every byte belongs to a header, a name, an allowed field or an entry.

Readers disagree on a zip that is not plain: Python's zipfile and `unzip` take the central directory, `bsdtar`
in a pipe walks the local headers, `bsdtar` and 7-Zip follow a ZIP64 locator before the end record, and a PDF
viewer looks for `%PDF-` in the first kilobyte and `startxref` in the last. So a bundle zip is accepted only when
its bytes are accounted for: local entries back to back from byte 0 (header, name, extra fields from the
allow-list of `zipextra`, data, the data descriptor its flag announces, of the width its header implies), the
central directory right after them with one matching entry each, the ZIP64 end record and locator only where a
field holds its marker, and the end record last with an empty comment. The layout is read from the headers
alone, in bounded reads against the file's real size, before zipfile parses anything.
"""

from __future__ import annotations

import struct
import unicodedata
from dataclasses import dataclass, replace
from typing import BinaryIO

from generator.bundle.bundlelayout import MAX_DEPTH
from generator.bundle.zip import zipextra
from generator.bundle.zip.zipextra import U16, U32, ZipLayoutError
from generator.core.limits import Limits, limit_message

LOCAL, CENTRAL, END = b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06"
END64, LOCATOR64, DESCRIPTOR = b"PK\x06\x06", b"PK\x06\x07", b"PK\x07\x08"
PDF_WINDOW = 1024  # a PDF viewer accepts `%PDF-` anywhere in the first kilobyte, `startxref` in the last
MAX_NAME_BYTES = 1024
# The largest central entry a bundle zip can hold: the header, a name, and every allowed extra field at its
# largest; a central directory claiming more per entry is refused before it is read.
MAX_CENTRAL_ENTRY = 46 + MAX_NAME_BYTES + (4 + 13) + (4 + 19) + (4 + 24) + (4 + 32)
_FLAGS_ALLOWED = 0x0008 | 0x0800 | 0x0006  # data descriptor, UTF-8 names, deflate's compression-level bits
_SIGNATURES = (END, END64, LOCATOR64)
_SCAN = 1 << 20

__all__ = ["Entry", "ZipLayoutError", "ZipLimitError", "check_layout", "path_key"]


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
    external: int = 0  # the external attributes: a Unix mode in the upper 16 bits, DOS attributes below
    data_offset: int = 0  # where its compressed data starts, once its local header is read


def _read_at(fh: BinaryIO, offset: int, size: int) -> bytes:
    fh.seek(offset)
    data = fh.read(size)
    if len(data) != size:
        raise ZipLayoutError("", "the zip ends inside a header (truncated or damaged)")
    return data


def _name(raw: bytes, flags: int) -> str:
    shown = raw.decode("utf-8", "replace")
    if len(raw) > MAX_NAME_BYTES:
        raise ZipLayoutError(shown[:80], f"its name is longer than {MAX_NAME_BYTES} bytes")
    if flags & 0x0800:
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ZipLayoutError(shown, "its name is flagged UTF-8 but is not") from None
    elif raw.isascii():
        name = raw.decode("ascii")
    else:  # zipfile reads cp437, unzip the locale's charset: two readers, two names
        raise ZipLayoutError(shown, "its name is not ASCII and is not flagged UTF-8: readers decode it differently")
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in name):
        raise ZipLayoutError(name, "its name holds control characters (shown escaped)")  # the CLI escapes them
    return name


def _end_record(fh: BinaryIO, file_size: int, lim: Limits) -> tuple[int, int, int]:
    """(entries, central directory offset, its size) from the end record, which must end the file (the zip
    comment is empty, nothing follows), and from its ZIP64 record exactly when a field holds the marker."""
    if file_size < 22:
        raise ZipLayoutError("", "too short to be a zip")
    tail = _read_at(fh, file_size - 22, 22)
    if tail[:4] != END or tail[20:22] != b"\0\0":
        raise ZipLayoutError("", "the zip's end record is not its last 22 bytes: it has a comment or bytes after "
                                 "its end (a zip comment or appended data can make it a PDF as well)")
    fields = struct.unpack_from("<HHHHII", tail, 4)
    end = file_size - 22
    before = _read_at(fh, end - 20, 20) if end >= 20 else b""
    if U16 in fields[2:4] or U32 in fields[4:6]:
        end, fields = _zip64_end(fh, file_size, fields, before)
    elif before[:4] == LOCATOR64:
        raise ZipLayoutError("", "a ZIP64 locator lies before the end record, which marks no ZIP64 value: bsdtar "
                                 "and 7-Zip would follow it to another central directory")
    disk, cd_disk, here, entries, cd_size, cd_offset = fields
    if disk or cd_disk or here != entries:
        raise ZipLayoutError("", "a zip split over several disks is not a bundle zip")
    if entries > lim.max_zip_entries:
        raise ZipLimitError("", limit_message("max_zip_entries", lim, f"{entries} entries"))
    if cd_offset + cd_size != end:
        raise ZipLayoutError("", "the central directory does not end where the end record starts (bytes before "
                                 "the zip, or between its parts)")
    if cd_size > entries * MAX_CENTRAL_ENTRY:
        raise ZipLayoutError("", f"its end record claims a central directory of {cd_size} bytes for {entries} "
                                 "entries, more than such entries can fill")
    return entries, cd_offset, cd_size


def _zip64_end(fh: BinaryIO, file_size: int, fields: tuple[int, ...],
               locator: bytes) -> tuple[int, tuple[int, ...]]:
    """The ZIP64 end record's fields, read through the locator right before the end record; every field the
    32-bit record does not mark must say the same in both (readers take either)."""
    if locator[:4] != LOCATOR64:
        raise ZipLayoutError("", "the zip marks ZIP64 sizes but has no ZIP64 end locator")
    disk, at, disks = struct.unpack_from("<IQI", locator, 4)
    if at != file_size - 22 - 20 - 56 or disk or disks != 1:
        raise ZipLayoutError("", "the ZIP64 end record is not where it must be, right before its locator")
    record = _read_at(fh, at, 56)
    size, = struct.unpack_from("<Q", record, 4)
    if record[:4] != END64 or size != 44:
        raise ZipLayoutError("", "the ZIP64 end record is damaged or carries extensible data")
    wide = struct.unpack_from("<IIQQQQ", record, 16)
    for narrow, value, marker in zip(fields, wide, (U16, U16, U16, U16, U32, U32), strict=True):
        if narrow != marker and narrow != value:
            raise ZipLayoutError("", "the end record and the ZIP64 end record disagree")
    return at, wide


def _central(fh: BinaryIO, entries: int, cd_offset: int, cd_size: int) -> list[Entry]:
    """The central directory's entries, read one header at a time (never the claimed size at once)."""
    fh.seek(cd_offset)
    out, pos = [], 0
    for _ in range(entries):
        head = fh.read(46)
        if len(head) != 46 or head[:4] != CENTRAL or pos + 46 > cd_size:
            raise ZipLayoutError("", "the central directory holds fewer entries than its end record counts")
        # the mode and attributes are checked whatever system the entry names as its writer
        (system, flags, method, crc, compressed, size, n_name, n_extra, n_comment, disk, internal, external,
         offset) = struct.unpack_from("<xB2xHH4xIIIHHHHHII", head, 4)
        variable = fh.read(n_name + n_extra)
        if len(variable) != n_name + n_extra or pos + 46 + n_name + n_extra + n_comment > cd_size:
            raise ZipLayoutError("", "a central directory entry overruns the central directory")
        name = _name(variable[:n_name], flags)
        if system == 0 and not name.isascii():  # unzip reads an MS-DOS system's local name in the DOS code page
            raise ZipLayoutError(name, "its name is not ASCII and its writer names an MS-DOS system: unzip reads "
                                       "such a name in the DOS code page and warns that the headers disagree")
        if any(sig in variable for sig in _SIGNATURES):
            raise ZipLayoutError(name, "its central header holds a zip end or ZIP64 signature, which a reader "
                                       "searching for the end could follow")
        if n_comment or disk or internal & ~1:
            raise ZipLayoutError(name, "the entry has a comment, lies on another disk or has unknown attributes")
        extras = zipextra.parse(variable[n_name:], name, "central")
        size, compressed, at = zipextra.zip64_values(extras, [size, compressed, offset], name, "central")
        zipextra.check_kind(name, external, size, compressed)
        out.append(Entry(name, variable[:n_name], flags, method, crc, compressed, size, at, variable[n_name:],
                         external))
        pos += 46 + n_name + n_extra
    if pos != cd_size:
        raise ZipLayoutError("", "the central directory holds more than its end record counts")
    return out


def _descriptor(fh: BinaryIO, at: int, e: Entry, wide: bool) -> int:
    """The length of the data descriptor after an entry's data: it repeats the CRC and sizes, 8 bytes each when
    the local header carries a ZIP64 field and 4 otherwise (a streaming reader decides the width so), and its
    signature may be left out only when the CRC could not be taken for it."""
    fmt, width = ("<IQQ", 20) if wide else ("<III", 12)
    head = _read_at(fh, at, 4)
    sig = 4 if head == DESCRIPTOR else 0
    if not sig and (e.method == 0 or e.crc == struct.unpack("<I", DESCRIPTOR)[0]):
        raise ZipLayoutError(e.name, "its data descriptor has no signature where a streaming reader needs one")
    if struct.unpack(fmt, _read_at(fh, at + sig, width)) != (e.crc, e.compressed, e.size):
        raise ZipLayoutError(e.name, "its data descriptor does not repeat the CRC and sizes of the central "
                                     f"directory in the {'ZIP64' if wide else '32-bit'} width its header implies")
    return sig + width


def _stored_clean(fh: BinaryIO, at: int, e: Entry) -> None:
    """A stored entry with a data descriptor ends where a streaming reader finds the descriptor's signature: it
    must not occur inside the data."""
    left, carry = e.compressed, b""
    fh.seek(at)
    while left:
        block = carry + fh.read(min(_SCAN, left))
        if len(block) == len(carry):
            raise ZipLayoutError(e.name, "entry is cut short: the zip ends inside its data")
        left -= len(block) - len(carry)
        if DESCRIPTOR in block:
            raise ZipLayoutError(e.name, "it is stored with a data descriptor whose signature also occurs in its "
                                         "data: a streaming reader would end the entry there")
        carry = block[-3:]


def _local(fh: BinaryIO, at: int, e: Entry) -> tuple[int, int]:
    """Check the local header at `at` against the central entry: (where its data starts, where the next entry
    must start)."""
    if e.offset != at:
        raise ZipLayoutError(e.name, "the entry does not start where the one before it ends (hidden bytes or "
                                     "an entry outside the central directory)")
    head = _read_at(fh, at, 30)
    if head[:4] != LOCAL:
        raise ZipLayoutError(e.name, "no local header where the central directory places the entry")
    flags, method, _, _, crc, compressed, size, n_name, n_extra = struct.unpack_from("<HHHHIIIHH", head, 6)
    raw = _read_at(fh, at + 30, n_name)
    local = zipextra.parse(_read_at(fh, at + 30 + n_name, n_extra), e.name, "local")
    if raw != e.raw_name or flags != e.flags or method != e.method:
        raise ZipLayoutError(e.name, "its local header and its central directory entry disagree on the name, "
                                     "flags or method")
    if e.flags & ~_FLAGS_ALLOWED or e.method not in (0, 8):
        raise ZipLayoutError(e.name, "it is encrypted, or stored with a method other than stored or deflate")
    zipextra.same_meaning(local, zipextra.parse(e.extra, e.name, "central"), e.name)
    size, compressed = zipextra.zip64_values(local, [size, compressed], e.name, "local")
    deferred = bool(flags & 0x0008)  # a streaming writer leaves a value 0 here and gives it after the data
    if any(v != want and not (deferred and v == 0) for v, want in ((crc, e.crc), (compressed, e.compressed),
                                                                   (size, e.size))):
        raise ZipLayoutError(e.name, "its local header and its central directory entry disagree on its CRC or "
                                     f"sizes (local {compressed}/{size}, central {e.compressed}/{e.size})")
    data = at + 30 + n_name + n_extra
    end = data + e.compressed
    if not deferred:
        return data, end
    if e.method == 0:
        _stored_clean(fh, data, e)
    return data, end + _descriptor(fh, end, e, local.get(zipextra.ZIP64) is not None)


def path_key(name: str) -> str:
    """The one path a file system could make of a name: components split on '/', empty and '.' ones dropped,
    Unicode-normalised (NFC) and case-folded (a case-insensitive disk)."""
    parts = [p for p in name.split("/") if p not in ("", ".")]
    return unicodedata.normalize("NFC", "/".join(parts)).casefold()


def _names(entries: list[Entry]) -> None:
    seen: dict[str, str] = {}
    for e in entries:
        if "\\" in e.name:
            raise ZipLayoutError(e.name, "its name uses '\\' between folders, as PowerShell 5.1's Compress-Archive "
                                         "writes: readers make other paths of it",
                                 "zip the folder with `tar -a -cf NAME.zip FOLDER` (Windows 10 and later), 7-Zip, "
                                 "Explorer's 'Send to > Compressed folder' or PowerShell 7's Compress-Archive "
                                 "instead")
        rel = e.name[2:] if e.name.startswith("./") else e.name  # bsdtar -C dir . and ./dir write './'
        if not rel:
            if e.name != "./":
                raise ZipLayoutError(e.name, "entry has no file name")
            continue
        parts = rel.rstrip("/").split("/")
        if any(p in ("", ".") for p in parts):
            raise ZipLayoutError(e.name, "its path has an empty or '.' part ('//' or '/./'): readers resolve it "
                                         "to another entry's path")
        if len(parts) > MAX_DEPTH:
            raise ZipLayoutError(e.name[:80], f"its path is more than {MAX_DEPTH} folders deep")
        key = path_key(rel)
        if key in seen:
            raise ZipLayoutError(e.name, f"it and {seen[key]!r} name one path (after case folding and Unicode "
                                         "normalisation): an extractor keeps one of them")
        seen[key] = e.name


def check_layout(fh: BinaryIO, lim: Limits) -> list[Entry]:
    """The entries of a plain bundle zip, from its headers; ZipLayoutError names the first departure."""
    file_size = fh.seek(0, 2)
    if b"%PDF-" in _read_at(fh, 0, min(PDF_WINDOW, file_size)):
        raise ZipLayoutError("", "a PDF header lies in its first kilobyte: PDF viewers would open it as a PDF")
    if _read_at(fh, 0, 4) != LOCAL:
        raise ZipLayoutError("", "it does not start with a zip entry (bytes before the zip)")
    tail = _read_at(fh, max(0, file_size - PDF_WINDOW), min(PDF_WINDOW, file_size))
    if b"startxref" in tail or b"%%EOF" in tail:
        raise ZipLayoutError("", "a PDF's end (startxref, %%EOF) lies in its last kilobyte: PDF viewers would "
                                 "open a document hidden in it")
    count, cd_offset, cd_size = _end_record(fh, file_size, lim)
    entries = _central(fh, count, cd_offset, cd_size)
    _names(entries)
    at, placed = 0, []
    for e in entries:
        data, at = _local(fh, at, e)
        placed.append(replace(e, data_offset=data))
    if at != cd_offset:
        raise ZipLayoutError("", "bytes lie between the last entry and the central directory")
    return placed
