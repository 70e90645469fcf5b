"""Text that deceives a reader: cells a spreadsheet would run as formulas, and invisible or reordering characters.

Nothing here rewrites an input (the bundle keeps byte-exact copies): it finds such text, names the file, line,
field and code point, and makes the characters visible wherever gpu-audit itself shows the text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator.audit.load.findings import Finding, Severity, make_finding

if TYPE_CHECKING:
    from numpy.typing import NDArray

FORMULA = "formula-like-cell"
INVISIBLE = "invisible-character"
# These findings describe how a text may mislead a person; they never make a file unreadable or a format
# invalid, so the readers leave them out of `format_valid` and `Document.ok`.
TEXT_CODES = frozenset({FORMULA, INVISIBLE})

# Bidirectional controls (they reorder what follows: "50.00 USD" can be displayed for other bytes), and
# zero-width characters (they make two different IDs look equal, or hide text). U+2061-U+2064, the
# invisible mathematical operators, are zero-width too.
_RANGES = ((0x061C, 0x061C), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x2064), (0x2066, 0x2069),
           (0xFEFF, 0xFEFF))
_CLASS = "".join(f"\\x{{{a:04X}}}-\\x{{{b:04X}}}" if a != b else f"\\x{{{a:04X}}}" for a, b in _RANGES)
INVISIBLE_RE2 = f"[{_CLASS}]"  # the same set for pyarrow.compute (RE2 syntax)
_INVISIBLE = re.compile("[" + "".join(f"{chr(a)}-{chr(b)}" if a != b else chr(a) for a, b in _RANGES) + "]")
# The terminal also gets the C0 and C1 controls escaped (an ESC sequence or a CR could rewrite the screen),
# except the tab and the line feed that the plain-text report is made of.
_TERMINAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + _INVISIBLE.pattern[1:-1] + "]")

FORMULA_START = "=+-@\t\r"
NUMBER = r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?"
_NUMBER = re.compile(NUMBER)
FORMULA_RULE = ("a text cell does not start with '=', '+', '-', '@', a tab or a carriage return unless it is a number: "
                "a spreadsheet opening the file would run it as a formula")
FORMULA_FIX = ("if the text is meant, drop or move its first character; gpu-audit copies the file byte for byte, so "
               "open it in a spreadsheet only as text (import with formulas off)")
INVISIBLE_RULE = ("no bidirectional controls (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C) or zero-width "
                  "characters (U+200B-U+200D, U+2060-U+2064, U+FEFF) in input text")
INVISIBLE_FIX = ("delete the character(s) and retype the text around them; the note and the terminal show them as "
                 "<U+XXXX>")


def visible(text: str, tag: str = "<U+{:04X}>") -> str:
    """The text with every invisible or reordering character shown as `<U+202E>` instead of applied.

    `tag` formats the code point (HTML that is already markup needs `&lt;U+{:04X}&gt;`).
    """
    if text.isascii():
        return text
    return _INVISIBLE.sub(lambda m: tag.format(ord(m.group(0))), text)


def terminal_safe(text: str, tag: str = "<U+{:04X}>") -> str:
    """`visible`, plus the control characters (other than tab and line feed) shown as `<U+001B>`."""
    return _TERMINAL.sub(lambda m: tag.format(ord(m.group(0))), text)


def code_points(text: str) -> list[str]:
    """The distinct invisible characters of a text in order of appearance, as `U+202E`."""
    if text.isascii():
        return []
    return list(dict.fromkeys(f"U+{ord(c):04X}" for c in _INVISIBLE.findall(text)))


def describe(points: Iterable[str]) -> str:
    """`U+202E (RIGHT-TO-LEFT OVERRIDE)` for each code point."""
    return ", ".join(f"{p} ({unicodedata.name(chr(int(p.removeprefix('U+'), base=16)), 'unnamed')})" for p in points)


def formula_like(text: str, starts: str = FORMULA_START) -> bool:
    """Whether a spreadsheet would run the text as a formula: a leading `=`, `+`, `-`, `@`, tab or CR, not a number."""
    return bool(text) and text[0] in starts and not _NUMBER.fullmatch(text)


def cell_findings(cell: str, file: str, line: int, column: str, severity: Severity) -> list[Finding]:
    """The findings of one CSV text cell; `severity` is the invisible characters' (a formula is a warning)."""
    out: list[Finding] = []
    if formula_like(cell):
        out.append(make_finding(FORMULA, Severity.WARNING, file,
                                f"{column} starts with {cell[0]!r}: a spreadsheet would run "
                                f"{visible(cell)[:60]!r} as a formula", line=line, field=column, value=cell[:80],
                                rule=FORMULA_RULE, fix=FORMULA_FIX))
    points = code_points(cell)
    if points:
        out.append(make_finding(INVISIBLE, severity, file,
                                f"{column} holds {describe(points)}, invisible characters that can hide or "
                                f"reorder the text: {visible(cell)[:80]!r}", line=line, field=column, value=cell[:80],
                                rule=INVISIBLE_RULE, fix=INVISIBLE_FIX))
    return out


