"""Schema-driven CSV reading: the header read by its names (csvheader), typed cells (empty is null, never 0), row
findings."""

from __future__ import annotations

import csv
import hashlib
import io
import math
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.access import as_object
from generator.audit.load.readers.csvheader import canonical, read_header
from generator.audit.load.schemacheck import validate_document
from generator.audit.load.textsafety import cell_findings
from generator.core.errors import LimitExceededError, SecretInInputError, UnreadableInputError
from generator.core.jsonvalue import JsonObject, JsonScalar
from generator.core.limits import Limits, limit_message, resolve
from generator.core.system.pemkeys import holds_private_key
from generator.core.system.resources import load_schema

_INT = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_DECIMAL_COMMA = re.compile(r"[+-]?[0-9]+,[0-9]+")
_BOOL = {"true": True, "false": False}
_BOM = b"\xef\xbb\xbf"
MAX_NUMBER_CHARS = 100  # a longer number is a typo or an attack, never a measurement
# Free text read only by people (the grid's notes): an invisible character there is a warning, since the note
# shows it visibly. In every other text cell (an identifier, a revision, a model or GPU name) it changes what
# the value is, or what a reader believes it is: an error.
FREE_TEXT_COLUMNS = frozenset({"notes"})


@dataclass
class Table:
    """A parsed CSV file: typed rows keyed by column name, the line each row starts on, findings."""

    file: str
    header: list[str]
    columns: list[str | None] = field(default_factory=list)  # each header field's schema column (csvheader)
    rows: list[dict[str, JsonScalar]] = field(default_factory=list)  # typed cells; `load` makes them rows
    lines: list[int] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    readable: bool = True
    size: int | None = None  # the file's bytes and SHA-256 as read (a manifest may have to prove them)
    sha256: str | None = None


