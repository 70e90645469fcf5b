"""The bundle zip's layout check at each of its edges: every byte count, window, flag and field one unit each way."""

from __future__ import annotations

import functools
import io
import struct
import zlib
from collections.abc import Callable
from dataclasses import replace

import pytest
from zip_forgery import RawEntry, write_zip

from generator.bundle.bundlelayout import MAX_DEPTH
from generator.bundle.zip.zipform import ZipLimitError, check_layout
from generator.core.limits import Limits

STORED, DEFLATED = 0, 8
# The edges as the format and the viewers give them, written out: a test reading the module's constants would move
# with a wrong one. A PDF viewer looks for `%PDF-` in the first kilobyte and `startxref`/`%%EOF` in the last; a
# name has at most 1024 bytes; the largest central entry is its 46-byte header, that name and every allowed extra
# field at its largest (a block header of 4 bytes, then: timestamp 13, Info-ZIP Unix 19, ZIP64 24, NTFS 32).
PDF_WINDOW, MAX_NAME_BYTES = 1024, 1024
MAX_CENTRAL_ENTRY = 46 + 1024 + (4 + 13) + (4 + 19) + (4 + 24) + (4 + 32)
UT = struct.pack("<HHBI", 0x5455, 5, 1, 1_700_000_000)  # an extended timestamp: allowed in both headers


def _entry(name: str | bytes = "a.txt", data: bytes = b"hello", **changes: object) -> RawEntry:
    raw = name.encode() if isinstance(name, str) else name
    return replace(RawEntry(raw, data), **changes)  # type: ignore[arg-type]


def _zip(*entries: RawEntry, **kw: object) -> bytes:
    return write_zip(list(entries) or [_entry()], **kw)  # type: ignore[arg-type]


def _refusal(data: bytes, lim: Limits | None = None) -> str | None:
    """The reason check_layout refuses `data` for, or None when it accepts it."""
    try:
        check_layout(io.BytesIO(data), lim or Limits())
    except ZipLimitError as exc:
        return "LIMIT " + exc.reason
    except Exception as exc:  # noqa: BLE001 - a crash must fail the test that expects a reason
        reason = getattr(exc, "reason", None)
        assert reason is not None, f"not a layout refusal: {exc!r}"
        return str(reason)
    return None


def _fields(data: bytes) -> tuple[int, ...]:
    return struct.unpack_from("<HHHHIIH", data, len(data) - 22 + 4)


def _with_end(data: bytes, **changes: int) -> bytes:
    """`data` with end-record fields changed (disk, cd_disk, here, entries, cd_size, cd_offset, comment)."""
    names = ("disk", "cd_disk", "here", "entries", "cd_size", "cd_offset", "comment")
    values = dict(zip(names, _fields(data), strict=True)) | changes
    return data[:-22] + b"PK\x05\x06" + struct.pack("<HHHHIIH", *(values[n] for n in names))


def _zip64(data: bytes, marked: tuple[int, ...], *, at_delta: int = 0, locator_disk: int = 0, disks: int = 1,
           size: int = 44, wide_delta: dict[int, int] | None = None, locator: bool = True) -> bytes:
    """`data` with a ZIP64 end record and locator before its end record, the end record's fields `marked`
    (indexes 2-5: here, entries, cd_size, cd_offset) holding the ZIP64 marker."""
    fields = list(_fields(data)[:6])
    wide = list(fields)
    for i, delta in (wide_delta or {}).items():
        wide[i] += delta
    body = data[:-22]
    end64 = b"PK\x06\x06" + struct.pack("<QHHIIQQQQ", size, 45, 45, *wide)
    loc = b"PK\x06\x07" + struct.pack("<IQI", locator_disk, len(body) + at_delta, disks)
    for i in marked:
        fields[i] = 0xFFFF if i < 4 else 0xFFFFFFFF
    end = b"PK\x05\x06" + struct.pack("<HHHHIIH", *fields, 0)
    return body + end64 + (loc if locator else b"") + end


