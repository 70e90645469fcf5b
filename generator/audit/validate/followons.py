"""Findings that follow from one cause, linked to it: an unreadable grid or a missing grid column (every finding
its absent rows or cells give), and the causes a rule names itself (a missing prediction file, a Lab manifest that
does not stand). Each follow-on names its cause (`caused_by`), each cause counts its follow-ons and names the
first ones (`follow_ons`); all of them stay findings, counted and gating as before."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from generator.audit.load.findings import (
    FIRST_FOLLOW_ONS,
    FOLLOWS_FROM,
    Finding,
    FindingRef,
    FollowOns,
    sort_key,
)
from generator.audit.load.readers.csvtable import Table

# The grid's row keys: without one of them no row is placed, so every finding about the grid's rows follows.
KEY_COLUMNS = frozenset({"experiment_id", "variant_id", "phase", "run_index"})
# Why a grid yields no row at all: its delimiter, its encoding, an empty file, or a syntax error before any row.
UNREADABLE = frozenset({"csv-delimiter", "invalid-encoding", "empty-file", "csv-syntax"})
# A column whose cells are not read under its name.
COLUMN_CAUSES = frozenset({"missing-column", "renamed-column"})


@dataclass(frozen=True)
class _Rule:
    """The findings of one file that follow from `cause`: every one (`columns` None and not `lineless`), or those
    on one of `columns` and, if `lineless`, those without a line (about rows that are absent)."""

    cause: Finding
    file: str
    columns: frozenset[str] | None = None
    lineless: bool = False

    def covers(self, f: Finding) -> bool:
        if f.file != self.file:
            return False
        if self.columns is None and not self.lineless:
            return True
        return (self.columns is not None and f.field in self.columns) or (self.lineless and f.line is None)


def _key(f: Finding) -> tuple[str, str, int | None, str | None, str]:
    return f.code, f.file, f.line, f.field, f.message


def grid_rules(grid: Table | None) -> list[_Rule]:
    """What an unreadable grid or a missing column gives: the rules, the first cause first."""
    if grid is None:
        return []
    errors = [f for f in grid.findings if f.is_error]
    unreadable = next((f for f in errors if f.code in UNREADABLE), None)
    if unreadable is not None and not grid.rows:
        return [_Rule(unreadable, grid.file)]
    # A row key first: the rows it leaves unplaced (findings without a line) follow from it, as its cells do.
    rules = [_Rule(f, grid.file, KEY_COLUMNS, lineless=True) for f in errors
             if f.code in COLUMN_CAUSES and f.field in KEY_COLUMNS]
    rules += [_Rule(f, grid.file, frozenset({f.field or ""})) for f in errors
              if f.code in COLUMN_CAUSES and f.field not in KEY_COLUMNS]
    if unreadable is not None and unreadable.code == "csv-syntax":  # the rows after it were not read
        rules.append(_Rule(unreadable, grid.file, frozenset(), lineless=True))
    return rules


@dataclass
class _Causes:
    """Where each finding's cause is found: the causes rules name (by code and file), the grid's rules, and the
    grid's reading findings (never a consequence: what the reader found is its own finding)."""

    named: dict[tuple[str, str], Finding]
    rules: Sequence[_Rule]
    reading: set[tuple[str, str, int | None, str | None, str]]
    listed: dict[tuple[str, str, int | None, str | None, str], Finding]  # a rule's cause as the list holds it

    @classmethod
    def of(cls, findings: Sequence[Finding], grid: Table | None) -> _Causes:
        named: dict[tuple[str, str], Finding] = {}
        for f in findings:
            if FOLLOWS_FROM not in f.extra:
                named.setdefault((f.code, f.file), f)
        return cls(named, grid_rules(grid), {_key(f) for f in grid.findings} if grid is not None else set(),
                   {_key(f): f for f in reversed(findings)})

    def of_finding(self, f: Finding) -> Finding | None:
        """The finding `f` follows from, if it is listed: the one its rule names (extra[FOLLOWS_FROM]: code and
        file), else the grid's cause that covers it."""
        named = f.extra.get(FOLLOWS_FROM)
        if isinstance(named, dict):
            return self.named.get((str(named.get("code")), str(named.get("file"))))
        if _key(f) in self.reading:
            return None
        return next((self.listed[_key(r.cause)] for r in self.rules
                     if r.covers(f) and _key(r.cause) in self.listed), None)


def link(findings: Sequence[Finding], grid: Table | None = None) -> list[Finding]:
    """The findings with each follow-on linked to its cause and each cause's follow-ons counted (order kept).

    A finding already linked keeps its link; a cause is never itself a follow-on (one level).
    """
    if any(f.caused_by is not None or f.follow_ons is not None for f in findings):
        return list(findings)
    where = _Causes.of(findings, grid)
    causes = [where.of_finding(f) for f in findings]
    roots = {id(c) for c in causes if c is not None}
    causes = [None if id(f) in roots else c for f, c in zip(findings, causes, strict=True)]
    under: dict[int, list[Finding]] = {}
    for f, c in zip(findings, causes, strict=True):
        if c is not None:
            under.setdefault(id(c), []).append(f)
    out = []
    for f, c in zip(findings, causes, strict=True):
        follow = sorted(under.get(id(f), []), key=sort_key)
        if follow:
            f = replace(f, follow_ons=FollowOns(len(follow), sum(g.is_error for g in follow),
                                                tuple(FindingRef.of(g) for g in follow[:FIRST_FOLLOW_ONS])))
        out.append(replace(f, caused_by=FindingRef.of(c)) if c is not None else f)
    return out


def follow_ons_of(cause: Finding, findings: Sequence[Finding]) -> list[Finding]:
    """The findings linked to `cause`, in the list's order."""
    ref = FindingRef.of(cause)
    return [f for f in findings if f.caused_by == ref]