def open_regular(path: Path, display: str, lim: Limits) -> tuple[BinaryIO, os.stat_result]:
    """Open an input for reading: a regular file only (a pipe or a device could block or never end), at most
    `max_file_bytes` long; OS errors become an error that names the file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise UnreadableInputError(f"{display}: is a folder, expected a file") from None
    except OSError as exc:
        raise UnreadableInputError(f"{display}: cannot be read ({exc.strerror}); check its permissions") from None
    fh = os.fdopen(fd, "rb")
    try:
        info = os.fstat(fh.fileno())
        if stat.S_ISDIR(info.st_mode):
            raise UnreadableInputError(f"{display}: is a folder, expected a file")
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableInputError(f"{display}: is not a regular file (a pipe, socket or device); "
                                       "inputs are plain files")
        if info.st_size > lim.max_file_bytes:
            raise LimitExceededError(limit_message("max_file_bytes", lim, f"{display}: {info.st_size} bytes"))
    except BaseException:
        fh.close()
        raise
    return fh, info


def refuse_secret(data: bytes | bytearray, display: str) -> None:
    if holds_private_key(data):
        raise SecretInInputError(f"{display}: holds a PEM private key; a signing key is never a campaign input "
                                 "(it is not read, printed nor copied into a bundle): move it out of the campaign "
                                 "folder and name the right file in protocol.json")


def read_bytes(path: Path, display: str, limits: Limits | None = None) -> bytes:
    """Read a whole input file, turning OS errors into an error that names the file.

    Only a regular file is read (a pipe or a device could block or never end), at most `max_file_bytes`
    of it (`--max-file-bytes`); a file holding a PEM private key is refused, so that a key is never
    parsed, printed in a finding or copied into a bundle.
    """
    lim = resolve(limits)
    try:
        fh, _ = open_regular(path, display, lim)
        with fh:
            data = fh.read(lim.max_file_bytes + 1)
    except OSError as exc:
        raise UnreadableInputError(f"{display}: cannot be read ({exc.strerror}); check its permissions") from None
    if len(data) > lim.max_file_bytes:  # it grew while being read
        raise LimitExceededError(limit_message("max_file_bytes", lim,
                                               f"{display}: more than {lim.max_file_bytes} bytes"))
    refuse_secret(data, display)
    return data


def decode_utf8(raw: bytes, display: str) -> tuple[str | None, Finding | None]:
    """Decode UTF-8 (a BOM tolerated); invalid bytes become a finding with line and byte offset."""
    if raw.startswith(_BOM):
        raw = raw[len(_BOM):]
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return None, make_finding("invalid-encoding", Severity.ERROR, display, f"invalid UTF-8 at byte {exc.start}",
                                  line=line, value=raw[exc.start : exc.start + 4].hex(" "), rule="encoding: UTF-8",
                                  fix="save the file as UTF-8 (with or without BOM)")


# Delimiters a spreadsheet writes instead of the comma: `;` where the decimal separator is a comma (French,
# German), a tab for "text (tab-delimited)". Named once for the file, instead of a finding per misread column.
_OTHER_DELIMITERS = {";": "semicolons (';')", "\t": "tabs"}


def delimiter_finding(text: str, expected: list[str], display: str, severity: Severity) -> Finding | None:
    """A header line separated by `;` or tabs instead of commas, as one finding naming the delimiter and the fix.

    Only a header whose fields, split on that delimiter, include one of the expected columns and outnumber
    its comma-separated fields: a comma-separated header with a `;` inside a quoted name is not one.
    """
    line = re.split(r"\r\n|\r|\n", text, maxsplit=1)[0]  # the first line, whatever ends it (a lone CR too)
    try:
        commas = len(next(csv.reader([line]), []))
    except csv.Error:  # a header the csv module cannot split is the reader's own finding, not a delimiter's
        return None
    for delimiter, name in _OTHER_DELIMITERS.items():
        fields = [canonical(f.strip().strip('"')) for f in line.split(delimiter)]
        if len(fields) > max(commas, 1) and set(fields) & set(expected):
            return make_finding(
                "csv-delimiter", severity, display,
                f"the file's fields are separated by {name}, not commas (as a spreadsheet set to a French or "
                "German locale saves it); it was not read further", line=1, value=repr(delimiter)[1:-1],
                rule="a CSV file is comma-separated (RFC 4180), UTF-8",
                fix="save it as comma-separated CSV in UTF-8 (LibreOffice: Save As, Text CSV, field delimiter ','; "
                    "Excel: CSV UTF-8 (Comma delimited))")
    return None


def _types(prop: JsonObject) -> set[str]:
    declared = prop.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {str(t) for t in declared}
    kinds: set[str] = set()
    enum = prop.get("enum")
    for v in enum if isinstance(enum, list) else []:
        if v is None:
            kinds.add("null")
        elif isinstance(v, bool):
            kinds.add("boolean")
        elif isinstance(v, int):
            kinds.add("integer")
        elif isinstance(v, float):
            kinds.add("number")
        else:
            kinds.add("string")
    return kinds


def convert_cell(cell: str, prop: JsonObject) -> tuple[JsonScalar, tuple[str, str, str] | None]:
    """Type one cell by its schema property. Returns (value, None) or (None, (code, message, fix)).

    An empty cell is None ("not recorded"); "0" stays 0: the two are never confused.
    """
    kinds = _types(prop)
    if cell == "":
        if "null" in kinds:
            return None, None
        return None, ("missing-value", "empty cell where a value is required", "fill in the cell")
    if "boolean" in kinds:
        if cell in _BOOL:
            return _BOOL[cell], None
        return None, ("not-boolean", f"{cell!r} is not a boolean", "write true or false (lower case)")
    if "integer" in kinds and "number" not in kinds:
        if _INT.fullmatch(cell):
            if len(cell) > MAX_NUMBER_CHARS:
                return None, ("number-too-large", f"{cell[:20]}... has too many digits", "check the value")
            return int(cell), None
        if _DECIMAL_COMMA.fullmatch(cell):
            return None, ("decimal-comma", f"{cell!r} uses a decimal comma",
                          "use a decimal point, and a whole number here")
        return None, ("not-integer", f"{cell!r} is not a whole number",
                      "write a whole number without separators or units")
    if "number" in kinds:
        if _NUMBER.fullmatch(cell):
            if len(cell) > MAX_NUMBER_CHARS:
                return None, ("number-too-large", f"{cell[:20]}... has too many digits", "check the value")
            number = int(cell) if _INT.fullmatch(cell) else float(cell)
            if isinstance(number, float) and not math.isfinite(number):
                return None, ("number-too-large", f"{cell!r} is beyond the range of a number (about 1.8e308)",
                              "check the value")
            return number, None
        if _DECIMAL_COMMA.fullmatch(cell):
            return None, (
                "decimal-comma",
                f"{cell!r} uses a decimal comma",
                f"write {cell.replace(',', '.')} (decimal point)",
            )
        return None, ("not-number", f"{cell!r} is not a number",
                      "write a plain number with a decimal point, without units")
    return cell, None


def parse_table(text: str, display: str, schema_name: str) -> Table:
    """Parse CSV text against a row schema: header, field counts, typed cells, row rules."""
    schema = load_schema(schema_name)
    expected: list[str] = schema["x-csv-columns"]
    optional: list[str] = schema.get("x-csv-optional-columns", [])  # all or none (the tariffs' source)
    props = as_object(schema["properties"])
    table = Table(file=display, header=[])
    wrong_delimiter = delimiter_finding(text, expected, display, Severity.ERROR)
    if wrong_delimiter is not None:
        table.findings.append(wrong_delimiter)
        table.readable = False
        return table
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    previous_end = 0
    try:
        for record in reader:
            start = previous_end + 1
            previous_end = reader.line_num
            if not table.header:
                table.header = record
                header = read_header(record, expected, optional, display)
                table.columns = header.columns
                table.findings.extend(header.findings)
                continue
            if record == []:
                continue
            _add_row(table, record, start, props, schema_name)
    except csv.Error as exc:
        table.findings.append(make_finding("csv-syntax", Severity.ERROR, display, f"CSV syntax error: {exc}",
                                           line=reader.line_num, rule="RFC 4180 quoting",
                                           fix="quote cells that contain commas, quotes or line breaks; double "
                                               "inner quotes"))
    if not table.header:
        table.findings.append(make_finding("empty-file", Severity.ERROR, display, "the file is empty",
                                           rule="header: " + ",".join(expected), fix="write the header line"))
    return table


def _add_row(table: Table, record: list[str], line: int, props: JsonObject, schema_name: str) -> None:
    display = table.file
    if len(record) != len(table.header):
        more = len(record) > len(table.header)
        table.findings.append(make_finding("field-count", Severity.ERROR, display,
                                           f"{len(record)} fields where the header has {len(table.header)}", line=line,
                                           value=len(record),
                                           rule=f"{len(table.header)} fields per line, as the header",
                                           fix=("a comma inside a cell (notes?) must be quoted: \"...\"" if more
                                                else "add the missing cells (empty when not recorded)")))
        return
    row: dict[str, JsonScalar] = {}
    failed: set[str] = set()
    for name, cell in zip(table.columns, record, strict=False):
        prop = props.get(name or "")
        if name is None or not isinstance(prop, dict):  # no column of the schema, or a repeat (a header finding)
            continue
        value, problem = convert_cell(cell, prop)
        if problem:
            code, message, fix = problem
            failed.add(name)
            table.findings.append(make_finding(code, Severity.ERROR, display, message, line=line, field=name,
                                               value=cell[:80], rule=str(prop.get("description", "")), fix=fix))
        row[name] = value
    known = [c for c in props if c in row]
    refused = set(failed)
    for f in validate_document(schema_name, {k: row[k] for k in known}, file=display, line=line, csv_row=True):
        if f.field in failed or f.field is None and f.rule == "required":
            continue
        refused.add(f.field or "")
        table.findings.append(f)
    for name in known:
        # A cell its column's pattern or enum refuses is named by that finding already (its value escaped).
        text = row[name]
        if isinstance(text, str) and name not in refused:
            severity = Severity.WARNING if name in FREE_TEXT_COLUMNS else Severity.ERROR
            table.findings.extend(cell_findings(text, display, line, name, severity))
    table.rows.append(row)
    table.lines.append(line)


def read_table(path: Path, display: str, schema_name: str, limits: Limits | None = None) -> Table:
    """Read and parse one CSV input file (at most `limits.max_file_bytes`; the active limits by default)."""
    raw = read_bytes(path, display, limits)
    text, problem = decode_utf8(raw, display)
    if text is None:
        table = Table(file=display, header=[], readable=False)
        table.findings.append(problem)  # type: ignore[arg-type]
    else:
        table = parse_table(text, display, schema_name)
    table.size, table.sha256 = len(raw), hashlib.sha256(raw).hexdigest()
    return table
