"""The answer's records in decision.json: the ranking, the unpriced and excluded configurations, the ties."""

from __future__ import annotations

from dataclasses import dataclass, field

from generator.audit.load.findings import FindingRef
from generator.core.jsonrecord import OMIT_IF_NONE, JsonRecord

__all__ = ["REASON_REFS", "Decision", "Excluded", "FindingRef", "RankEntry", "RunExclusion", "Tie", "Unpriced"]

# Findings listed per configuration in its reasons (in decision.json and the note); the rest are counted.
REASON_REFS = 5


@dataclass(frozen=True)
class RankEntry(JsonRecord):
    """A configuration in an order: its committed budget and median warm time."""

    configuration: str
    committed_budget_usd_minor: int | None
    warm_median_seconds: float | None


@dataclass(frozen=True)
class Unpriced(JsonRecord):
    """An admissible configuration without a budget from a published price."""

    configuration: str
    reason: str


@dataclass(frozen=True)
class Excluded(JsonRecord):
    """A configuration that is not admissible, with its reasons."""

    configuration: str
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class RunExclusion(JsonRecord):
    """An attempt set aside under an exclusion the protocol registered: where it is and the cause its notes name."""

    configuration: str
    line: int
    phase: str
    run_index: int
    cause: str | None


@dataclass(frozen=True)
class Tie(JsonRecord):
    """A pair whose order rests on time, and whether the warm series decides it."""

    configurations: tuple[str, str]
    timing_decides: bool
    reason: str


@dataclass(frozen=True)
class Decision(JsonRecord):
    """The answer to the registered question, or why there is none."""

    answer: str | None
    status: str
    series_decides: bool | None
    ranking: tuple[RankEntry, ...]
    time_ordering: tuple[RankEntry, ...]
    unpriced: tuple[Unpriced, ...]
    ties: tuple[Tie, ...]
    uncertainty: tuple[str, ...]
    fix: str | None
    shared_errors: tuple[FindingRef, ...]
    excluded: tuple[Excluded, ...]
    reason: str
    # Every attempt set aside as excluded (the note lists each one); absent when none was, so that a decision
    # without exclusions reads as before.
    exclusions: tuple[RunExclusion, ...] | None = field(default=None, metadata=OMIT_IF_NONE)
