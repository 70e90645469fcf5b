"""The raw-results grid (resultats-bruts.csv): row keys and the outcome a row's notes declare."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

FAILED_OUTCOMES = frozenset({"failed", "oom", "aborted"})
_OUTCOME = re.compile(r"(?:^|[\s;])outcome\s*=\s*([a-z]+)")
_COMPLETED = re.compile(r"(?:^|[\s;])completed\s*=\s*([0-9]+)")


@dataclass(frozen=True)
class Outcome:
    """What a row's notes say about the attempt: ok unless `outcome=failed|oom|aborted` is written."""

    status: str
    completed: int | None

    @property
    def failed(self) -> bool:
        return self.status in FAILED_OUTCOMES


def row_outcome(notes: str | None) -> Outcome:
    """Parse `outcome=...` and `completed=N` from a notes cell (absent outcome means the run completed)."""
    text = notes or ""
    m = _OUTCOME.search(text)
    c = _COMPLETED.search(text)
    return Outcome(status=m.group(1) if m else "ok", completed=int(c.group(1)) if c else None)


def row_key(row: dict[str, Any]) -> tuple[str, str, str, int]:
    """The key that identifies one attempt: experiment, variant, phase, run index."""
    return (str(row.get("experiment_id")), str(row.get("variant_id")), str(row.get("phase")),
            int(row.get("run_index") or 0))
