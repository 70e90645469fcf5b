"""`id,label` and `id` files (predictions, reference, expected IDs): two readers, one result.

The fast reader parses with pyarrow and applies the schema's column rules column-wise; the reference
reader walks rows with the csv module. Both report the same problems, lines and values (a test
compares them); the fast one hands files it cannot read exactly (quotes, blank lines, odd headers or
bytes) to the reference one.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from generator.audit.findings import Finding, Severity, make_finding
from generator.audit.readers.boundedread import BoundedRead, read_bounded
from generator.audit.readers.csvtable import decode_utf8
from generator.audit.textsafety import FORMULA_START, TEXT_CODES, ColumnScan, column_findings, scan_column, scan_list
from generator.core.resources import load_schema

FIRST_FEW = 5
_BOM = b"\xef\xbb\xbf"
# The ID pattern (`^\S`) already refuses a leading tab or carriage return (invalid-id): in IDs only these start
# a formula. A label has no pattern: it gets every formula start.
ID_FORMULA_START = "=+-@"


@dataclass
class LabelFile:
    """The columns of an id/label file, its fingerprint and what is wrong with its format.

    `ids` and `labels` are pyarrow string arrays from the fast reader, lists from the reference one;
    `labels` is None for a file with only the `id` column, and from the fast reader when every label is a
    class: `label_codes` then holds them, one byte per row, and the strings are released.
    """

    file: str
    ids: Any = field(default_factory=list)
    labels: Any = None
    problems: list[Finding] = field(default_factory=list)
    readable: bool = True
    sha256: str | None = None
    size: int | None = None
    lines: list[int] | None = None  # physical line of each row; None when row i is line i + 2
    bad_id_summary: tuple[int, tuple[int, ...]] | None = None  # fast reader: invalid-ID count and first rows
    label_codes: Any = None  # fast reader: each label's index in label_classes, when every label is a class
    label_classes: tuple[str, ...] = ()

    def release_columns(self) -> None:
        """Drop the columns once what they give is held elsewhere (the reference, once the truth is prepared):
        the fingerprint and the problems stay."""
        self.ids, self.labels, self.label_codes, self.lines = [], None, None, None

    def line_of(self, index: int) -> int:
        """The file line of row `index`."""
        return self.lines[index] if self.lines is not None else index + 2

    @property
    def format_valid(self) -> bool:
        # A formula-like cell or an invisible character misleads a reader, not the comparison: an ID holding
        # one is already unequal to every expected ID that does not.
        return self.readable and all(p.code in TEXT_CODES for p in self.problems)


@dataclass(frozen=True)
class ColumnRules:
    """The rules a file's columns must follow: from the row schema, plus the protocol's classes."""

    columns: tuple[str, ...]
    id_pattern: str
    id_max_length: int
    classes: frozenset[str] | None

    @classmethod
    def from_schema(cls, schema_name: str, classes: set[str] | None) -> ColumnRules:
        schema = load_schema(schema_name)
        prop = schema["properties"]["id"]
        return cls(columns=tuple(schema["x-csv-columns"]), id_pattern=prop["pattern"],
                   id_max_length=prop["maxLength"], classes=frozenset(classes) if classes is not None else None)


def _first(items: Sequence[tuple[int, Any]]) -> str:
    return ", ".join(f"line {ln}: {str(v)[:40]!r}" for ln, v in items[:FIRST_FEW])


def _aggregate(out: LabelFile, severity: Severity, rules: ColumnRules, count_errors: list[tuple[int, int]],
               bad_ids: list[tuple[int, str]], n_bad_ids: int, bad_labels: list[tuple[int, str]],
               n_bad_labels: int) -> None:
    """One finding per kind of problem, with the exact count and the first few lines: bounded at any scale."""
    width = len(rules.columns)
    for items, total, code, what, fix in (
        (count_errors, len(count_errors), "field-count", f"lines without exactly {width} field(s)",
         f"write {','.join(rules.columns)} on every line; quote commas"),
        (bad_ids, n_bad_ids, "invalid-id", "empty, space-padded or over-long IDs",
         "write the ID exactly as in the expected IDs"),
        (bad_labels, n_bad_labels, "unknown-label", "labels outside the declared classes",
         "use only the protocol's classes"),
    ):
        if total:
            out.problems.append(make_finding(code, severity, out.file, f"{total} {what} (first: {_first(items)})",
                                             line=items[0][0], value=total, rule=f"format: {','.join(rules.columns)}",
                                             fix=fix))


def _text_findings(out: LabelFile, severity: Severity, id_scan: ColumnScan, label_scan: ColumnScan | None,
                   value_at: Any, label_at: Any) -> None:
    """Formula-like cells and invisible characters, one finding per kind and column (both readers).

    An invisible character takes the file's severity: an error in the expected IDs and the reference (the
    truth every run is compared with), a warning in a prediction file (the run's own output, whose ID is then
    unequal to the expected one and counted against the run already).
    """
    out.problems.extend(column_findings(id_scan, value_at, out.line_of, out.file, "id", severity))
    if label_scan is not None:
        out.problems.extend(column_findings(label_scan, label_at, out.line_of, out.file, "label", severity))


def _problem(out: LabelFile, severity: Severity, rules: ColumnRules, code: str, message: str, line: int | None,
             value: Any, fix: str, rule: str | None = None) -> None:
    out.problems.append(make_finding(code, severity, out.file, message, line=line, value=value,
                                     rule=rule or f"format: {','.join(rules.columns)}", fix=fix))


def parse_reference(text: str, display: str, rules: ColumnRules, severity: Severity) -> LabelFile:
    """The straightforward reader: the csv module, row by row."""
    out = LabelFile(file=display, ids=[], labels=[] if "label" in rules.columns else None, lines=[])
    id_ok = re.compile(rules.id_pattern)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    bad_ids: list[tuple[int, str]] = []
    bad_labels: list[tuple[int, str]] = []
    count_errors: list[tuple[int, int]] = []
    previous_end = 0
    try:
        for record in reader:
            start = previous_end + 1
            previous_end = reader.line_num
            if header is None:
                header = record
                if tuple(record) != rules.columns:
                    _problem(out, severity, rules, "prediction-header",
                             f"header is {','.join(record)!r}, expected {','.join(rules.columns)!r}", 1,
                             ",".join(record)[:80], f"write the header line {','.join(rules.columns)}")
                continue
            if not record:
                continue
            if len(record) != len(rules.columns):
                count_errors.append((start, len(record)))
                continue
            ident = record[0]
            if not id_ok.fullmatch(ident) or len(ident) > rules.id_max_length:
                bad_ids.append((start, ident))
            out.ids.append(ident)
            out.lines.append(start)  # type: ignore[union-attr]
            if out.labels is not None:
                label = record[1]
                if rules.classes is not None and label not in rules.classes:
                    bad_labels.append((start, label))
                out.labels.append(label)
    except csv.Error as exc:
        _problem(out, severity, rules, "csv-syntax", f"CSV syntax error: {exc}", reader.line_num, None,
                 "quote cells that contain commas, quotes or line breaks", "RFC 4180 quoting")
    if header is None:
        _problem(out, severity, rules, "empty-file", "the file is empty", None, None,
                 f"write the header {','.join(rules.columns)} and one row per ID")
    _aggregate(out, severity, rules, count_errors, bad_ids, len(bad_ids), bad_labels, len(bad_labels))
    label_scan = None
    if out.labels is not None:
        # A label that is a declared class is checked once, in protocol.json's classes; only the others here.
        outside = [i for i, v in enumerate(out.labels) if rules.classes is None or v not in rules.classes]
        label_scan = scan_list([out.labels[i] for i in outside], FORMULA_START, FIRST_FEW).shifted(outside)
    _text_findings(out, severity, scan_list(out.ids, ID_FORMULA_START, FIRST_FEW), label_scan,
                   out.ids.__getitem__, out.labels.__getitem__ if out.labels is not None else None)
    return out


def _fast_eligible(data: bytes, rules: ColumnRules) -> bool:
    """Whether row i of the file can be line i + 2: no quoting, no lone CR, no NUL (blank lines: see _parse_fast)."""
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
    from generator.audit.readers.idpattern import bad_ids

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
    return KnownIds(ids=ids_file.ids, bad_count=count, bad_first=tuple(first),
                    text_scan=scan_column(ids_file.ids, ID_FORMULA_START, FIRST_FEW))


def _label_column(out: LabelFile, column: Any, rules: ColumnRules) -> tuple[int, list[tuple[int, str]], ColumnScan]:
    """The labels outside the classes (count, first rows) and their text scan; when all are classes, their
    codes, and the strings are not kept."""
    import pyarrow.compute as pc

    from generator.audit.idsets import arrow_strings, class_codes, ints

    if rules.classes is None:
        out.labels = column.combine_chunks()
        return 0, [], scan_column(out.labels, FORMULA_START, FIRST_FEW)
    # One lookup in the few classes gives each label's class code, and null for an unknown label; the
    # column's chunks are looked up as they are (combining them would copy every label once more).
    classes = tuple(sorted(rules.classes))
    codes = pc.index_in(column, value_set=arrow_strings(classes))
    n_bad_labels = codes.null_count
    if not n_bad_labels:
        out.label_codes, out.label_classes = class_codes(codes, len(classes)), classes
        return 0, [], ColumnScan()
    labels = out.labels = column.combine_chunks()
    codes = codes.combine_chunks()
    outside = pc.indices_nonzero(pc.is_null(codes))
    rows = ints(outside.slice(0, FIRST_FEW))
    bad_labels = [(int(i) + 2, labels[int(i)].as_py()) for i in rows]
    # A label that is a declared class is checked once, in protocol.json's classes; only the others.
    return n_bad_labels, bad_labels, scan_column(labels.take(outside), FORMULA_START, FIRST_FEW).shifted(ints(outside))


def _parse_fast(data: bytes, display: str, rules: ColumnRules, severity: Severity,
                known: KnownIds | None = None, threads: bool = False) -> LabelFile | None:
    """pyarrow parsing with the column rules applied column-wise; None when the file needs the reference reader.

    `threads`: parse on pyarrow's threads (for a file read alone; prediction files are read two at a time).
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv


    if not _fast_eligible(data, rules):
        return None
    types = {c: pa.string() for c in rules.columns}
    try:
        table = pacsv.read_csv(
            pa.BufferReader(data), read_options=pacsv.ReadOptions(use_threads=threads, block_size=PARSE_BLOCK),
            parse_options=pacsv.ParseOptions(quote_char=False, ignore_empty_lines=False),
            # ASCII is valid UTF-8: pyarrow's own check is then skipped (a tenth of the parsing time).
            convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                                 include_columns=list(rules.columns), check_utf8=not data.isascii()),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None  # wrong field counts, invalid UTF-8: the reference reader names them exactly
    if tuple(table.column_names) != rules.columns:
        return None
    from generator.audit.idsets import same_values

    id_column = table.column("id")
    label_column = table.column("label") if "label" in rules.columns else None
    del table
    # A file that lists exactly the expected IDs, in their order (the usual case), shares their one array:
    # its own ID chunks are released at once, and its ID checks are those of the expected IDs.
    shared = known if known is not None and same_values(id_column, known.ids) else None
    ids = shared.ids if shared is not None else id_column.combine_chunks()
    del id_column
    if shared is None and len(ids) and pc.min(pc.binary_length(ids)).as_py() == 0:
        return None  # an empty ID or a blank line (which shifts line numbers): the reference reader names it
    out = LabelFile(file=display, ids=ids, labels=None)
    if shared is not None:
        n_bad_ids, first = shared.bad_count, list(shared.bad_first)
        id_scan = shared.text_scan
    else:
        n_bad_ids, first = _bad_ids(ids, rules)
        id_scan = scan_column(ids, ID_FORMULA_START, FIRST_FEW)
    out.bad_id_summary = (n_bad_ids, tuple(first))
    bad_ids = [(i + 2, ids[i].as_py()) for i in first]
    n_bad_labels, bad_labels, label_scan = 0, list[tuple[int, str]](), None
    if label_column is not None:
        n_bad_labels, bad_labels, label_scan = _label_column(out, label_column, rules)
        del label_column
    _aggregate(out, severity, rules, [], bad_ids, n_bad_ids, bad_labels, n_bad_labels)
    _text_findings(out, severity, id_scan, label_scan, lambda r: ids[r].as_py(),
                   (lambda r: out.labels[r].as_py()) if out.labels is not None else None)
    return out


