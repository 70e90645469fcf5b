"""What the charts draw, as typed records: the request a chart worker is sent as JSON and reads back."""

from __future__ import annotations

from dataclasses import dataclass, field

from generator.audit.recompute.decision.model import Timing
from generator.core.jsonrecord import JsonRecord


@dataclass(frozen=True)
class PhasePeak(JsonRecord):
    """One phase of a measurement as the memory chart shows it: its name, status and peaks (None: not recorded)."""

    phase: str
    status: str
    peak_allocated_bytes: int | None
    peak_reserved_bytes: int | None


@dataclass(frozen=True)
class DurationSeries(JsonRecord):
    """One configuration's raw durations, warm and cold, for the durations chart."""

    id: str
    timing: Timing


@dataclass(frozen=True)
class MemoryPanel(JsonRecord):
    """One measured configuration's phases, in its experiment's row of the memory chart."""

    experiment: str
    configuration: str
    phases: tuple[PhasePeak, ...]


@dataclass(frozen=True)
class ChartRequest(JsonRecord):
    """What the charts need from decision.json and nothing else, with their words and fonts in the note's
    language (generator.render.page.charts.ENGLISH names the words' keys; a request without them draws in English)."""

    durations: tuple[DurationSeries, ...]
    memory: tuple[MemoryPanel, ...]
    words: dict[str, str] = field(default_factory=dict)  # none: the charts' English words
    fonts: tuple[str, ...] = ()  # none: DejaVu Sans

    def shows(self, chart: str) -> bool:
        """Whether the chart named (durations or memory) has anything to show."""
        return bool(self.durations if chart == "durations" else self.memory)
