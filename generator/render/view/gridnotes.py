"""The grid's notes as the note lists them: what every attempt's note says once, then each other part once beside
the attempts whose note has it, named by phase and number."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from generator.audit.recompute.decision.model import Configuration, Run
from generator.render.view.filters import TEXT_CHARS, shorten
from generator.render.view.rows import GridNote

# A part of a note is shown whole up to the note's cap on any one text; the parts listed stop at these caps
# (docs/note.md), so that the time to lay the table out stays bounded whatever the grid holds.
PART_CHARS = TEXT_CHARS
PARTS_CHARS_LISTED = 10_000  # characters of the parts listed, the first row always listed
PARTS_LISTED = 200  # rows of the table
_OPEN, _CLOSE = "([{", ")]}"


@dataclass(frozen=True)
class GridNotes:
    """The notes of the grid: the text every attempt's note has (`common`, cut at PART_CHARS: `common_length`
    the whole length), then the other parts, a row for each set of attempts whose notes share them."""

    attempts: int  # the attempts of the grid
    common: str | None
    common_length: int | None
    common_lines: str
    rows: list[GridNote]
    rows_left_out: int
    attempts_left_out: int  # the attempts that the rows left out name


def index_list(indexes: list[int]) -> str:
    """Numbers with each series of three or more consecutive ones as a range: '1, 3–5'."""
    parts: list[str] = []
    start = 0
    for i in range(1, len(indexes) + 1):
        if i == len(indexes) or indexes[i] != indexes[i - 1] + 1:
            series = indexes[start:i]
            parts += [f"{series[0]}\u2013{series[-1]}"] if len(series) > 2 else [str(n) for n in series]
            start = i
    return ", ".join(parts)


def attempt_parts(runs: Sequence[Run]) -> list[tuple[str, str]]:
    """The attempts as (phase, run numbers) pairs, e.g. [('cold', '1'), ('warm', '1–5')]: the note words the phase."""
    by_phase: dict[str, list[int]] = {}
    for run in runs:
        by_phase.setdefault(run.phase, []).append(run.run_index)
    return [(phase, index_list(sorted(indexes))) for phase, indexes in by_phase.items()]


def note_parts(note: str) -> list[str]:
    """A note's parts as the runner writes them, separated by semicolons (one inside brackets does not separate),
    each stripped, the empty ones dropped: 'a; b (c; d)' gives ['a', 'b (c; d)']."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(note):
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth = max(depth - 1, 0)
        elif char == ";" and depth == 0:
            parts.append(note[start:i])
            start = i + 1
    parts.append(note[start:])
    return [p.strip() for p in parts if p.strip()]


def _keyed(note: str) -> list[tuple[str, int]]:
    """The note's parts, each with its occurrence in the note: a part written twice is kept twice."""
    seen: dict[str, int] = {}
    keyed = []
    for part in note_parts(note):
        seen[part] = seen.get(part, 0) + 1
        keyed.append((part, seen[part]))
    return keyed


def grid_notes(configs: Sequence[Configuration]) -> GridNotes:
    """The grid notes of every configuration: the parts every attempt's note has stated once, and each other part
    once, beside the attempts whose notes have it (rows with the most attempts first, then in the grid's order)."""
    attempts = [(c.id, r) for c in configs for r in c.runs]
    carriers: dict[tuple[str, int], list[tuple[str, Run]]] = {}
    for attempt in attempts:
        for key in _keyed(attempt[1].notes or ""):
            carriers.setdefault(key, []).append(attempt)
    everywhere = [key for key, where in carriers.items() if len(where) == len(attempts)]
    alike: dict[tuple[int, ...], list[str]] = {}
    sets: dict[tuple[int, ...], list[tuple[str, Run]]] = {}
    for key, where in carriers.items():
        if len(where) < len(attempts):
            members = tuple(sorted(r.line for _, r in where))
            alike.setdefault(members, []).append(key[0])
            sets.setdefault(members, where)
    order = sorted(alike, key=lambda members: (-len(members), members))
    rows = [_row(sets[m], alike[m]) for m in order]
    listed = _listed(rows)
    common = "; ".join(part for part, _ in everywhere)
    cut, length = shorten(common, PART_CHARS)
    return GridNotes(len(attempts), cut or None, length, index_list(sorted(r.line for _, r in attempts)),
                     rows[:listed], len(rows) - listed, len({a for m in order[listed:] for a in m}))


def _row(where: list[tuple[str, Run]], parts: list[str]) -> GridNote:
    by_config: dict[str, list[Run]] = {}
    for cid, run in where:
        by_config.setdefault(cid, []).append(run)
    lines = sorted(r.line for _, r in where)
    cut, length = shorten("; ".join(parts), PART_CHARS)
    return GridNote(len(where), [(cid, attempt_parts(runs)) for cid, runs in by_config.items()],
                    cut, length, index_list(lines), len(lines))


def _listed(rows: list[GridNote]) -> int:
    """How many rows the table lists: up to PARTS_LISTED rows and PARTS_CHARS_LISTED characters, at least one."""
    chars = 0
    for n, row in enumerate(rows[:PARTS_LISTED]):
        chars += len(row.text)
        if n and chars > PARTS_CHARS_LISTED:
            return n
    return min(len(rows), PARTS_LISTED)