def json_findings(data: Any, file: str, free_text: frozenset[str]) -> list[Finding]:
    """Invisible characters in the strings of a JSON document, each at its JSON path.

    An identifier, a name, a revision or a path is an error: it is compared, shown as evidence, or names a
    file, and a hidden character changes what it is. A string under a key of `free_text` (notes,
    descriptions, the question) is only read by people, and the note shows the characters visibly: a warning.
    """
    out: list[Finding] = []
    stack: list[tuple[Any, str, str]] = [(data, "", "")]
    while stack:
        node, path, key = stack.pop()
        if isinstance(node, str):
            points = code_points(node)
            if points:
                severity = Severity.WARNING if key in free_text else Severity.ERROR
                out.append(make_finding(INVISIBLE, severity, file,
                                        f"the string at {path or '/'} holds {describe(points)}, invisible "
                                        f"characters that can hide or reorder the text: {visible(node)[:80]!r}",
                                        field=path or "/", value=node[:80], rule=INVISIBLE_RULE, fix=INVISIBLE_FIX))
        elif isinstance(node, dict):
            stack.extend((v, f"{path}/{str(k).replace('~', '~0').replace('/', '~1')}", str(k))
                         for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{path}/{i}", key) for i, v in enumerate(node))
    return sorted(out, key=lambda f: f.field or "")


# ------------------------------------------------------------------------------------- columns (pyarrow)


@dataclass(frozen=True)
class ColumnScan:
    """What a column holds: count and first row indices of formula-like cells and of invisible characters."""

    formula: int = 0
    formula_rows: tuple[int, ...] = ()
    invisible: int = 0
    invisible_rows: tuple[int, ...] = ()

    def shifted(self, rows: Sequence[int] | NDArray[Any]) -> ColumnScan:
        """The scan of a subset of a column, its row indices mapped back to `rows`."""
        return ColumnScan(self.formula, tuple(int(rows[i]) for i in self.formula_rows), self.invisible,
                          tuple(int(rows[i]) for i in self.invisible_rows))


def scan_column(values: Any, starts: str, first_few: int) -> ColumnScan:
    """Scan a pyarrow string array column-wise: the first byte of each value, RE2 only where needed."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from generator.audit.load.readers.idsets import arrow_ints, ints

    if not pa.types.is_string(values.type):
        values = values.cast(pa.string())
    n = len(values)
    if n == 0:
        return ColumnScan()
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int32)[values.offset: values.offset + n + 1]
    data = values.buffers()[2]
    body = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    nonempty = offsets[1:] > offsets[:-1]
    first = np.zeros(n, dtype=np.uint8)
    first[nonempty] = body[offsets[:-1][nonempty]]
    table = np.zeros(256, dtype=bool)
    table[[ord(c) for c in starts]] = True
    rows = np.flatnonzero(table[first])
    formula_rows: np.ndarray = rows
    if len(rows):  # the few candidates: a signed number such as -3.5 is no formula
        candidates = values.take(arrow_ints(rows))
        number = pc.match_substring_regex(candidates, f"^{NUMBER}$")
        formula_rows = rows[ints(pc.indices_nonzero(pc.invert(number))).astype(np.int64)]
    inv_count, inv_first = 0, np.zeros(0, np.int64)
    if not pc.all(pc.string_is_ascii(values)).as_py():
        hit = pc.match_substring_regex(values, INVISIBLE_RE2)
        inv_count = int(pc.sum(hit).as_py() or 0)
        if inv_count:
            inv_first = ints(pc.indices_nonzero(hit).slice(0, first_few))
    return ColumnScan(len(formula_rows), tuple(int(i) for i in formula_rows[:first_few]), inv_count,
                      tuple(int(i) for i in inv_first))


def scan_list(values: Sequence[str], starts: str, first_few: int) -> ColumnScan:
    """The same scan over a Python list (the row-by-row reader)."""
    formula = [i for i, v in enumerate(values) if formula_like(v, starts)]
    invisible = [i for i, v in enumerate(values) if not v.isascii() and _INVISIBLE.search(v)]
    return ColumnScan(len(formula), tuple(formula[:first_few]), len(invisible), tuple(invisible[:first_few]))


def column_findings(scan: ColumnScan, value_at: Any, line_of: Any, file: str, column: str,
                    severity: Severity) -> list[Finding]:
    """One finding per kind for a column: the exact count and the first lines (bounded at any scale).

    `value_at(row)` gives a row's text, `line_of(row)` its line; `severity` is the invisible characters'.
    """
    out: list[Finding] = []
    if scan.formula:
        first = ", ".join(f"line {line_of(r)}: {visible(value_at(r))[:40]!r}" for r in scan.formula_rows)
        out.append(make_finding(FORMULA, Severity.WARNING, file,
                                f"{scan.formula} {column} cell(s) a spreadsheet would run as a formula "
                                f"(first: {first})", line=line_of(scan.formula_rows[0]), field=column,
                                value=scan.formula, rule=FORMULA_RULE, fix=FORMULA_FIX))
    if scan.invisible:
        texts = [value_at(r) for r in scan.invisible_rows]
        points = list(dict.fromkeys(p for t in texts for p in code_points(t)))
        first = ", ".join(f"line {line_of(r)}: {visible(t)[:40]!r}"
                          for r, t in zip(scan.invisible_rows, texts, strict=False))
        out.append(make_finding(INVISIBLE, severity, file,
                                f"{scan.invisible} {column} cell(s) hold invisible or reordering characters, "
                                f"{describe(points)} (first: {first})", line=line_of(scan.invisible_rows[0]),
                                field=column, value=scan.invisible, rule=INVISIBLE_RULE, fix=INVISIBLE_FIX))
    return out
