"""A run's and a configuration's cells in decision.json: claimed, recomputed, subgroups, memory, timing, seeds,
resume."""

from __future__ import annotations

from dataclasses import dataclass, field

from generator.core.jsonrecord import OMIT_IF_NONE, JsonRecord

__all__ = ["ClaimedCells", "CorpusRuns", "EnvironmentCells", "MemoryCells", "PhaseTiming", "RecomputedRun",
           "ResumeBalance", "SeedRuns", "SubgroupRun", "SubgroupSummary", "Timing"]


@dataclass(frozen=True)
class SubgroupRun(JsonRecord):
    """One subgroup of one run: its IDs the run did not finish, its metric and its rule's verdict."""

    id: str
    expected_ids: int
    unfinished: int  # the subgroup's IDs absent from the run's prediction file
    quality_value: float | None  # None: the run's ID set or format is not valid, nothing is scored
    degradation: float | None
    accepted: bool


@dataclass(frozen=True)
class SubgroupSummary(JsonRecord):
    """A subgroup across a configuration's runs: the rule, the worst completed run, and the failed runs' gaps."""

    id: str
    edges: str
    expected_ids: int
    threshold: float
    tolerance: float
    reference_value: float
    completed_runs: int  # completed runs with a subgroup value
    accepted_runs: int
    worst_value: float | None  # the completed runs' lowest value (highest, for lower_is_better)
    worst_degradation: float | None
    failed_runs: int  # failed runs (out of memory, failed, aborted) that left some of the subgroup unfinished
    unfinished: int  # the subgroup's IDs those failed runs did not finish, summed


@dataclass(frozen=True)
class ClaimedCells(JsonRecord):
    """The claimed cells of a run that the decision shows beside their recomputed values (grid columns)."""

    expected_ids: int | None
    observed_ids: int | None
    ids_match: bool | None
    format_valid: bool | None
    quality_metric: str | None
    quality_threshold: float | None
    quality_tolerance: float | None
    quality_value: float | None
    corpus_accepted: bool | None


@dataclass(frozen=True)
class MemoryCells(JsonRecord):
    """A run's memory counters as the grid writes them (None: not recorded)."""

    baseline_allocated_bytes: int | None
    baseline_reserved_bytes: int | None
    peak_allocated_bytes: int | None
    peak_reserved_bytes: int | None


@dataclass(frozen=True)
class EnvironmentCells(JsonRecord):
    """The grid's environment columns, as a configuration's first row gives them."""

    gpu_model: str | None
    gpu_count: int | None
    device: str | None
    driver_version: str | None
    python_version: str | None
    torch_version: str | None
    runtime_version: str | None
    precision: str | None
    batch: int | None
    context: int | None


@dataclass(frozen=True)
class RecomputedRun(JsonRecord):
    """What the evidence says about one run attempt (acceptance.Acceptance as recorded)."""

    expected_ids: int
    observed_ids: int
    rows: int
    duplicates: int
    missing: int
    extra: int
    first_duplicates: list[str]
    first_missing: list[str]
    first_extra: list[str]
    ids_match: bool
    format_valid: bool
    quality_metric: str
    quality_value: float | None
    degradation: float | None
    quality_ok: bool
    corpus_accepted: bool
    prediction_file: str | None
    file_present: bool
    # Each planned subgroup's verdict; left out when the protocol plans none.
    subgroups: tuple[SubgroupRun, ...] | None = field(default=None, metadata=OMIT_IF_NONE)


@dataclass(frozen=True)
class PhaseTiming(JsonRecord):
    """One phase's durations and summary; p95 only from enough observations, else the note says why."""

    durations: tuple[float, ...]
    successes: int
    failures: int
    median: float | None
    min: float | None
    max: float | None
    p95: float | None
    tail_note: str | None


@dataclass(frozen=True)
class Timing(JsonRecord):
    """Warm and cold phases of one configuration."""

    warm: PhaseTiming
    cold: PhaseTiming


@dataclass(frozen=True)
class SeedRuns(JsonRecord):
    """One common seed's runs of a configuration, kept apart: attempts, acceptance and timing under that seed."""

    seed: int
    attempts: int
    completed: int
    failures: int
    accepted_runs: int
    accepted: bool  # at least one completed run, and every completed run accepted
    timing: Timing


@dataclass(frozen=True)
class CorpusRuns(JsonRecord):
    """One corpus's runs of a configuration, kept apart: attempts, acceptance and timing on that corpus."""

    revision: str
    name: str
    expected_ids: int
    attempts: int
    completed: int
    failures: int
    accepted_runs: int
    accepted: bool  # at least one completed run on this corpus, and every one of them accepted
    timing: Timing


@dataclass(frozen=True)
class ResumeBalance(JsonRecord):
    """A resume variant's own part of its balance: the variant it resumes, its setting, how many interrupted
    attempts its resumptions resumed, and their time until the interruption, counted in the resumed durations
    (None when one of them is not measured)."""

    of: str
    setting: str
    resumed: int
    interrupted_seconds: float | None
