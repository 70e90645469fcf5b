"""ID sets compared column-wise: duplicates, missing and extra IDs, and alignment to the expected order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from generator.audit.load.readers.idkeys import sorted_positions

FIRST_FEW = 5


def _raw_values(arr: pa.Array) -> np.ndarray:
    """An arrow integer array's value buffer as a numpy view; what stands at null slots is undefined."""
    kind = "u" if pa.types.is_unsigned_integer(arr.type) else "i"
    dtype = np.dtype(f"{kind}{arr.type.bit_width // 8}")
    return np.frombuffer(arr.buffers()[1], dtype=dtype)[arr.offset: arr.offset + len(arr)]


def ints(arr: pa.Array) -> np.ndarray:
    """A null-free arrow integer array as a numpy view (Array.to_numpy would import pandas, a third of a second)."""
    if arr.null_count:
        raise ValueError("integer array with nulls")
    return _raw_values(arr)


# A numpy array of class codes or keys, whatever its integer width (code_type picks the narrowest).
Codes: TypeAlias = "np.ndarray[Any, np.dtype[Any]]"


def as_array(values: Any) -> pa.Array:
    """A pyarrow string array from a list or an array."""
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks()
    if isinstance(values, pa.Array):
        return values
    return pa.array(list(values), type=pa.string())


@dataclass
class SetComparison:
    """How an observed ID column compares with the expected IDs."""

    observed_distinct: int
    duplicates: int = 0
    missing: int = 0
    extra: int = 0
    first_duplicates: list[str] = field(default_factory=list)
    first_missing: list[str] = field(default_factory=list)
    first_extra: list[str] = field(default_factory=list)
    same_order: bool = False
    positions: Any = None  # per observed row, its index in the expected IDs (set when the sets were hashed)

    @property
    def match(self) -> bool:
        return not (self.duplicates or self.missing or self.extra)


def with_nulls_as(arr: pa.Array, missing: int) -> np.ndarray:
    """An arrow integer array as int64 numpy with `missing` for nulls (pc.fill_null would import pandas)."""
    out = _raw_values(arr).astype(np.int64)
    if arr.null_count:
        out[ints(pc.indices_nonzero(pc.is_null(arr)))] = missing
    return out


def arrow_ints(values: np.ndarray) -> pa.Array:
    """A numpy integer array as an arrow int64 array, zero-copy (pa.array(numpy) would import pandas)."""
    data = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(data), [None, pa.py_buffer(data)])


def arrow_strings(values: Sequence[str]) -> pa.Array:
    """A few Python strings as an arrow string array, built from buffers (pa.array(list) would import pandas)."""
    encoded = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return pa.Array.from_buffers(pa.string(), len(encoded),
                                 [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])


def _positions(expected: pa.Array, observed: pa.Array) -> np.ndarray:
    """Each observed row's index in the distinct expected IDs, -1 for an ID that is not expected.

    A file written in the registered order needs no hashing of its 10^6 IDs: rows equal to the expected ID at
    the same place are placed at once, and only the few others are looked up. A file mostly out of order
    is sorted when its IDs have one width (idkeys), else gets one hash lookup of every row.
    """
    m = min(len(expected), len(observed))
    off = (ints(pc.indices_nonzero(pc.not_equal(observed.slice(0, m), expected.slice(0, m)))) if m
           else np.array([], np.uint64))
    if len(off) + len(observed) - m > len(observed) // 8:
        placed = sorted_positions(expected, observed)  # IDs of one width: sorted as integers, not hashed
        if placed is not None:
            return placed
        return with_nulls_as(pc.index_in(observed, value_set=expected), -1)
    pos = np.arange(len(observed), dtype=np.int64)
    rows = np.concatenate([off.astype(np.int64), np.arange(m, len(observed), dtype=np.int64)])
    if len(rows):
        values = observed.take(arrow_ints(rows))
        distinct = pc.unique(values)
        # Probe every expected ID in a hash of these few values: where each of them sits, if anywhere.
        hit = pc.index_in(expected, value_set=distinct)
        found = pc.indices_nonzero(pc.is_valid(hit))
        where = np.full(len(distinct), -1, dtype=np.int64)
        where[ints(hit.take(found)).astype(np.int64)] = ints(found).astype(np.int64)
        pos[rows] = where[ints(pc.index_in(values, value_set=distinct)).astype(np.int64)]
    return pos