def _patch_central(data: bytes, offset: int, fmt: str, value: int, entry: int = 0) -> bytes:
    """`data` with one field of central entry `entry` (its offset in the 46-byte header) set to `value`."""
    cd = _fields(data)[5]
    for _ in range(entry):
        n_name, n_extra, n_comment = struct.unpack_from("<HHH", data, cd + 28)
        cd += 46 + n_name + n_extra + n_comment
    out = bytearray(data)
    struct.pack_into(fmt, out, cd + offset, value)
    return bytes(out)


def _central_crc(data: bytes, crc: int) -> bytes:
    """`data` with its one central entry's CRC set to `crc` (its descriptor keeps the true one)."""
    return _patch_central(data, 16, "<I", crc)


def _local_field(data: bytes, offset: int, value: int) -> bytes:
    """`data` with a 32-bit field of its first local header set to `value`."""
    out = bytearray(data)
    struct.pack_into("<I", out, offset, value)
    return bytes(out)


def _pdf_at(offset: int, text: bytes, size: int = 3000) -> bytes:
    """A one-entry stored zip of `size` bytes holding `text` at absolute `offset` (negative: from the end)."""
    probe = _zip(_entry(data=b"x" * (size - 112), method=STORED))
    at = offset if offset >= 0 else len(probe) + offset
    head = 30 + len(b"a.txt")
    body = b"x" * (at - head) + text
    return _zip(_entry(data=body + b"x" * (size - 112 - len(body)), method=STORED))


def _names(*names: str) -> bytes:
    return _zip(*(_entry(n, method=STORED) for n in names))


def _central_size_zip(cd_size: int) -> bytes:
    """One entry whose central header, padded with an unknown extra field, fills exactly `cd_size` bytes."""
    pad = cd_size - 46 - len(b"a.txt") - 4
    return _zip(_entry(central_extra=struct.pack("<HH", 0x4147, pad) + b"\0" * pad))


def _cd_of_65535() -> bytes:
    """A plain zip whose central directory is 65535 bytes: the 16-bit marker's value, though no field is marked."""
    names = [f"{i:03d}" + "x" * 975 for i in range(63)] + ["zzz" + "y" * 974]
    return _zip(*(_entry(n, data=b"", method=STORED) for n in names))


def _zip64_marked(marked: tuple[int, ...]) -> bytes:
    return _zip64(_zip(_entry(), _entry("b.txt")), marked)


def _control(char: int) -> bytes:
    return _zip(_entry(f"a{chr(char)}b"))


def _method(method: int) -> bytes:
    return _zip(_entry(method=method, compressed=b"hello"))


ACCEPTED: dict[str, Callable[[], bytes]] = {
    "deflated, UTF-8 flag": lambda: _zip(),
    "stored": lambda: _zip(_entry(method=STORED)),
    "no flag, ASCII name": lambda: _zip(_entry(flags=0)),
    "compression-level bits 0x0002": lambda: _zip(_entry(flags=0x0802)),
    "compression-level bits 0x0004": lambda: _zip(_entry(flags=0x0804)),
    "non-ASCII UTF-8 name": lambda: _zip(_entry("é.txt")),
    "space, tilde and no-break space": lambda: _zip(_entry("a b~\u00a0.txt")),
    f"name of {MAX_NAME_BYTES} bytes": lambda: _zip(_entry("n" * MAX_NAME_BYTES)),
    "timestamp extra in both headers": lambda: _zip(_entry(local_extra=UT, central_extra=UT),
                                                    _entry("b.txt", local_extra=UT, central_extra=UT)),
    "data descriptor": lambda: _zip(_entry(descriptor="32"), _entry("b.txt")),
    "deflated descriptor without signature": lambda: _zip(_entry(descriptor="32-nosig"), _entry("b.txt")),
    "ZIP64 entry with a wide descriptor": lambda: _zip(_entry(descriptor="64", zip64=True), _entry("b.txt")),
    "ZIP64 entry": lambda: _zip(_entry(zip64=True), _entry("b.txt")),
    "stored descriptor, data holds 'PK\\x07' only": lambda: _zip(_entry(data=b"PK\x07PK\x07", method=STORED,
                                                                        descriptor="32")),
    "stored descriptor after over a megabyte of data": lambda: _stored_sig_at(None),
    "MS-DOS writer, ASCII name": lambda: _zip(_entry(made_by=0x0014)),
    "internal attribute: text": lambda: _patch_central(_zip(), 36, "<H", 1),
    "'./' entry and './' prefixes": lambda: _zip(_entry("./", data=b"", method=STORED, mode=0o040755),
                                                          *(_entry(n, method=STORED) for n in ("./a.txt", "./b.txt"))),
    f"{MAX_DEPTH} folders deep": lambda: _names("/".join(["d"] * (MAX_DEPTH - 1) + ["f"])),
    "PDF header just past the first kilobyte": lambda: _pdf_at(PDF_WINDOW - 4, b"%PDF-"),
    "PDF end just before the last kilobyte": lambda: _pdf_at(-PDF_WINDOW - 1, b"%%EOF"),
    "central directory of 65535 bytes": _cd_of_65535,
    **{f"ZIP64 end record, marked {m}": functools.partial(_zip64_marked, m)
       for m in ((2,), (3,), (4,), (5,), (2, 3, 4, 5))},
}


