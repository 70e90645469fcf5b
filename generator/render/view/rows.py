"""The view's rows: what the note's tables show, as typed records the template reads by attribute."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from generator.audit.load.findings import Finding
from generator.audit.recompute.decision.model import Run
from generator.audit.recompute.decision.runcells import MemoryCells


@dataclass(frozen=True)
class Cell:
    """One claimed column of a run beside its recomputed value."""

    column: str
    claimed: object
    recomputed: object
    mismatch: bool


@dataclass(frozen=True)
class Sets:
    """How many IDs the run's prediction file repeats, lacks and adds."""

    duplicates: object
    missing: object
    extra: object


@dataclass(frozen=True)
class RunView:
    """A run with its claims beside their recomputation and its memory, as the tables show them."""

    run: Run
    cells: tuple[Cell, ...]
    sets: Sets
    memory: MemoryCells
    failed: bool


@dataclass(frozen=True)
class AttemptRow:
    """A row of the acceptance or memory table: identical attempts of one configuration, each named."""

    configuration: str
    attempts: str
    attempt_parts: list[tuple[str, str]]
    count: int
    outcome: str
    completed_items: int | None
    cells: tuple[Cell, ...]
    sets: Sets
    memory: MemoryCells
    failed: bool


@dataclass(frozen=True)
class LeftOut:
    """The rows past ROWS_LISTED: how many, the attempts they hold, how many of them failed."""

    rows: int
    attempts: int
    failed: int


@dataclass(frozen=True)
class GridNote:
    """Parts of the grid notes that the same attempts write (generator.render.view.gridnotes): how many attempts, the
    attempts by configuration, the parts as written joined by semicolons (cut: `length` the whole length), the
    attempts' grid lines."""

    attempts: int
    places: list[tuple[str, list[tuple[str, str]]]]
    text: str
    length: int | None
    lines: str
    line_count: int


@dataclass(frozen=True)
class EnvironmentRow:
    """Configurations that ran in one environment, as the grid and the measurement files record it."""

    configurations: list[str]
    gpu_model: object
    gpu_count: object
    driver_version: object
    python_version: object
    torch_version: object
    runtime_version: object
    precision: object
    measured: tuple[object, object] | None


@dataclass(frozen=True)
class MemoryPeak:
    """A measured configuration's highest peaks over its phases."""

    configuration: str
    allocated: int | None
    reserved: int | None


@dataclass(frozen=True)
class FindingGroup:
    """The findings of one severity, the first FINDINGS_PER_SEVERITY of them listed."""

    severity: str
    count: int
    entries: tuple[Finding, ...]  # the findings that follow from no other one
    hidden: int
    follow_ons: int = 0  # the findings of this severity named under their cause instead
    follow: tuple[tuple[Finding, ...], ...] = ()  # for each entry, the first of the findings that follow from it
    alike: tuple[Alike | None, ...] = ()  # for each entry, the findings it stands for when it is said more than once

    def represented(self, entries: Sequence[Finding]) -> int:
        """How many findings these entries (some of this group's) stand for."""
        weight = {id(e): a.count for e, a in zip(self.entries, self.alike, strict=False) if a}
        return sum(weight.get(id(e), 1) for e in entries)


@dataclass(frozen=True)
class Concern:
    """What findings said alike concern, per experiment: its configurations named (`configurations`), or none
    named when they are all the experiment's (`count` of them)."""

    experiment: str
    configurations: tuple[str, ...]
    count: int


@dataclass(frozen=True)
class Alike:
    """Findings that say the same word for word (code, file, line, field, text, fix, values) listed as one entry:
    how many, and the configurations they concern, by experiment."""

    count: int
    concerns: tuple[Concern, ...]


@dataclass(frozen=True)
class ScheduleRow:
    """A measured configuration's time on the rental: its set-up phases (phase, seconds), outside the timer, and
    when the set-up began, when its runs began and when its last phase ended (UTC stamps; None: not dated)."""

    configuration: str
    setup: list[tuple[str, float | None]]
    setup_start: str | None
    runs_start: str | None
    runs_end: str | None
