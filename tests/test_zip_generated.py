"""Issue 46's differential property over zips drawn by hypothesis: whatever `verify`'s zip check accepts, `unzip`,
`bsdtar` (from a file and from a pipe), Python's zipfile and 7-Zip extract without error or warning, into a tree
byte-identical to the one `verify` checked.

The zips mix what plain tools write (names with and without a leading './', folders, stored and deflated data,
data descriptors of both widths, ZIP64 fields, the allowed extra fields) with what attackers write (unknown or
renaming extra fields, modes and DOS attributes of other types, names that escape or collide, bytes around the
entries, a hidden ZIP64 locator): a rule that let a forgery through, or a reader that disagreed with an accepted
zip, fails the property. The draw is derandomised, so CI runs the same 2,000 zips every time.
"""

from __future__ import annotations

import random
import struct
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import needs_tools
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from zip_forgery import RawEntry, write_zip
from zip_readers import disagreements, read_all, tree

from generator.bundle.zip import zipsafe

EXAMPLES = 2000
NAMES = ["ex/a.txt", "ex/b/c.txt", "ex/b/", "ex/", "./ex/a.txt", "./", "./ex/", "ex/A.TXT", "ex/d\\e.txt",
         "ex//f", "ex/./g", "../h", "/i", "ex/\x01j", "ex/k.txt", "ex/b/l.pdf", "ex/é.txt", "ex/e\u0301.txt"]
GOOD_NAMES = ["ex/a.txt", "ex/b/c.txt", "ex/k.txt", "ex/b/l.pdf", "./ex/a.txt", "ex/b/"]


def _block(ident: int, payload: bytes) -> bytes:
    return struct.pack("<HH", ident, len(payload)) + payload


TIME = 0x6A000000
LOCAL_EXTRAS = {
    "timestamp": _block(0x5455, struct.pack("<BII", 3, TIME, TIME)),
    "unix": _block(0x7875, struct.pack("<BBIBI", 1, 4, 1000, 4, 1000)),
    "ntfs": _block(0x000A, b"\0" * 4 + struct.pack("<HHQQQ", 1, 24, 1, 2, 3)),
    "unicode-path": _block(0x7075, b"\x01\0\0\0\0ex/z"),
    "xl": _block(0x6C78, b"\x05" + struct.pack("<HI", 0x0314, 0o104755 << 16)),
    "unknown": _block(0x4147, b"hidden"),
    "bad-timestamp": _block(0x5455, b"\x01\0\0"),
    "locator": _block(0x4147, b"PK\x06\x07" + b"\0" * 16),
}
CENTRAL_EXTRAS = {**LOCAL_EXTRAS, "timestamp": _block(0x5455, struct.pack("<BI", 3, TIME)),
                  "other-time": _block(0x5455, struct.pack("<BI", 1, TIME + 1))}
GOOD_EXTRAS = ["timestamp", "unix", "ntfs"]


def _plain(rng: random.Random) -> RawEntry:
    """An entry as plain tools write it."""
    return RawEntry(
        name=rng.choice(GOOD_NAMES).encode(),
        data=rng.choice([rng.randbytes(rng.randrange(65)), b"x" * 300, b"aPK\x07\x08b"]),
        method=rng.choice([0, 8]),
        flags=rng.choice([0x0800, 0]),
        local_extra=b"".join(LOCAL_EXTRAS[k] for k in rng.sample(GOOD_EXTRAS, rng.randrange(3))),
        central_extra=b"".join(CENTRAL_EXTRAS[k] for k in rng.sample(GOOD_EXTRAS, rng.randrange(3))),
        mode=rng.choice([0o100644, 0o600, 0]),
        dos=rng.choice([0, 0x20]),
        descriptor=rng.choice([None, None, "32"]),
        zip64=rng.random() < 0.1,
        made_by=rng.choice([0x0314, 0x0014]),
    )


