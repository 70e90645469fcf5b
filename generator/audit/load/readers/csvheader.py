"""A CSV table's header read by its names: each field's column of the schema, in any order, and the findings that
say how the header differs from the columns the seeds distribute (missing, unknown, renamed, repeated, in another
order, or written in another case or with spaces around them)."""

from __future__ import annotations

from dataclasses import dataclass, field

from generator.audit.load.findings import Finding, Severity, make_finding

_BOM = "\ufeff"
NAMES_LISTED = 5  # the names written otherwise that one finding lists


def canonical(name: str) -> str:
    """A header name as the schema writes it: a byte-order mark, surrounding spaces and the letter case set aside
    (a spreadsheet adds them; they change nothing of what the column holds)."""
    return name.replace(_BOM, "").strip().lower()


@dataclass
class Header:
    """The header as read: each field's schema column (None: no column of the schema, or a repeat), the findings."""

    columns: list[str | None] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


@dataclass
class _Reading:
    header: list[str]
    known: list[str]  # the schema's columns in the seeds' order, the optional ones after them
    display: str
    out: Header = field(default_factory=Header)
    first_at: dict[str, int] = field(default_factory=dict)  # a column -> the position it is read from

    def add(self, code: str, message: str, column: str | None, fix: str, value: object = None,
            severity: Severity = Severity.ERROR) -> None:
        self.out.findings.append(make_finding(code, severity, self.display, message, line=1, field=column,
                                              value=value, rule="header: " + ",".join(self.known), fix=fix))


def _columns(r: _Reading) -> list[tuple[int, str, str]]:
    """Each field matched to its column by name; returns the names written otherwise (position, as written,
    column). A column named twice is read from its first field."""
    by_name = {canonical(c): c for c in r.known}
    variants = []
    for i, name in enumerate(r.header):
        column = name if name in r.known else by_name.get(canonical(name))
        if column is not None and column in r.first_at:
            column = None  # a repeat: duplicate-column names it
        elif column is not None:
            r.first_at[column] = i
            if column != name:
                variants.append((i, name, column))
        r.out.columns.append(column)
    return variants


def _renamed(r: _Reading, missing: list[str], unknown: list[int]) -> None:
    """An unknown name where a missing column stands in the seeds' order, or the one unknown name beside the one
    missing column: a renamed column, named once."""
    for i in list(unknown):
        if i < len(r.known) and r.known[i] in missing:
            r.add("renamed-column", f"column {i + 1} is {r.header[i]!r} where the grid has {r.known[i]!r}",
                  r.known[i], f"rename the column to {r.known[i]!r}", value=r.header[i])
            missing.remove(r.known[i])
            unknown.remove(i)
    if len(missing) == 1 and len(unknown) == 1:
        i, column = unknown.pop(), missing.pop()
        r.add("renamed-column", f"column {i + 1} is {r.header[i]!r}, which is no column of the grid, and "
              f"{column!r} is missing", column, f"rename the column to {column!r}", value=r.header[i])


def _order(r: _Reading) -> None:
    """One warning when the columns read stand in another order than the seeds': the first one out of place."""
    present = [c for c in r.out.columns if c is not None]
    seeds = [c for c in r.known if c in r.first_at]
    out_of_place = next((k for k, (a, b) in enumerate(zip(present, seeds, strict=True)) if a != b), None)
    if out_of_place is None:
        return
    at = r.first_at[present[out_of_place]]
    r.add("reordered-columns", f"the columns stand in another order than the seeds': column {at + 1} is "
          f"{r.header[at]!r} where the seeds' order has {seeds[out_of_place]!r}; every column is read by its name",
          present[out_of_place], "nothing to correct for gpu-audit; write the columns in the seeds' order "
          "(docs/campaign-folder.md) for the tools that read them by position", value=r.header[at],
          severity=Severity.WARNING)


def _variants(r: _Reading, variants: list[tuple[int, str, str]]) -> None:
    """One warning naming the column names written in another case or with spaces around them, as written."""
    if not variants:
        return
    listed = ", ".join(f"{name!r} (column {i + 1}) as {column}" for i, name, column in variants[:NAMES_LISTED])
    more = f", and {len(variants) - NAMES_LISTED} more" if len(variants) > NAMES_LISTED else ""
    names = "name is" if len(variants) == 1 else "names are"
    r.add("column-name-variant", f"{len(variants)} column {names} written otherwise than the seeds write them, and "
          f"read as those columns: {listed}{more}", variants[0][2],
          "write the names exactly as the seeds do (lower case, no spaces around them): a tool that reads the "
          "columns by their exact names would miss these", value=variants[0][1], severity=Severity.WARNING)


def read_header(header: list[str], expected: list[str], optional: list[str], display: str) -> Header:
    """Match the header's fields to the schema's columns by name, in any order; name every difference.

    `optional` columns (the tariffs' source) are all there or all absent. A missing, unknown, renamed or repeated
    column is an error; another order, or names in another case or with spaces around them, a warning.
    """
    r = _Reading(header, expected + optional, display)
    variants = _columns(r)
    for column in sorted({c for c in r.known if sum(canonical(h) == c for h in header) > 1}):
        at = [str(i + 1) for i, h in enumerate(header) if canonical(h) == column]
        r.add("duplicate-column", f"column {column!r} appears {len(at)} times (columns {', '.join(at)})", column,
              "keep one column of that name", value=header[int(at[1]) - 1])
    required = expected + (optional if any(c in r.first_at for c in optional) else [])
    missing = [c for c in required if c not in r.first_at]
    unknown = [i for i, c in enumerate(r.out.columns) if c is None and canonical(header[i]) not in r.first_at]
    _renamed(r, missing, unknown)
    for c in missing:
        r.add("missing-column", f"column {c!r} is missing (expected as column {r.known.index(c) + 1})", c,
              f"add the column {c!r} (in any position); leave its cells empty when not recorded")
    for i in unknown:
        r.add("unknown-column", f"column {header[i]!r} (column {i + 1}) is not part of the grid", header[i],
              "remove the column, or move its content into notes", value=header[i])
    _order(r)
    _variants(r, variants)
    return r.out
