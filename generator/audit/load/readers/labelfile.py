"""An id/label file as the readers give it (columns, fingerprint, format problems), its column rules, and the
findings both readers report the same way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.textsafety import TEXT_CODES, ColumnScan, column_findings
from generator.core.system.resources import load_schema

FIRST_FEW = 5
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
    id_text_scan: ColumnScan | None = None  # fast reader: the IDs' formula and invisible-character scan
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


def aggregate(out: LabelFile, severity: Severity, rules: ColumnRules, count_errors: list[tuple[int, int]],
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


def text_findings(out: LabelFile, severity: Severity, id_scan: ColumnScan, label_scan: ColumnScan | None,
                  value_at: Any, label_at: Any) -> None:
    """Formula-like cells and invisible characters, one finding per kind and column (both readers).

    An invisible character takes the file's severity: an error in the expected IDs and the reference (the
    truth every run is compared with), a warning in a prediction file (the run's own output, whose ID is then
    unequal to the expected one and counted against the run already).
    """
    out.problems.extend(column_findings(id_scan, value_at, out.line_of, out.file, "id", severity))
    if label_scan is not None:
        out.problems.extend(column_findings(label_scan, label_at, out.line_of, out.file, "label", severity))


def problem(out: LabelFile, severity: Severity, rules: ColumnRules, code: str, message: str, line: int | None,
            value: Any, fix: str, rule: str | None = None) -> None:
    """One format finding of the file (the rule: its columns, unless another is named)."""
    out.problems.append(make_finding(code, severity, out.file, message, line=line, value=value,
                                     rule=rule or f"format: {','.join(rules.columns)}", fix=fix))
