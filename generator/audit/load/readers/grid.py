"""The raw-results grid (resultats-bruts.csv): row keys and the outcome a row's notes declare."""

from __future__ import annotations

import re
from dataclasses import dataclass

FAILED_OUTCOMES = frozenset({"failed", "oom", "aborted"})
# `excluded` sets an attempt aside under an exclusion the protocol registered (its `cause=` names which);
# `resumed`, an attempt of a resume variant that completed what an interrupted one began (`resumed=` names it).
KNOWN_OUTCOMES = FAILED_OUTCOMES | {"ok", "excluded", "resumed"}
# An incident: an attempt that failed, was set aside, or resumed another (000/001/002 §3: its row is kept and the
# incident explained).
INCIDENT_OUTCOMES = FAILED_OUTCOMES | {"excluded", "resumed"}
# The items of notes that explain an incident in words: `error=` the error as it was seen (003: the errors go in
# notes), `reason=` or `explanation=` what happened and why. Each value runs to the next `;`.
EXPLANATION_KEYS = ("error", "reason", "explanation")
# The whole word after `outcome=` is read, so that `outcome=Failed` or `outcome=crashed` is an unknown outcome,
# never a completed run.
_OUTCOME = re.compile(r"(?:^|[\s;])outcome\s*=\s*([^\s;,]*)")
_COMPLETED = re.compile(r"(?:^|[\s;])completed\s*=\s*([0-9]+)")
_CAUSE = re.compile(r"(?:^|[\s;])cause\s*=\s*([^\s;,]*)")
_RESUMED = re.compile(r"(?:^|[\s;])resumed\s*=\s*([^\s;,]*)")
_EXPLANATION = re.compile(r"(?:^|[\s;])(?:" + "|".join(EXPLANATION_KEYS) + r")\s*=([^;]*)")


@dataclass(frozen=True)
class Outcome:
    """What a row's notes say about the attempt: ok unless `outcome=failed|oom|aborted|excluded` is written."""

    status: str
    completed: int | None
    cause: str | None = None
    resumed: str | None = None  # the interrupted attempt a resumption names: <variant_id>/<phase>/<run_index>
    explanations: tuple[str, ...] = ()  # the values of its error=, reason= and explanation= items, as written

    @property
    def failed(self) -> bool:
        return self.status in FAILED_OUTCOMES

    @property
    def excluded(self) -> bool:
        return self.status == "excluded"

    @property
    def known(self) -> bool:
        return self.status in KNOWN_OUTCOMES

    @property
    def incident(self) -> bool:
        """A failed, excluded or resumed attempt: one whose notes are to explain it."""
        return self.status in INCIDENT_OUTCOMES

    @property
    def completed_run(self) -> bool:
        """A run that went through (no outcome, or `outcome=ok`): the only kind timed and accepted."""
        return self.status == "ok"

    @property
    def through(self) -> bool:
        """A run that went through the corpus, resumed or not: it keeps its duration and its prediction file."""
        return self.status in ("ok", "resumed")


def row_outcome(notes: str | None) -> Outcome:
    """Parse `outcome=...`, `completed=N`, `cause=`, `resumed=` and the explanations from a notes cell (absent
    outcome means the run completed)."""
    text = notes or ""
    m = _OUTCOME.search(text)
    c = _COMPLETED.search(text)
    cause = _CAUSE.search(text)
    resumed = _RESUMED.search(text)
    return Outcome(status=m.group(1) if m else "ok", completed=int(c.group(1)) if c else None,
                   cause=cause.group(1) if cause else None, resumed=resumed.group(1) if resumed else None,
                   explanations=tuple(m.group(1) for m in _EXPLANATION.finditer(text)))
