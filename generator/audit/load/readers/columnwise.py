"""The column-wise reader of id/label files: pyarrow parses them in blocks, and the schema's column rules are
applied to whole columns (the reference reader in `predictions` walks rows; both report the same findings)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from generator.audit.load.findings import Severity
from generator.audit.load.readers.labelfile import (
    FIRST_FEW,
    ID_FORMULA_START,
    ColumnRules,
    LabelFile,
    aggregate,
    text_findings,
)
from generator.audit.load.textsafety import FORMULA_START, ColumnScan, scan_column

_BOM = b"\xef\xbb\xbf"
# pyarrow parses in blocks of this size, one batch each: small blocks bound the parser's own buffers (a
# block as large as the file needs twice the columns' memory for them), and a prediction file read beside
# others is streamed batch by batch; only IDs that are not the expected ones in their order are kept whole.
PARSE_BLOCK = 1 << 20


def _fast_eligible(data: bytes, rules: ColumnRules) -> bool:
    """Whether row i of the file can be line i + 2: no quoting, no lone CR, no NUL (blank lines: see parse_fast)."""
    body = data[len(_BOM):] if data.startswith(_BOM) else data
    header = ",".join(rules.columns).encode()
    if not (body.startswith(header + b"\n") or body.startswith(header + b"\r\n")):
        return False
    if b'"' in body or b"\x00" in body:
        return False  # blank lines are caught after parsing: pyarrow reads one as a row of empty cells
    if b"\r" in body:  # rare: only then pay for the exact CRLF checks
        return b"\n\r\n" not in body and body.count(b"\r") == body.count(b"\r\n")
    return True


@dataclass(frozen=True)
class KnownIds:
    """An ID column already checked (the expected IDs): a file with exactly these IDs needs no second check."""

    ids: Any
    bad_count: int
    bad_first: tuple[int, ...]
    text_scan: ColumnScan = field(default_factory=ColumnScan)


def _bad_ids(ids: Any, rules: ColumnRules) -> tuple[int, list[int]]:
    """Count and first rows of IDs breaking the schema's pattern or length, column-wise."""
    from generator.audit.load.readers.idpattern import bad_ids

    return bad_ids(ids, rules.id_pattern, rules.id_max_length)


def known_ids(ids_file: LabelFile, rules: ColumnRules) -> KnownIds | None:
    """The expected IDs as a shortcut for prediction files that repeat them exactly (fast reader only)."""
    import pyarrow as pa

    if not isinstance(ids_file.ids, pa.Array):
        return None
    own = ColumnRules.from_schema("expected-ids-row", None)
    same_rules = (own.id_pattern, own.id_max_length) == (rules.id_pattern, rules.id_max_length)
    summary = ids_file.bad_id_summary if same_rules else None
    count, first = summary or _bad_ids(ids_file.ids, rules)
    scan = (ids_file.id_text_scan if ids_file.id_text_scan is not None
            else scan_column(ids_file.ids, ID_FORMULA_START, FIRST_FEW))  # scanned once, when it was read
    return KnownIds(ids=ids_file.ids, bad_count=count, bad_first=tuple(first), text_scan=scan)


def _label_column(out: LabelFile, labels: Any, codes: Any) -> tuple[int, list[tuple[int, str]], ColumnScan]:
    """The labels kept as strings (`labels`, one array): with classes, those outside them (count, first rows,
    their text scan), which `codes` (the batches' class codes) marks -1; without classes, every label."""
    import numpy as np

    from generator.audit.load.readers.idsets import arrow_ints

    out.labels = labels
    if codes is None:
        return 0, [], scan_column(labels, FORMULA_START, FIRST_FEW)
    outside = np.flatnonzero(codes < 0)
    bad_labels = [(int(i) + 2, labels[int(i)].as_py()) for i in outside[:FIRST_FEW]]
    # A label that is a declared class is checked once, in protocol.json's classes; only the others.
    return len(outside), bad_labels, scan_column(labels.take(arrow_ints(outside)), FORMULA_START,
                                                 FIRST_FEW).shifted(outside)


