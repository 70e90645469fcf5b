"""Each seed rule with a number or an order in it, planted from both sides: exactly at its limit, one unit past it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from seed_rules import Where

# A rule's text names a limit or an order when it holds a figure or one of these words: such a rule gets an edge.
LIMITED = re.compile(r"\d|\b(before|after|at least|at most|within|order|longer|shorter|more than|less than|"
                     r"earlier|later|exceed\w*|below|above|limit|bound\w*|beyond|until|deadline|window)\b",
                     re.IGNORECASE)


@dataclass(frozen=True)
class Edge:
    """One rule's limit from both sides, in a copy of the rule's setup.

    `at` plants the value exactly at the limit (or the order exactly as allowed): the rule holds, so the check
    finds no error at all and answers as the setup does. `past` moves it one `unit` beyond (a microsecond, a
    second, a cent, a run, an ID, the metric's last decimal): the rule's finding, where `past` says.
    """

    rule: str  # the SeedRule's id
    unit: str
    at: Callable[[Path], None]
    past: Callable[[Path], list[Where]]
    code: str | None = None  # the finding past the limit, for a rule without a code of its own (a decision rule)


# Rules whose text matches LIMITED but that have no limit to stand on, or whose two sides are rules of their own.
EDGELESS: dict[str, str] = {
    "seven-day-window": "its edge is itself (exactly 168 h holds) and seven-days-and-a-second (one second past)",
    "seven-days-and-a-second": "the past side of seven-day-window",
}
