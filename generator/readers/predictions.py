"""Prediction and label files (`id,label`): parsed column-wise, with format problems as data."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from generator.findings import Finding, Severity
from generator.readers.csvtable import decode_utf8, read_bytes
from generator.resources import load_schema

FIRST_FEW = 5


@dataclass
class LabelFile:
    """The rows of an `id,label` file and what is wrong with its format."""

    file: str
    ids: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)
    readable: bool = True

    @property
    def format_valid(self) -> bool:
        return self.readable and not self.problems


def _id_pattern() -> re.Pattern[str]:
    prop = load_schema("labels-row")["properties"]["id"]
    return re.compile(prop["pattern"])


def parse_labels(text: str, display: str, classes: set[str] | None, severity: Severity) -> LabelFile:
    """Parse `id,label` text; a label outside `classes` (when given) is a format problem."""
    out = LabelFile(file=display)
    expected_header = load_schema("labels-row")["x-csv-columns"]
    id_ok = _id_pattern()

    def problem(code: str, message: str, line: int | None, value: object = None, fix: str = "", rule: str = "") -> None:
        out.problems.append(Finding(code=code, severity=severity, file=display, line=line, value=value,
                                    rule=rule or "format: id,label", fix=fix, message=message))

    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    bad_label_lines: list[tuple[int, str]] = []
    bad_id_lines: list[tuple[int, str]] = []
    count_errors: list[tuple[int, int]] = []
    previous_end = 0
    try:
        for record in reader:
            start = previous_end + 1
            previous_end = reader.line_num
            if header is None:
                header = record
                if record != expected_header:
                    problem("prediction-header", f"header is {','.join(record)!r}, expected 'id,label'", 1,
                            ",".join(record)[:80], "write the header line id,label")
                continue
            if not record:
                continue
            if len(record) != 2:
                count_errors.append((start, len(record)))
                continue
            ident, label = record
            if not id_ok.fullmatch(ident):
                bad_id_lines.append((start, ident))
            if classes is not None and label not in classes:
                bad_label_lines.append((start, label))
            out.ids.append(ident)
            out.labels.append(label)
            out.lines.append(start)
    except csv.Error as exc:
        problem("csv-syntax", f"CSV syntax error: {exc}", reader.line_num, None,
                "quote cells that contain commas, quotes or line breaks", "RFC 4180 quoting")
    if header is None:
        problem("empty-file", "the file is empty", None, None, "write the header id,label and one row per ID")
    for items, code, what, fix in (
        (count_errors, "field-count", "lines without exactly 2 fields", "write id,label on every line; quote commas"),
        (bad_id_lines, "invalid-id", "empty or space-padded IDs", "write the ID exactly as in the expected IDs"),
        (bad_label_lines, "unknown-label", "labels outside the declared classes", "use only the protocol's classes"),
    ):
        if items:
            first = ", ".join(f"line {ln}: {str(v)[:40]!r}" for ln, v in items[:FIRST_FEW])
            problem(code, f"{len(items)} {what} (first: {first})", items[0][0], len(items), fix)
    return out


def read_labels(path: Path, display: str, classes: set[str] | None, severity: Severity) -> LabelFile:
    """Read an `id,label` file from disk."""
    text, bad = decode_utf8(read_bytes(path, display), display)
    if text is None:
        assert bad is not None
        return LabelFile(file=display, problems=[replace(bad, severity=severity)], readable=False)
    return parse_labels(text, display, classes, severity)