# pyarrow parses in blocks of this size, one chunk each: small blocks bound the parser's own buffers (a
# block as large as the file needs twice the columns' memory for them), and the chunks are looked up as
# they are, or combined only for a file whose IDs are not the expected ones in their order.
PARSE_BLOCK = 1 << 20
# A prediction or reference file may hold twice what one row per expected ID needs (room for duplicates,
# extra rows, long wrong labels: each still a finding of its own), plus this much for a tiny corpus.
SIZE_SLACK = 2
SIZE_SPARE_BYTES = 64 * 1024


def size_limit(expected: LabelFile | None, classes: set[str] | None) -> int | None:
    """The most bytes a prediction or reference file of this corpus is read with (None: no corpus known).

    One row per expected ID takes the ID's bytes, a comma, the longest class (or 800 bytes, the schema's 200
    characters, without classes) and a CRLF; the limit is SIZE_SLACK times that plus SIZE_SPARE_BYTES.
    """
    if expected is None or not expected.readable:
        return None
    if isinstance(expected.ids, list):
        id_bytes = sum(len(v.encode("utf-8")) for v in expected.ids)
    else:
        import pyarrow.compute as pc

        id_bytes = pc.sum(pc.binary_length(expected.ids)).as_py() or 0
    label = max((len(c.encode("utf-8")) for c in classes), default=0) if classes else 800
    return SIZE_SLACK * (id_bytes + len(expected.ids) * (label + 3)) + SIZE_SPARE_BYTES


