"""IDs of one width packed into 64-bit keys, so that a file out of the registered order is placed by sorting
integers instead of hashing every string (zero-padded IDs such as doc-00000042 are the usual case)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

KEY_BYTES = 8  # a key holds this many of an ID's bytes: those that are not the same in every ID


def _byte_matrix(ids: pa.Array) -> np.ndarray | None:
    """The IDs as an (n, width) view of their bytes, when every one has the same width; else None."""
    if ids.type != pa.string() or ids.null_count or len(ids) == 0:
        return None
    offsets = np.frombuffer(ids.buffers()[1], dtype=np.int32, count=len(ids) + 1, offset=ids.offset * 4)
    width = int(offsets[1] - offsets[0])
    if width == 0 or not bool((np.diff(offsets) == width).all()):
        return None
    return np.frombuffer(ids.buffers()[2], dtype=np.uint8, count=len(ids) * width,
                         offset=int(offsets[0])).reshape(len(ids), width)


def _shared_columns(matrix: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Per byte column, whether every row holds `first`'s byte there (one column at a time: a row-wise
    comparison would need a boolean per byte of the column)."""
    return np.array([bool((matrix[:, j] == first[j]).all()) for j in range(matrix.shape[1])], dtype=bool)


def _pack(matrix: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """The chosen byte columns of each row as one unsigned integer, first column most significant: the keys
    sort as the IDs do, and two rows share a key only when they agree on those columns."""
    padded = np.zeros((len(matrix), KEY_BYTES), dtype=np.uint8)
    if len(columns):
        adjacent = columns[-1] - columns[0] + 1 == len(columns)
        padded[:, KEY_BYTES - len(columns):] = (matrix[:, columns[0]:columns[-1] + 1] if adjacent
                                                else matrix[:, columns])
    keys = padded.view(np.dtype(">u8")).ravel()
    return keys.astype(np.uint64)


def packed_keys(expected: pa.Array, observed: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """Keys of the expected and the observed IDs that are equal exactly when the IDs are, or None when the IDs
    differ in width or in more than KEY_BYTES byte positions.

    The byte positions where every ID of both columns holds the same byte carry no information and are left
    out; an observed ID that differs from the others there keeps that position in the key.
    """
    want, have = _byte_matrix(expected), _byte_matrix(observed)
    if want is None or have is None or want.shape[1] != have.shape[1]:
        return None
    first = want[0].copy()
    varying = np.flatnonzero(~(_shared_columns(want, first) & _shared_columns(have, first)))
    if len(varying) > KEY_BYTES:
        return None
    return _pack(want, varying), _pack(have, varying)


def sorted_positions(expected: pa.Array, observed: pa.Array) -> np.ndarray | None:
    """Each observed ID's index in the distinct expected IDs, -1 where it is not among them, found by sorting
    their packed keys; None when the IDs cannot be packed (packed_keys). Each array is released as soon as it
    is used, so the sort never holds all of them at once (the measured saving: docs/performance.md)."""
    keys = packed_keys(expected, observed)
    if keys is None:
        return None
    lookup, wanted = keys
    del keys
    ascending = len(lookup) < 2 or bool((lookup[1:] > lookup[:-1]).all())  # the registered order, often
    order_expected = None if ascending else np.argsort(lookup)
    if order_expected is not None:
        lookup = lookup[order_expected]
    order = np.argsort(wanted)
    wanted = wanted[order]
    if np.array_equal(wanted, lookup):  # a permutation of the expected IDs: the sorted rows are their order
        del wanted, lookup
        found = np.arange(len(order), dtype=np.int64) if order_expected is None else order_expected
    else:
        found = np.searchsorted(lookup, wanted).astype(np.int64)
        inside = found < len(lookup)
        inside[inside] = lookup[found[inside]] == wanted[inside]
        del wanted, lookup
        found[~inside] = -1
        if order_expected is not None:
            found[inside] = order_expected[found[inside]]
        del inside
    del order_expected
    positions = np.empty(len(order), dtype=np.int64)
    positions[order] = found
    return positions
