"""`id,label` and `id` files (predictions, reference, expected IDs): two readers, one result.

The fast reader (`columnwise`) parses with pyarrow and applies the schema's column rules column-wise; the
reference reader, here, walks rows with the csv module. Both report the same problems, lines and values (a test
compares them); the fast one hands files it cannot read exactly (quotes, blank lines, odd headers or
bytes) to the reference one.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import replace
from pathlib import Path

from generator.audit.load.findings import Severity
from generator.audit.load.readers.boundedread import BoundedRead, read_bounded
from generator.audit.load.readers.columnwise import KnownIds, known_ids, parse_fast
from generator.audit.load.readers.csvtable import decode_utf8, delimiter_finding
from generator.audit.load.readers.labelfile import (
    FIRST_FEW,
    ID_FORMULA_START,
    ColumnRules,
    LabelFile,
    aggregate,
    problem,
    text_findings,
)
from generator.audit.load.textsafety import FORMULA_START, scan_list

__all__ = ["FIRST_FEW", "ColumnRules", "KnownIds", "LabelFile", "known_ids", "parse_label_bytes", "read_ids",
           "read_label_file", "read_labels", "refused", "size_limit"]


def parse_reference(text: str, display: str, rules: ColumnRules, severity: Severity) -> LabelFile:
    """The straightforward reader: the csv module, row by row."""
    out = LabelFile(file=display, ids=[], labels=[] if "label" in rules.columns else None, lines=[])
    wrong_delimiter = delimiter_finding(text, list(rules.columns), display, severity)
    if wrong_delimiter is not None:
        out.problems.append(wrong_delimiter)
        out.readable = False
        return out
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
                    problem(out, severity, rules, "prediction-header",
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
        problem(out, severity, rules, "csv-syntax", f"CSV syntax error: {exc}", reader.line_num, None,
                "quote cells that contain commas, quotes or line breaks", "RFC 4180 quoting")
    if header is None:
        problem(out, severity, rules, "empty-file", "the file is empty", None, None,
                f"write the header {','.join(rules.columns)} and one row per ID")
    aggregate(out, severity, rules, count_errors, bad_ids, len(bad_ids), bad_labels, len(bad_labels))
    label_scan = None
    if out.labels is not None:
        # A label that is a declared class is checked once, in protocol.json's classes; only the others here.
        outside = [i for i, v in enumerate(out.labels) if rules.classes is None or v not in rules.classes]
        label_scan = scan_list([out.labels[i] for i in outside], FORMULA_START, FIRST_FEW).shifted(outside)
    text_findings(out, severity, scan_list(out.ids, ID_FORMULA_START, FIRST_FEW), label_scan,
                  out.ids.__getitem__, out.labels.__getitem__ if out.labels is not None else None)
    return out


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
    """Read one id/label file: fingerprint, columns and format problems (`threads`: see columnwise.parse_fast).

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
    result = parse_fast(data, display, rules, severity, known, threads) if fast else None
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
