"""The planned subgroups' edges read as length ranges: whether, on one unit, they cover every length from 0 up.

A protocol writes each subgroup's edges in words (`0 to 44 tokens of the reference classifier's tokenizer`,
`122 tokens or more of ...`). Read as ranges, the seeds' short, medium and long texts cover every length: then
every expected ID is in one subgroup, and a text in none was taken out (corpus.subgroupsets). The forms
read are those docs/campaign-folder.md lists; the words after the unit (which tokenizer) are not compared.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["EdgeRange", "cover_every_length", "read_edges"]

_N = r"(\d{1,9})"
_UNIT = r"([^\W\d_]+)"  # tokens, words, characters: one word of letters
_TO = r"(?:to|-|\u2013|\u2014|\.\.)"
# Each form: its pattern (at the start of the text) and how its numbers give the inclusive range (None: open).
_FORMS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.IGNORECASE), kind) for p, kind in (
    (rf"^\s*(?:from\s+)?{_N}\s*{_TO}\s*{_N}\s+{_UNIT}", "closed"),       # 45 to 121 tokens, 45-121 tokens
    (rf"^\s*{_N}\s+{_UNIT}\s+or\s+more\b", "from"),                      # 122 tokens or more
    (rf"^\s*{_N}\s+or\s+more\s+{_UNIT}", "from"),                        # 122 or more tokens
    (rf"^\s*(?:at\s+least|\u2265|>=)\s*{_N}\s+{_UNIT}", "from"),         # at least 122 tokens, >= 122 tokens
    (rf"^\s*{_N}\s*\+\s*{_UNIT}", "from"),                               # 122+ tokens
    (rf"^\s*(?:more\s+than|over|>)\s*{_N}\s+{_UNIT}", "above"),          # more than 121 tokens
    (rf"^\s*(?:up\s+to|at\s+most|\u2264|<=)\s*{_N}\s+{_UNIT}", "upto"),  # up to 44 tokens
    (rf"^\s*(?:fewer\s+than|less\s+than|under|<)\s*{_N}\s+{_UNIT}", "below"),  # fewer than 45 tokens
))


@dataclass(frozen=True)
class EdgeRange:
    """A subgroup's edges as read: the lengths it holds, both ends included (`high` None: no upper end)."""

    low: int
    high: int | None
    unit: str  # singular, lower case: token, word, character

    def text(self) -> str:
        return f"{self.low} or more" if self.high is None else f"{self.low} to {self.high}"


def _singular(unit: str) -> str:
    unit = unit.lower()
    return unit[:-1] if unit.endswith("s") and len(unit) > 1 else unit


def read_edges(edges: str) -> EdgeRange | None:
    """The range a subgroup's edges state at their start, or None when they are in none of the forms read."""
    for pattern, kind in _FORMS:
        m = pattern.match(edges)
        if m is None:
            continue
        numbers = [int(g) for g in m.groups()[:-1]]
        unit = _singular(m.groups()[-1])
        if kind == "closed":
            return EdgeRange(numbers[0], numbers[1], unit) if numbers[0] <= numbers[1] else None
        n = numbers[0]
        if kind == "from":
            return EdgeRange(n, None, unit)
        if kind == "above":
            return EdgeRange(n + 1, None, unit)
        if kind == "upto":
            return EdgeRange(0, n, unit)
        return EdgeRange(0, n - 1, unit) if n > 0 else None  # below
    return None


def cover_every_length(ranges: Sequence[EdgeRange]) -> bool:
    """Whether ranges on one unit leave no length from 0 up outside them (overlaps are another rule's)."""
    if not ranges or len({r.unit for r in ranges}) != 1:
        return False
    reached = 0  # every length below this one is covered
    for r in sorted(ranges, key=lambda r: r.low):
        if r.low > reached:
            return False
        if r.high is None:
            return True
        reached = max(reached, r.high + 1)
    return False