def _batches(data: bytes, rules: ColumnRules, threads: bool) -> Iterator[Any]:
    """The file's record batches, one per parse block (ArrowInvalid for a file pyarrow cannot read as given).

    A file read beside others is streamed: each batch is looked at and released before the next is parsed,
    so that its columns never stand in memory whole. A file read alone (`threads`) is parsed whole on
    pyarrow's threads.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    read = pacsv.ReadOptions(use_threads=threads, block_size=PARSE_BLOCK)
    parse = pacsv.ParseOptions(quote_char=False, ignore_empty_lines=False)
    # ASCII is valid UTF-8: pyarrow's own check is then skipped (a tenth of the parsing time).
    convert = pacsv.ConvertOptions(column_types={c: pa.string() for c in rules.columns}, strings_can_be_null=False,
                                   include_columns=list(rules.columns), check_utf8=not data.isascii())
    if threads:
        table = pacsv.read_csv(pa.BufferReader(data), read_options=read, parse_options=parse, convert_options=convert)
        if tuple(table.column_names) != rules.columns:
            raise pa.ArrowInvalid("columns")
        yield from table.to_batches()
        return
    reader = pacsv.open_csv(pa.BufferReader(data), read_options=read, parse_options=parse, convert_options=convert)
    if tuple(reader.schema.names) != rules.columns:
        raise pa.ArrowInvalid("columns")
    yield from reader


@dataclass
class _Columns:
    """What the batches of a file leave: its own ID chunks (None: every one was the expected IDs' at its place),
    the number of rows, and the labels as class codes per chunk, or (labels outside the classes, or no classes)
    as the label chunks themselves."""

    own_ids: list[Any] | None
    rows: int = 0
    codes: list[Any] = field(default_factory=list)
    labels: list[Any] | None = None


def _gather(data: bytes, rules: ColumnRules, known: KnownIds | None, threads: bool) -> _Columns:
    """One pass over the batches: the ID chunks equal to the expected IDs at their place are not kept (the
    expected array stands for them), and each label chunk is reduced to one-byte class codes."""
    import pyarrow.compute as pc

    from generator.audit.load.readers.idsets import arrow_ints, arrow_strings, code_type, with_nulls_as

    classes = arrow_strings(sorted(rules.classes)) if rules.classes is not None else None
    kind = code_type(len(classes) if classes is not None else 0)
    out = _Columns(own_ids=None if known is not None else [], labels=None if classes is not None else [])
    for batch in _batches(data, rules, threads):
        chunk = batch.column(0)
        if out.own_ids is None and known is not None and not chunk.equals(known.ids.slice(out.rows, len(chunk))):
            out.own_ids = [known.ids.slice(0, out.rows)]  # the rows before were the expected IDs: a view of them
        if out.own_ids is not None:
            out.own_ids.append(chunk)
        out.rows += len(chunk)
        if batch.num_columns < 2:
            continue
        labels = batch.column(1)
        if classes is not None:
            indexes = pc.index_in(labels, value_set=classes)
            if indexes.null_count and out.labels is None:
                # The label strings are needed from here on; the chunks before are given back by their codes.
                out.labels = [classes.take(arrow_ints(c)) for c in out.codes]
            out.codes.append(with_nulls_as(indexes, -1).astype(kind))
        if out.labels is not None:
            out.labels.append(labels)
    return out


def parse_fast(data: bytes, display: str, rules: ColumnRules, severity: Severity,
               known: KnownIds | None = None, threads: bool = False) -> LabelFile | None:
    """pyarrow parsing with the column rules applied column-wise; None when the file needs the reference reader.

    `threads`: parse on pyarrow's threads (for a file read alone; prediction files are read two at a time).
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from generator.audit.load.readers.idsets import arrow_strings, code_type

    if not _fast_eligible(data, rules):
        return None
    try:
        columns = _gather(data, rules, known, threads)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None  # wrong field counts, invalid UTF-8: the reference reader names them exactly
    # A file that lists exactly the expected IDs, in their order (the usual case), shares their one array: its
    # own ID chunks were released as they were read, and its ID checks are those of the expected IDs.
    shared = known if known is not None and columns.own_ids is None and columns.rows == len(known.ids) else None
    if shared is not None:
        ids = shared.ids
    else:
        own = columns.own_ids if columns.own_ids is not None else [known.ids.slice(0, columns.rows)] if known else []
        ids = pa.chunked_array(own, type=pa.string()).combine_chunks() if own else arrow_strings([])
    if shared is None and len(ids) and pc.min(pc.binary_length(ids)).as_py() == 0:
        return None  # an empty ID or a blank line (which shifts line numbers): the reference reader names it
    out = LabelFile(file=display, ids=ids, labels=None)
    if shared is not None:
        n_bad_ids, first = shared.bad_count, list(shared.bad_first)
        id_scan = shared.text_scan
    else:
        n_bad_ids, first = _bad_ids(ids, rules)
        id_scan = scan_column(ids, ID_FORMULA_START, FIRST_FEW)
    out.bad_id_summary, out.id_text_scan = (n_bad_ids, tuple(first)), id_scan
    bad_ids = [(i + 2, ids[i].as_py()) for i in first]
    n_bad_labels, bad_labels, label_scan = 0, list[tuple[int, str]](), None
    if "label" in rules.columns:
        codes = None
        if rules.classes is not None:
            codes = np.concatenate(columns.codes) if columns.codes else np.zeros(0, code_type(len(rules.classes)))
        if columns.labels is None:  # every label is a class: their codes, one byte each
            assert rules.classes is not None
            out.label_codes, out.label_classes = codes, tuple(sorted(rules.classes))
        else:
            labels = pa.chunked_array(columns.labels, type=pa.string()).combine_chunks()
            columns.labels = None
            n_bad_labels, bad_labels, label_scan = _label_column(out, labels, codes)
    aggregate(out, severity, rules, [], bad_ids, n_bad_ids, bad_labels, n_bad_labels)
    text_findings(out, severity, id_scan, label_scan, lambda r: ids[r].as_py(),
                  (lambda r: out.labels[r].as_py()) if out.labels is not None else None)
    return out
