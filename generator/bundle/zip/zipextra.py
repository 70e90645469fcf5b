"""A bundle zip's per-entry fields read as an allow-list: extra fields, ZIP64 values, modes and attributes.

Readers take an entry's name, mode and type from different places: `unzip` and `bsdtar` rename an entry after an
Info-ZIP Unicode Path field, `bsdtar` takes the mode from the local "xl" field (0x6c78) and the type from the
MS-DOS directory attribute, 7-Zip reads its own high bit (0x8000) to trust the Unix mode. A field gpu-audit has
not read is a field another reader may obey, so only the fields that `zip`, `bsdtar`, Python, 7-Zip and Windows
write for plain files are accepted, each with the sizes its specification allows, and local and central headers
must agree on what they say.
"""

from __future__ import annotations

import stat
import struct
from dataclasses import dataclass

U16, U32 = 0xFFFF, 0xFFFFFFFF
ZIP64, TIMESTAMP, UNIX, NTFS = 0x0001, 0x5455, 0x7875, 0x000A
# What a refused extra field would make another reader do, for the refusal's message.
KNOWN_REFUSED = {
    0x7075: "an Info-ZIP Unicode Path field (unzip and bsdtar extract the entry under the name it holds)",
    0x6375: "an Info-ZIP Unicode Comment field",
    0x6C78: "a libarchive 'xl' field (bsdtar takes the entry's mode and type from it)",
    0x000D: "a PKWARE Unix field (a link target or a device)",
    0x5855: "an old Info-ZIP Unix field", 0x7855: "an old Info-ZIP Unix field",
    0x9901: "a WinZip AES encryption field",
    0x0017: "a PKWARE strong-encryption field",
    0xCAFE: "a Java JAR marker",
}
# DOS attribute bits a plain file or folder may carry: read-only, folder (folders only), archive, normal, and
# 7-Zip's mark that the upper 16 bits hold a Unix mode. Hidden, system and volume-label bits are refused.
_DOS_READONLY, _DOS_DIR, _DOS_ARCHIVE, _DOS_NORMAL, _DOS_UNIX = 0x01, 0x10, 0x20, 0x80, 0x8000
_DOS_ALLOWED = _DOS_READONLY | _DOS_DIR | _DOS_ARCHIVE | _DOS_NORMAL | _DOS_UNIX


class ZipLayoutError(Exception):
    """Why a zip is not a plain bundle zip: the entry (or '' for the archive), the reason, and the fix where the
    reason calls for one of its own (None: zip the folder again with a plain tool)."""

    def __init__(self, entry: str, reason: str, fix: str | None = None) -> None:
        super().__init__(reason)
        self.entry, self.reason, self.fix = entry, reason, fix


@dataclass(frozen=True)
class Extras:
    """One header's extra field, checked: its blocks by ID, in the order written."""

    blocks: dict[int, bytes]

    def get(self, ident: int) -> bytes | None:
        return self.blocks.get(ident)


def _timestamp_ok(data: bytes) -> bool:
    """An extended timestamp: a flags byte (bits 0-2: modification, access, creation time) and at most as many
    4-byte times as flags are set (the central header keeps only the modification time)."""
    if not data or data[0] & ~0x07 or (len(data) - 1) % 4:
        return False
    return (len(data) - 1) // 4 <= bin(data[0]).count("1")


def _unix_ok(data: bytes) -> bool:
    """Info-ZIP's Unix field: version 1, then a UID and a GID of 1, 2, 4 or 8 bytes, each after its size."""
    if len(data) < 3 or data[0] != 1 or data[1] not in (1, 2, 4, 8):
        return False
    gid_at = 2 + data[1]
    return len(data) > gid_at and data[gid_at] in (1, 2, 4, 8) and len(data) == gid_at + 1 + data[gid_at]


def _ntfs_ok(data: bytes) -> bool:
    """The NTFS field as 7-Zip and Windows write it: 4 reserved bytes, then one attribute (tag 1) of three
    8-byte times."""
    return len(data) == 32 and data[4:8] == struct.pack("<HH", 1, 24)


_CHECKS = {TIMESTAMP: _timestamp_ok, UNIX: _unix_ok, NTFS: _ntfs_ok, ZIP64: lambda data: len(data) in (8, 16, 24, 28)}
_NAMES = {TIMESTAMP: "extended timestamp", UNIX: "Info-ZIP Unix", NTFS: "NTFS", ZIP64: "ZIP64"}