@pytest.mark.parametrize("make", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_a_plain_zip_at_each_edge_is_accepted(make: Callable[[], bytes]) -> None:
    assert _refusal(make()) is None


def test_exactly_the_entry_limit_is_accepted_and_one_more_refused() -> None:
    lim = Limits(max_zip_entries=2)
    assert _refusal(_names("a.txt", "b.txt"), lim) is None
    assert (_refusal(_names("a.txt", "b.txt", "c.txt"), lim) or "").startswith("LIMIT ")


def _deep(n: int) -> bytes:
    return _names("/".join(["folder"] * (n - 1) + ["f"]))


def _stored_sig_at(at: int | None) -> bytes:
    """A stored entry of over a megabyte with a descriptor, its data holding the descriptor's signature at `at`."""
    data = bytearray(b"x" * ((1 << 20) + 64))
    if at is not None:
        data[at:at + 4] = b"PK\x07\x08"
    return _zip(_entry(data=bytes(data), method=STORED, descriptor="32"))


def _comment(data: bytes, comment: bytes) -> bytes:
    """`data`'s one entry with a central comment: the central directory grows, the end record follows it."""
    cd, cd_size = _fields(data)[5], _fields(data)[4]
    central = bytearray(data[cd:cd + cd_size])
    struct.pack_into("<H", central, 32, len(comment))
    central += comment
    return data[:cd] + bytes(central) + _with_end(data, cd_size=len(central))[-22:]


REFUSED: dict[str, tuple[Callable[[], bytes], str]] = {
    "PDF header ending at the first kilobyte": (lambda: _pdf_at(PDF_WINDOW - 5, b"%PDF-"), "PDF header"),
    "PDF header at byte 0": (lambda: b"%PDF-" + _zip(), "PDF header"),
    "PDF end starting the last kilobyte": (lambda: _pdf_at(-PDF_WINDOW, b"%%EOF"), "PDF's end"),
    "startxref alone in the last kilobyte": (lambda: _pdf_at(-PDF_WINDOW, b"startxref"), "PDF's end"),
    "bytes before the zip": (lambda: b"x" + _zip(), "does not start with a zip entry"),
    "21 bytes": (lambda: b"PK\x03\x04" + b"\0" * 17, "too short"),
    "22 bytes": (lambda: b"PK\x03\x04" + b"\0" * 18, "end record is not its last 22 bytes"),
    "an end record 19 bytes in": (lambda: b"PK\x03\x04" + b"\0" * 15 + b"PK\x05\x06" + b"\0" * 18,
                                  "central directory does not end where"),
    "a comment length without its comment": (lambda: _with_end(_zip(), comment=1), "not its last 22 bytes"),
    "a two-byte comment of zeros": (lambda: _zip(comment=b"\0\0"), "not its last 22 bytes"),
    "disk 1": (lambda: _with_end(_zip(), disk=1), "several disks"),
    "directory on disk 1": (lambda: _with_end(_zip(), cd_disk=1), "several disks"),
    "directory disk marked 0xFFFF": (lambda: _with_end(_zip(), cd_disk=0xFFFF), "several disks"),
    "entries here differ from entries": (lambda: _with_end(_zip(_entry(), _entry("b.txt")), here=1),
                                         "several disks"),
    "a locator with no ZIP64 marker": (lambda: _zip()[:-22] + b"PK\x06\x07" + b"\0" * 16 + _zip()[-22:],
                                       "ZIP64 locator lies before"),
    "one byte between the entry and the directory": (lambda: _zip(between=b"x"), "bytes lie between"),
    "one byte between two entries": (lambda: _zip(_entry(), _entry("b.txt"), between=b"x"),
                                     "does not start where the one before it ends"),
    "a directory one byte longer than one entry can fill": (lambda: _central_size_zip(MAX_CENTRAL_ENTRY + 1),
                                                            "more than such entries can fill"),
    "a directory exactly as long as one entry can fill": (lambda: _central_size_zip(MAX_CENTRAL_ENTRY),
                                                          "extra field 0x4147"),
    "ZIP64 marker without a locator": (lambda: _zip64(_zip(), (3,), locator=False), "no ZIP64 end locator"),
    "locator one byte off": (lambda: _zip64(_zip(), (3,), at_delta=-1), "not where it must be"),
    "locator on disk 1": (lambda: _zip64(_zip(), (3,), locator_disk=1), "not where it must be"),
    "locator counting 2 disks": (lambda: _zip64(_zip(), (3,), disks=2), "not where it must be"),
    "locator counting 0 disks": (lambda: _zip64(_zip(), (3,), disks=0), "not where it must be"),
    "ZIP64 end record of 45 bytes": (lambda: _zip64(_zip(), (3,), size=45), "damaged"),
    "unmarked field disagreeing with ZIP64": (lambda: _zip64(_zip(_entry(), _entry("b.txt")), (3,),
                                                             wide_delta={2: -1, 3: -1}), "disagree"),
    "count 2, then 46 bytes that are no header": (lambda: _junk_after_central(b"\0" * 46), "fewer entries"),
    "count 2, then a 45-byte header stub": (lambda: _junk_after_central(b"PK\x01\x02" + b"\0" * 41), "fewer entries"),
    "an empty name": (lambda: _names(""), "no file name"),
    "a comment length one past the directory": (
        lambda: _patch_central(_zip(_entry(local_extra=UT, central_extra=UT)), 32, "<H", 1), "overruns"),
    "an entry comment": (lambda: _comment(_zip(), b"c"), "has a comment"),
    "an entry on disk 1": (lambda: _patch_central(_zip(), 34, "<H", 1), "another disk"),
    "internal attribute 2": (lambda: _patch_central(_zip(), 36, "<H", 2), "unknown attributes"),
    "a byte after the last central entry": (
        lambda: _with_end(_zip()[:-22] + b"\0" + _zip()[-22:], cd_size=_fields(_zip())[4] + 1), "holds more"),
    "an end signature in a central extra": (lambda: _zip(_entry(central_extra=b"PK\x05\x06")), "signature"),
    "a ZIP64 locator signature in a central extra": (lambda: _zip(_entry(central_extra=b"PK\x06\x07")),
                                                     "signature"),
    "a ZIP64 end signature in a central extra": (lambda: _zip(_entry(central_extra=b"PK\x06\x06")), "signature"),
    f"a name of {MAX_NAME_BYTES + 1} bytes": (lambda: _zip(_entry("n" * (MAX_NAME_BYTES + 1))), "longer than"),
    "non-ASCII, no UTF-8 flag": (lambda: _zip(_entry("é.txt", flags=0)), "not flagged UTF-8"),
    "non-ASCII, flag 0x0001 only": (lambda: _zip(_entry("é.txt", flags=0x0001)), "not flagged UTF-8"),
    "flagged UTF-8 but not": (lambda: _zip(_entry(b"\xff.txt")), "flagged UTF-8 but is not"),
    **{f"control character U+{c:04X}": (functools.partial(_control, c), "control characters")
       for c in (0x01, 0x1F, 0x7F, 0x9F)},
    "MS-DOS writer, non-ASCII name": (lambda: _zip(_entry("é.txt", made_by=0x0014)), "MS-DOS"),
    "encrypted": (lambda: _zip(_entry(flags=0x0801)), "encrypted"),
    "flag 0x0010": (lambda: _zip(_entry(flags=0x0810)), "encrypted"),
    **{f"method {m}": (functools.partial(_method, m), "method other") for m in (1, 7, 9)},
    "local name in another case": (lambda: _zip(_entry("A.txt", central_name=b"a.txt")), "disagree on the name"),
    "local flags differ": (lambda: _flags_differ(), "disagree on the name"),
    "local method differs": (lambda: _method_differs(), "disagree on the name"),
    "local size one more": (lambda: _zip(_entry(local_size_delta=1)), "disagree on its CRC or sizes"),
    "no local header where placed": (lambda: _patch_central(_zip(_entry(), _entry("b.txt")), 42, "<I", 1, entry=1),
                                     "does not start where"),
    "stored descriptor without signature": (lambda: _zip(_entry(method=STORED, descriptor="32-nosig")),
                                            "no signature"),
    "deflated descriptor without signature, central CRC like the signature": (
        lambda: _central_crc(_zip(_entry(descriptor="32-nosig")), 0x08074B50), "no signature"),
    "deferred local header giving a wrong size": (lambda: _local_field(_zip(_entry(descriptor="32")), 18, 1),
                                                 "disagree on its CRC or sizes"),
    "descriptor giving another CRC": (lambda: _descriptor_crc_differs(), "does not repeat"),
    "32-bit descriptor after a ZIP64 header": (lambda: _zip(_entry(descriptor="32", zip64=True)), "does not repeat"),
    "descriptor signature in stored data": (lambda: _stored_sig_at(100), "also occurs in its data"),
    "descriptor signature across the scan's block edge": (lambda: _stored_sig_at((1 << 20) - 3),
                                                           "also occurs in its data"),
    "descriptor signature ending the scan's block": (lambda: _stored_sig_at((1 << 20) - 4), "also occurs in its data"),
    "'\\' between folders": (lambda: _names("a\\b.txt"), "'\\'"),
    "'//' in a path": (lambda: _names("a//b.txt"), "empty or '.'"),
    "'/./' in a path": (lambda: _names("a/./b.txt"), "empty or '.'"),
    f"{MAX_DEPTH + 1} folders deep": (lambda: _deep(MAX_DEPTH + 1), "folders deep"),
    "names in two cases": (lambda: _names("a.txt", "A.txt"), "name one path"),
    "'./' and plain": (lambda: _names("./a.txt", "a.txt"), "name one path"),
    "NFC and NFD": (lambda: _names("\u00e9.txt", "e\u0301.txt"), "name one path"),
}


def _junk_after_central(junk: bytes) -> bytes:
    """One entry, then `junk` inside the central directory, and an end record counting two entries."""
    data = _zip()
    cd_size = _fields(data)[4]
    return _with_end(data[:-22] + junk + data[-22:], here=2, entries=2, cd_size=cd_size + len(junk))


def _flags_differ() -> bytes:
    data = bytearray(_zip())
    struct.pack_into("<H", data, 6, 0x0802)  # the local header's flags only
    return bytes(data)


def _method_differs() -> bytes:
    data = bytearray(_zip())
    struct.pack_into("<H", data, 8, 0)
    return bytes(data)


def _descriptor_crc_differs() -> bytes:
    data = _zip(_entry(descriptor="32"))
    at = data.index(b"PK\x07\x08") + 4
    return data[:at] + struct.pack("<I", zlib.crc32(b"hello") ^ 1) + data[at + 4:]


@pytest.mark.parametrize(("make", "reason"), REFUSED.values(), ids=REFUSED.keys())
def test_one_unit_past_each_edge_is_refused_for_its_reason(make: Callable[[], bytes], reason: str) -> None:
    assert reason in (_refusal(make()) or "accepted")


def test_a_refusal_shows_at_most_80_characters_of_a_long_name() -> None:
    long_name = "n" * (MAX_NAME_BYTES + 1)
    for data, name in ((_zip(_entry(long_name)), long_name), (_deep(MAX_DEPTH + 1), "")):
        try:
            check_layout(io.BytesIO(data), Limits())
        except Exception as exc:  # noqa: BLE001
            entry = exc.entry  # type: ignore[attr-defined]
        shown = name or "/".join(["folder"] * MAX_DEPTH + ["f"])
        assert entry == shown[:80]
