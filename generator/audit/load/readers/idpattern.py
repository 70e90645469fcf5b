"""The schema's ID rules (pattern and length) checked column-wise over a whole ID column."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from generator.audit.load.readers.idsets import ints

FIRST_FEW = 5
# The schemas' ID pattern: no empty ID, no white space at either end, no line break inside. On ASCII IDs it
# is read from the column's buffers (two bytes and the length per ID); any other pattern goes to RE2.
EDGE_PATTERN = r"^\S(.*\S)?$"
# What RE2 (pyarrow's regex engine) calls \s, which `.` also does not cross when it is a line break.
_RE2_SPACE = np.zeros(256, dtype=bool)
_RE2_SPACE[[9, 10, 12, 13, 32]] = True
_LINE_BREAK = 10


def _edges_bad(ids: pa.StringArray) -> np.ndarray:
    """Per ASCII ID without nulls, whether it breaks EDGE_PATTERN as RE2 reads it (tested against RE2)."""
    offsets = np.frombuffer(ids.buffers()[1], dtype=np.int32)[ids.offset: ids.offset + len(ids) + 1]
    data = np.frombuffer(ids.buffers()[2], dtype=np.uint8) if ids.buffers()[2] is not None else np.zeros(0, np.uint8)
    starts, ends = offsets[:-1], offsets[1:]
    empty = ends == starts
    if empty.all():
        return empty
    # An empty ID's neighbours stand where its first and last bytes would: it is bad anyway.
    bad = empty | _RE2_SPACE[data[np.minimum(starts, len(data) - 1)]] | _RE2_SPACE[data[np.maximum(ends - 1, 0)]]
    breaks = np.flatnonzero(data[offsets[0]: offsets[-1]] == _LINE_BREAK) + offsets[0]
    if len(breaks):
        bad[np.searchsorted(offsets, breaks, side="right") - 1] = True
    return bad


def bad_ids(ids: Any, pattern: str, max_length: int) -> tuple[int, list[int]]:
    """Count and first rows of IDs (a pyarrow string array) breaking the schema's pattern or length."""
    non_ascii = pc.invert(pc.string_is_ascii(ids))
    if (isinstance(ids, pa.Array) and ids.type == pa.string() and ids.null_count == 0 and pattern == EDGE_PATTERN
            and not pc.any(non_ascii).as_py()):
        lengths = np.diff(np.frombuffer(ids.buffers()[1], dtype=np.int32)[ids.offset: ids.offset + len(ids) + 1])
        flags = _edges_bad(ids) | (lengths > max_length)
        rows = np.flatnonzero(flags)
        return len(rows), rows[:FIRST_FEW].tolist()
    # The pattern in RE2 (ASCII \S); IDs with non-ASCII characters get Python's Unicode semantics.
    # Python scalars and lists are kept out of pyarrow on the common path: converting them imports pandas.
    bad = pc.invert(pc.match_substring_regex(ids, pattern))
    lengths = pc.utf8_length(ids)
    if len(ids) and pc.max(lengths).as_py() > max_length:
        bad = pc.or_(bad, pa.array(ints(lengths) > max_length))
    if pc.any(non_ascii).as_py():
        id_ok = re.compile(pattern)
        fixed = [bool(not id_ok.fullmatch(v)) or len(v) > max_length if na else b
                 for v, na, b in zip(ids.to_pylist(), non_ascii.to_pylist(), bad.to_pylist(), strict=False)]
        bad = pa.array(fixed)
    count = pc.sum(bad).as_py() or 0
    first = pc.indices_nonzero(bad).slice(0, FIRST_FEW).to_pylist() if count else []
    return int(count), first
