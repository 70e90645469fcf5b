"""The attacker's zip writer for tests/test_attacks_container.py: entries laid out byte by byte, so that a test can
give the local header and the central directory different names or sizes, hide an entry between two others, add
an extra field, or put bytes before, between and after the parts. Nothing here checks anything."""

from __future__ import annotations

import struct
import zipfile
import zlib
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class RawEntry:
    """One entry as written: its name (local and central may differ), data, method and extra fields."""

    name: bytes
    data: bytes  # uncompressed
    method: int = zipfile.ZIP_DEFLATED
    flags: int = 0x0800
    local_extra: bytes = b""
    central_extra: bytes = b""
    central_name: bytes | None = None  # None: the same as the local one
    in_central: bool = True  # False: a local entry the central directory does not list
    local_size_delta: int = 0  # added to the compressed size in the local header only
    mode: int = 0o100644  # the Unix mode in the central directory's external attributes
    compressed: bytes | None = field(default=None, repr=False)
    dos: int = 0  # the DOS attributes: the low 16 bits of the external attributes
    # a data descriptor after the data (flag 3 set, the local CRC and sizes 0): "32" or "64" wide, "-nosig"
    # without its signature
    descriptor: str | None = None
    zip64: bool = False  # sizes marked 0xFFFFFFFF in both headers and given in ZIP64 fields
    made_by: int = 0x0314


def _compress(e: RawEntry) -> bytes:
    if e.compressed is not None:
        return e.compressed
    if e.method == zipfile.ZIP_STORED:
        return e.data
    co = zlib.compressobj(6, zlib.DEFLATED, -15)
    return co.compress(e.data) + co.flush()


def write_zip(entries: list[RawEntry], *, prefix: bytes = b"", comment: bytes = b"", between: bytes = b"",
              count: int | None = None) -> bytes:
    """The zip of `entries` with `prefix` before it (offsets relative to the zip, as `cat junk a.zip` makes),
    `between` after each entry's data, and `comment`; `count` overrides the end record's entry count."""
    out, central = bytearray(), bytearray()
    listed = 0
    for e in entries:
        packed, crc = _compress(e), zlib.crc32(e.data)
        offset = len(out)
        flags = e.flags | (0x0008 if e.descriptor else 0)
        sizes = (crc, len(packed) + e.local_size_delta, len(e.data))
        local_extra, central_extra, central_sizes = e.local_extra, e.central_extra, (len(packed), len(e.data))
        if e.zip64:
            local_extra = struct.pack("<HHQQ", 1, 16, len(e.data), len(packed)) + local_extra
            central_extra = struct.pack("<HHQQ", 1, 16, len(e.data), len(packed)) + central_extra
            sizes, central_sizes = (crc, 0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF)
        if e.descriptor:
            sizes = (0, 0xFFFFFFFF, 0xFFFFFFFF) if e.zip64 else (0, 0, 0)
        out += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, flags, e.method, 0, 0x21, *sizes,
                           len(e.name), len(local_extra))
        out += e.name + local_extra + packed
        if e.descriptor:
            wide = e.descriptor.startswith("64")
            out += (b"" if e.descriptor.endswith("-nosig") else b"PK\x07\x08") + struct.pack(
                "<IQQ" if wide else "<III", crc, len(packed), len(e.data))
        out += between
        if not e.in_central:
            continue
        name = e.central_name if e.central_name is not None else e.name
        central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", e.made_by, 20, flags, e.method, 0, 0x21,
                               crc, *central_sizes, len(name), len(central_extra), 0, 0, 0,
                               (e.mode << 16) | e.dos, offset)
        central += name + central_extra
        listed += 1
    n = listed if count is None else count
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, n, n, len(central), len(out), len(comment))
    return prefix + bytes(out) + bytes(central) + end + comment


def entries_of(zip_bytes: bytes) -> list[RawEntry]:
    """The entries of a genuine zip, to be changed and written again."""
    import io

    with zipfile.ZipFile(io.BytesIO(zip_bytes)) as zf:
        return [RawEntry(i.filename.encode(), zf.read(i)) for i in zf.infolist()]


def renamed(entries: list[RawEntry], which: str, **changes: object) -> list[RawEntry]:
    """`entries` with the one named `which` changed (dataclasses.replace)."""
    return [replace(e, **changes) if e.name == which.encode() else e for e in entries]  # type: ignore[arg-type]


def unicode_path_extra(name: str, header_name: bytes) -> bytes:
    """An Info-ZIP Unicode Path extra field (0x7075): `unzip` and `bsdtar` extract the entry as `name`."""
    body = struct.pack("<BI", 1, zlib.crc32(header_name)) + name.encode()
    return struct.pack("<HH", 0x7075, len(body)) + body


def _local(name: bytes, flags: int, method: int, crc: int, csize: int, size: int) -> bytes:
    return struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, flags, method, 0, 0x21, crc, csize, size, len(name),
                       0) + name


def _deflate(data: bytes) -> bytes:
    co = zlib.compressobj(6, zlib.DEFLATED, -15)
    return co.compress(data) + co.flush()


def hidden_after_deflate(zip_bytes: bytes, target: str, fake: bytes) -> bytes:
    """The zip with `fake` as `target` for a streaming reader only. The entry before `target` gets a data
    descriptor and, inside its compressed size but after the end of its deflate stream, a descriptor, a
    stored entry `target` holding `fake`, and a folder entry whose size swallows the genuine `target`.
    zipfile and `unzip` stop at the end of the deflate stream; `bsdtar` reading a pipe goes on from there."""
    import io

    with zipfile.ZipFile(io.BytesIO(zip_bytes)) as zf:
        entries = [(i.filename.encode(), zf.read(i)) for i in zf.infolist()]
    idx = [n for n, _ in entries].index(target.encode())
    note_name, note_data = entries[idx]
    note_packed = _deflate(note_data)
    note_record = _local(note_name, 0x0800, 8, zlib.crc32(note_data), len(note_packed), len(note_data)) + note_packed
    cdata = entries[idx - 1][1]
    cpacked, ccrc = _deflate(cdata), zlib.crc32(cdata)
    hidden = struct.pack("<4sIII", b"PK\x07\x08", ccrc, len(cpacked), len(cdata))
    hidden += _local(note_name, 0x0800, 0, zlib.crc32(fake), len(fake), len(fake)) + fake
    span = 16 + len(note_record)  # the carrier's own descriptor and the whole genuine record
    hidden += _local(note_name.rsplit(b"/", 1)[0] + b"/", 0x0800, 0, 0, span, span)
    out, central = bytearray(), bytearray()
    for i, (name, data) in enumerate(entries):
        offset = len(out)
        flags, packed = 0x0800, _deflate(data)
        if i == idx - 1:
            flags, packed = 0x0808, cpacked + hidden
            out += _local(name, flags, 8, 0, 0, 0) + packed + struct.pack("<4sIII", b"PK\x07\x08", ccrc,
                                                                          len(packed), len(data))
        elif i == idx:
            packed = note_packed
            out += note_record
        else:
            out += _local(name, flags, 8, zlib.crc32(data), len(packed), len(data)) + packed
        central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 0x0314, 20, flags, 8, 0, 0x21,
                               zlib.crc32(data), len(packed), len(data), len(name), 0, 0, 0, 0, 0o100644 << 16,
                               offset) + name
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), len(out), 0)
    return bytes(out) + bytes(central) + end