def compare(expected: pa.Array, observed: pa.Array, expected_distinct: bool | None = None) -> SetComparison:
    """Compare sets, never row counts: equal lengths prove nothing.

    `expected_distinct` says the expected IDs are known to hold no duplicate, which lets a column equal
    to them skip hashing. Otherwise each observed ID's place in the expected IDs gives duplicates, missing
    and extra IDs together.
    """
    same_order = observed.equals(expected)
    if same_order and (expected_distinct or (expected_distinct is None and len(pc.unique(observed)) == len(observed))):
        return SetComparison(observed_distinct=len(observed), same_order=True)
    if not expected_distinct and not (expected_distinct is None and len(pc.unique(expected)) == len(expected)):
        return _compare_hashing(expected, observed, same_order)
    n = len(expected)
    pos_all = _positions(expected, observed)
    known = pos_all >= 0
    has_extra = not bool(known.all())
    pos = pos_all[known] if has_extra else pos_all
    hits = np.bincount(pos, minlength=n)
    out = SetComparison(observed_distinct=0, same_order=same_order, positions=None if has_extra else pos)
    missing = np.flatnonzero(hits == 0)
    out.missing = int(len(missing))
    out.first_missing = [expected[int(i)].as_py() for i in missing[:FIRST_FEW]]
    extras = observed.take(arrow_ints(np.flatnonzero(~known))) if has_extra else None
    extra_counts = pc.value_counts(extras) if extras is not None else None
    distinct_extra = len(extra_counts) if extra_counts is not None else 0
    out.extra = distinct_extra
    out.observed_distinct = int(np.count_nonzero(hits)) + distinct_extra
    out.duplicates = int((hits[hits > 1] - 1).sum())
    if extra_counts is not None:
        freq = ints(extra_counts.field("counts"))
        out.duplicates += int((freq[freq > 1] - 1).sum())
        out.first_extra = extra_counts.field("values").slice(0, FIRST_FEW).to_pylist()
    if out.duplicates:
        repeated = np.zeros(len(observed), dtype=bool)
        repeated[np.flatnonzero(known)] = hits[pos] > 1
        if extra_counts is not None and extras is not None:
            freq = ints(extra_counts.field("counts"))
            twice = {v for v, k in zip(extra_counts.field("values").to_pylist(), freq, strict=False) if k > 1}
            for row, value in zip(np.flatnonzero(~known), extras.to_pylist(), strict=False):
                repeated[row] = value in twice
        seen: dict[str, None] = {}
        for row in np.flatnonzero(repeated):  # file order, so values come in order of first occurrence
            seen.setdefault(observed[int(row)].as_py(), None)
            if len(seen) == FIRST_FEW:
                break
        out.first_duplicates = list(seen)
    return out


def _compare_hashing(expected: pa.Array, observed: pa.Array, same_order: bool) -> SetComparison:
    """The general comparison when the expected IDs themselves repeat (an invalid campaign)."""
    counts = pc.value_counts(observed)  # first-occurrence order
    values, freq = counts.field("values"), counts.field("counts")
    one = pa.scalar(1, freq.type)
    out = SetComparison(observed_distinct=len(values), same_order=same_order)
    out.duplicates = int(pc.sum(pc.subtract(freq, one)).as_py() or 0)
    out.first_duplicates = pc.filter(values, pc.greater(freq, one)).slice(0, FIRST_FEW).to_pylist()
    missing_mask = pc.invert(pc.is_in(expected, value_set=values))
    out.missing = int(pc.sum(missing_mask).as_py() or 0)
    out.first_missing = pc.filter(expected, missing_mask).slice(0, FIRST_FEW).to_pylist()
    extra_mask = pc.invert(pc.is_in(values, value_set=expected))
    out.extra = int(pc.sum(extra_mask).as_py() or 0)
    out.first_extra = pc.filter(values, extra_mask).slice(0, FIRST_FEW).to_pylist()
    return out


def repeated_rows(ids: pa.Array) -> list[int]:
    """Row indices of every occurrence after the first of an ID, in file order."""
    if len(ids) > 1 and pc.all(pc.less(ids.slice(0, len(ids) - 1), ids.slice(1))).as_py():
        return []  # strictly increasing (a sorted registered order): distinct without hashing
    codes = ints(ids.dictionary_encode().indices)
    if len(codes) == 0 or codes.max() == len(codes) - 1:  # codes are assigned in order: all distinct
        return []
    _, first = np.unique(codes, return_index=True)
    mask = np.ones(len(codes), dtype=bool)
    mask[first] = False
    return np.flatnonzero(mask).tolist()


def in_expected_order(file_codes: np.ndarray, comparison: SetComparison) -> np.ndarray:
    """Per-row values (class codes) of a file moved into the expected order (sets equal, no duplicates)."""
    if comparison.same_order:
        return file_codes
    assert comparison.positions is not None
    out = np.empty(len(file_codes), dtype=file_codes.dtype)
    out[comparison.positions] = file_codes
    return out


def code_type(n_classes: int) -> np.dtype[Any]:
    """The smallest integer type that holds a class index: one byte per ID for up to 127 classes."""
    return np.dtype(np.int8 if n_classes <= 127 else np.int16 if n_classes <= 32767 else np.int32)


def codes(labels: pa.Array | Sequence[str], classes: Sequence[str]) -> np.ndarray:
    """Class indices of labels known to be in `classes` (dictionary-encoded: each distinct label looked up once)."""
    encoded = labels if isinstance(labels, pa.DictionaryArray) else as_array(labels).dictionary_encode()
    position = {c: i for i, c in enumerate(classes)}
    mapping = np.array([position[v] for v in encoded.dictionary.to_pylist()], dtype=code_type(len(classes)))
    return mapping[ints(encoded.indices)]
