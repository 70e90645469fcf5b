"""A measurement dates all its phases or none, in their order, each no shorter than its work, none overlapping."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.measurement import MeasurementDoc, Phase
from generator.core.instants import parse_utc as parse_utc  # the one parser of stamps, named here too

# The order a runner goes through a measurement's phases; warm_forward rows follow by repeat.
PHASE_ORDER = ("download", "install", "model_load", "compile", "inputs", "cold_forward", "warmup", "warm_forward")
# The set-up (003 'Start'): outside the timer of every run, inside the rental. model_load is the Lab's own; the
# others are written by a runner that does them, each once.
SETUP_PHASES = ("download", "install", "model_load", "compile")
OPTIONAL_PHASES = frozenset({"download", "install", "compile"})
# Clocks and the files' six decimals: a millisecond is no defect, and far below any run worth comparing.
TOLERANCE_S = 0.001
_FIX = ("keep the times the runner wrote for every phase; a run whose times were edited or removed cannot prove "
        "when it ran, and is measured again inside the window")


@dataclass(frozen=True)
class Dated:
    """One measurement phase placed on the timeline by its own started_at and ended_at."""

    file: str
    index: int
    phase: Phase
    start: datetime
    end: datetime
    process: int = 0  # a format 2 file's cold runs are processes of their own, in file order (coldphases.processes)

    @property
    def run(self) -> str:
        """The phase as a reader names it: `warm_forward repeat 2`."""
        repeat = self.phase.repeat
        return str(self.phase.phase) + (f" repeat {repeat}" if repeat else "")

    @property
    def rank(self) -> tuple[int, int, int]:
        name = self.phase.phase
        repeat = self.phase.repeat
        return (self.process, PHASE_ORDER.index(name) if name in PHASE_ORDER else len(PHASE_ORDER),
                repeat if isinstance(repeat, int) else 0)


def seconds(a: datetime, b: datetime) -> float:
    return (b - a).total_seconds()


def partial_findings(measurements: dict[str, MeasurementDoc]) -> list[Finding]:
    """A file that dates one phase dates them all: one undated phase beside dated ones could be the one that ran
    outside the window, its times removed."""
    out = []
    for file, doc in sorted(measurements.items()):
        phases = doc.phases
        undated = [i for i, p in enumerate(phases) if not p.timed]
        if not undated or len(undated) == len(phases):
            continue
        first = phases[undated[0]]
        name = str(first.phase) + (f" repeat {first.repeat}" if first.repeat else "")
        out.append(make_finding(
            "run-times-partial", Severity.ERROR, file,
            f"{file} dates {len(phases) - len(undated)} of its {len(phases)} phases and leaves {len(undated)} "
            f"undated (the first: /phases/{undated[0]}, {name}): the undated runs cannot be placed after the "
            "registration, inside the window and before the deadline", field=f"/phases/{undated[0]}",
            claimed=len(phases) - len(undated), recomputed=len(phases),
            rule="a measurement that dates one phase dates them all", fix=_FIX))
    return out


def order_findings(dated: list[Dated]) -> list[Finding]:
    """Within a file, each phase starts after the one before it ends (the set-up, inputs, cold_forward, warmup,
    warm_forward by repeat); each phase lasts at least its own elapsed_seconds."""
    out = []
    by_file: dict[str, list[Dated]] = {}
    for d in dated:
        by_file.setdefault(d.file, []).append(d)
    for file, phases in sorted(by_file.items()):
        ordered = sorted(phases, key=lambda d: d.rank)
        for before, after in zip(ordered, ordered[1:], strict=False):
            if seconds(after.start, before.end) > TOLERANCE_S:
                out.append(make_finding(
                    "run-times-out-of-order", Severity.ERROR, file,
                    f"{after.run} started at {after.phase.started_at}, before {before.run} of the same file ended "
                    f"({before.phase.ended_at})", field=f"/phases/{after.index}/started_at",
                    claimed=after.phase.started_at, recomputed=before.phase.ended_at,
                    rule="a measurement's phases run one after the other, in the order "
                         + ", ".join(PHASE_ORDER) + " (warm runs by repeat)", fix=_FIX))
        for d in ordered:
            work = d.phase.elapsed_seconds
            lasted = seconds(d.start, d.end)
            if isinstance(work, (int, float)) and not isinstance(work, bool) and lasted + TOLERANCE_S < work:
                out.append(make_finding(
                    "run-time-bracket-short", Severity.ERROR, file,
                    f"{d.run} lasted {lasted:g} s from started_at {d.phase.started_at} to ended_at "
                    f"{d.phase.ended_at}, less than the {work:g} s it measured itself: its end was moved",
                    field=f"/phases/{d.index}/ended_at", claimed=d.phase.ended_at, recomputed=work,
                    rule="a phase's started_at and ended_at bracket its own elapsed_seconds", fix=_FIX))
    return out


def _overlap(d: Dated, o: Dated, device: str, rental: str) -> Finding:
    return make_finding(
        "runs-overlap", Severity.ERROR, d.file,
        f"{d.run} ran from {d.phase.started_at} to {d.phase.ended_at} while {o.run} of {o.file} ran on the "
        f"same device ({device}, {rental}) from {o.phase.started_at} to {o.phase.ended_at}",
        field=f"/phases/{d.index}/started_at", claimed=d.phase.started_at, recomputed=o.phase.ended_at,
        rule="runs on one device follow one another; two runs at once share the GPU, and neither is timed alone",
        fix=_FIX)


def overlap_findings(dated: list[Dated], device_of: dict[str, tuple[str, str]]) -> list[Finding]:
    """No two runs of different files on one device (a rental, `experiment X` or `rental Y`, and its device)
    overlap in time: both runs are reported, each on its own file."""
    out: dict[tuple[str, int], Finding] = {}
    groups: dict[tuple[str, str], list[Dated]] = {}
    for d in dated:
        if d.file in device_of:
            groups.setdefault(device_of[d.file], []).append(d)
    for (rental, device), phases in sorted(groups.items()):
        latest: dict[str, Dated] = {}  # file -> its phase ending last among those started so far
        for d in sorted(phases, key=lambda d: (d.start, d.file, d.index)):
            others = [o for f, o in latest.items() if f != d.file and seconds(d.start, o.end) > TOLERANCE_S]
            if others:
                o = max(others, key=lambda o: o.end)
                out.setdefault((d.file, d.index), _overlap(d, o, device, rental))
                out.setdefault((o.file, o.index), _overlap(o, d, device, rental))
            if d.file not in latest or d.end > latest[d.file].end:
                latest[d.file] = d
    return list(out.values())