# One departure from a plain entry at a time: an entry that departs in one way only is the one a rule must catch
# by itself (several at once would be refused by whichever rule comes first).
MUTATIONS: dict[str, Callable[[random.Random], dict[str, object]]] = {
    "name": lambda rng: {"name": rng.choice(NAMES).encode()},
    "flags": lambda rng: {"flags": rng.choice([0x0801, 0x2000, 0x0040])},
    "local-extra": lambda rng: {"local_extra": LOCAL_EXTRAS[rng.choice(list(LOCAL_EXTRAS))]},
    "central-extra": lambda rng: {"central_extra": CENTRAL_EXTRAS[rng.choice(list(CENTRAL_EXTRAS))]},
    "mode": lambda rng: {"mode": rng.choice([0o40755, 0o104755, 0o120777, 0o020644, 0o100000, 0o40000])},
    "dos": lambda rng: {"dos": rng.choice([0x10, 0x02, 0x04, 0x8000]), "mode": 0, "made_by": rng.choice([0x14, 0x314])},
    "descriptor": lambda rng: {"descriptor": rng.choice(["64", "32-nosig", "64-nosig"])},
    "central-name": lambda rng: {"central_name": rng.choice(NAMES).encode()},
    "local-size": lambda rng: {"local_size_delta": rng.choice([1, 2])},
}


def _folder_fix(e: RawEntry) -> RawEntry:
    """A folder entry as tools write it: no data, a folder's mode (unless a mutation drew another)."""
    if e.name.endswith(b"/"):
        return replace(e, data=b"", method=0, mode=0o40755 if e.mode in (0o100644, 0o600) else e.mode)
    return e


def draw_zip(seed: int) -> bytes:
    """The zip of one seed: one to four entries, each plain or departing from plain in one way (half of them),
    and now and then bytes before the zip or between entries. Drawn uniformly by `random` from the seed that
    hypothesis gives (hypothesis's own draws favour the first choices of each list)."""
    rng = random.Random(seed)
    entries = []
    for _ in range(rng.randint(1, 4)):
        entry = _plain(rng)
        if rng.random() < 0.5:
            entry = replace(entry, **MUTATIONS[rng.choice(list(MUTATIONS))](rng))  # type: ignore[arg-type]
        entries.append(_folder_fix(entry))
    prefix = b"MZ" if rng.random() < 0.05 else b""
    between = b"\0" if rng.random() < 0.05 else b""
    return write_zip(entries, prefix=prefix, between=between)


ARCHIVES = st.integers(0, 2**64 - 1).map(draw_zip)


@needs_tools("unzip", "bsdtar", "7zz")
def test_whatever_verify_accepts_every_reader_extracts_alike() -> None:
    counts = {"accepted": 0, "refused": 0}

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(ARCHIVES)
    def accepted_means_agreed(data: bytes) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "z.zip"
            path.write_bytes(data)
            checked = Path(tmp) / "checked"
            checked.mkdir()
            if zipsafe.extract(path, checked):
                counts["refused"] += 1
                return
            counts["accepted"] += 1
            assert disagreements(tree(checked), read_all(path, Path(tmp) / "readers")) == []

    accepted_means_agreed()
    # the property was tested on both sides of the rules, on a good part of the draw each
    assert counts["accepted"] >= EXAMPLES // 10 and counts["refused"] >= EXAMPLES // 10, counts


@pytest.mark.parametrize("name", ["ex/a.txt", "./ex/a.txt"])
def test_the_generator_draws_zips_verify_accepts(name: str, tmp_path: Path) -> None:
    """The writer behind the draw makes a plain zip that verify's check accepts (else the property is empty)."""
    path = tmp_path / "z.zip"
    path.write_bytes(write_zip([RawEntry(name.encode(), b"a", local_extra=LOCAL_EXTRAS["timestamp"],
                                         central_extra=CENTRAL_EXTRAS["timestamp"], descriptor="32")]))
    assert zipsafe.extract(path, tmp_path / "out") == []
    assert (tmp_path / "out" / "ex" / "a.txt").read_bytes() == b"a"