def refused(raw: BoundedRead, display: str) -> LabelFile:
    """A file refused unparsed (a line or the file too long): unreadable, with its fingerprint."""
    assert raw.refusal is not None
    return LabelFile(file=display, problems=[raw.refusal], readable=False, sha256=raw.sha256, size=raw.size)


def read_label_file(path: Path, display: str, rules: ColumnRules, severity: Severity, *, fast: bool = True,
                    known: KnownIds | None = None, threads: bool = False, max_bytes: int | None = None) -> LabelFile:
    """Read one id/label file: fingerprint, columns and format problems (`threads`: see _parse_fast).

    The file is read in blocks and refused unparsed past `max_bytes` or MAX_LINE_BYTES (`read_bounded`).
    """
    raw = read_bounded(path, display, max_bytes=max_bytes, severity=severity)
    if raw.data is None:
        return refused(raw, display)
    result = parse_label_bytes(raw.data, display, rules, severity, fast=fast, known=known, threads=threads)
    result.sha256, result.size = raw.sha256, raw.size
    return result


def parse_label_bytes(data: bytes, display: str, rules: ColumnRules, severity: Severity, *, fast: bool = True,
                      known: KnownIds | None = None, threads: bool = False) -> LabelFile:
    """The columns and format problems of an id/label file's bytes (no fingerprint: the caller has it)."""
    result = _parse_fast(data, display, rules, severity, known, threads) if fast else None
    if result is None:
        text, bad = decode_utf8(data, display)
        if text is None:
            assert bad is not None
            result = LabelFile(file=display, problems=[replace(bad, severity=severity)], readable=False)
        else:
            result = parse_reference(text, display, rules, severity)
    return result


def read_labels(path: Path, display: str, classes: set[str] | None, severity: Severity, *,
                fast: bool = True, known: KnownIds | None = None, threads: bool = False,
                max_bytes: int | None = None) -> LabelFile:
    """An `id,label` file (reference or predictions); `max_bytes`: see `size_limit`."""
    return read_label_file(path, display, ColumnRules.from_schema("labels-row", classes), severity, fast=fast,
                           known=known, threads=threads, max_bytes=max_bytes)


def read_ids(path: Path, display: str, *, fast: bool = True, threads: bool = False) -> LabelFile:
    """The expected-IDs file (`id`)."""
    return read_label_file(path, display, ColumnRules.from_schema("expected-ids-row", None), Severity.ERROR, fast=fast,
                           threads=threads)