def parse(extra: bytes, entry: str, where: str) -> Extras:
    """The blocks of one header's extra field; any block not on the allow-list, of a size its format does not
    allow, repeated or overrunning the field is refused (`where`: "local" or "central")."""
    blocks: dict[int, bytes] = {}
    pos = 0
    while pos < len(extra):
        if pos + 4 > len(extra):
            raise ZipLayoutError(entry, f"its {where} extra field is damaged (a block header is cut off)")
        ident, size = struct.unpack_from("<HH", extra, pos)
        data = extra[pos + 4:pos + 4 + size]
        if len(data) != size or ident in blocks:
            raise ZipLayoutError(entry, f"its {where} extra field is damaged (a block overruns it or is repeated)")
        check = _CHECKS.get(ident)
        if check is None:
            what = KNOWN_REFUSED.get(ident, "a field no plain zip tool writes for a bundle, which another reader "
                                            "may take a name, mode or type from")
            raise ZipLayoutError(entry, f"its {where} header carries extra field 0x{ident:04x}, {what}")
        if not check(data):
            raise ZipLayoutError(entry, f"its {where} {_NAMES[ident]} extra field (0x{ident:04x}) has {size} bytes "
                                        "in a form its specification does not give it")
        blocks[ident] = data
        pos += 4 + size
    return Extras(blocks)


def zip64_values(extras: Extras, values: list[int], entry: str, where: str) -> list[int]:
    """`values` (size, compressed size[, offset]) with each one marked 0xFFFFFFFF taken, in order, from the ZIP64
    field, which must hold exactly the marked ones: a reader that also read an unmarked value would see
    another size than one that did not."""
    data = extras.get(ZIP64)
    marked = sum(1 for v in values if v == U32)
    if data is None:
        if marked:
            raise ZipLayoutError(entry, f"a size in its {where} header is marked as ZIP64 but it has no ZIP64 field")
        return values
    if len(data) != 8 * marked:
        raise ZipLayoutError(entry, f"its {where} ZIP64 field holds {len(data)} bytes for {marked} marked "
                                    "value(s): it must hold exactly the values its header marks")
    out, pos = [], 0
    for v in values:
        if v == U32:
            v = struct.unpack_from("<Q", data, pos)[0]
            pos += 8
        out.append(v)
    return out


def same_meaning(local: Extras, central: Extras, entry: str) -> None:
    """Local and central headers say the same where both speak: modification time, owner, NTFS times."""
    for ident in (TIMESTAMP, UNIX, NTFS):
        a, b = local.get(ident), central.get(ident)
        if a is None or b is None:
            continue
        if ident == TIMESTAMP:
            a, b = _mtime(a), _mtime(b)
        if a != b:
            raise ZipLayoutError(entry, f"its local and central {_NAMES[ident]} extra fields disagree")


def _mtime(data: bytes) -> bytes | None:
    return data[1:5] if data[0] & 1 and len(data) >= 5 else None


def check_kind(name: str, external: int, size: int, compressed: int) -> None:
    """The Unix mode, the DOS attributes and the name agree that the entry is a plain file (or a folder, its name
    ending in '/', holding no data), readable by its owner, without setuid, setgid or sticky bits. A mode of
    permissions alone (Python's `ZipFile.writestr` writes 0600) leaves the type to the name, as readers do."""
    folder = name.endswith("/")
    what = "folder" if folder else "file"
    mode, dos = external >> 16, external & 0xFFFF
    if dos & ~_DOS_ALLOWED or (dos & _DOS_DIR and not folder):
        raise ZipLayoutError(name, f"its DOS attributes 0x{dos:04x} are not a plain {what}'s (bsdtar and 7-Zip "
                                   "extract a folder, or a hidden or system file)")
    if dos & _DOS_UNIX and not mode:
        raise ZipLayoutError(name, "its attributes announce a Unix mode that is not there")
    kind = stat.S_IFMT(mode)
    if kind == stat.S_IFLNK:
        raise ZipLayoutError(name, "entry is a symbolic link; bundles hold plain files only")
    wanted, access = (stat.S_IFDIR, 0o700) if folder else (stat.S_IFREG, 0o400)
    special = mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX)
    if mode and (kind not in (0, wanted) or special or mode & access != access):
        raise ZipLayoutError(name, f"its mode {mode:o} is not a plain {what}'s (a device, link, setuid program or "
                                   "unreadable file to bsdtar)")
    if folder and (size or compressed):
        raise ZipLayoutError(name, "it is a folder that holds data")
