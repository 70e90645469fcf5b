"""Time is evidence: runs after the registration, inside the window, before the deadline; then order and durations."""

from __future__ import annotations

from datetime import UTC, datetime

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.measurement import MeasurementDoc, Phase
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.inputs.rows import GridRow
from generator.audit.recompute.evidence import memory
from generator.audit.recompute.times import coldphases, durations, runorder, runphases
from generator.audit.recompute.times.runphases import parse_utc
from generator.core import instants
from generator.core.errors import UsageError

# The grid has no time column: a run's times live in its measurement phase; the row is pointed at by its duration.
GRID_FIELD = "elapsed_seconds"


def _bounds(protocol: Protocol) -> dict[str, datetime] | None:
    """Registration, window and deadline in UTC (a date-only deadline: the end of that day in the window's zone);
    None when the protocol cannot place them (already a finding)."""
    try:
        w = protocol.window
        registered = parse_utc(protocol.registered_at)
        if registered is None:
            return None
        return {"registered": registered,
                "start": instants.parse_local(w.start, w.timezone).astimezone(UTC),
                "end": instants.parse_local(w.end, w.timezone).astimezone(UTC),
                "deadline": instants.deadline_instant(protocol.deadline, w.timezone).astimezone(UTC)}
    except (KeyError, TypeError, ValueError, OverflowError, UsageError):
        return None


def _grid_lines(protocol: Protocol, measurements: dict[str, MeasurementDoc], rows: list[GridRow],
                lines: list[int]) -> dict[tuple[str, int], list[int]]:
    """(measurement file, phase index) -> the grid lines of that run (memory.phase_for_row's mapping)."""
    linked: dict[tuple[str, str], str] = {}
    for exp in protocol.experiments:
        for v in exp.variants:
            if v.measurement in measurements:
                linked[(exp.id, v.id)] = v.measurement
    out: dict[tuple[str, int], list[int]] = {}
    for row, line in zip(rows, lines, strict=False):
        key = (row.experiment_id, row.variant_id)
        run_index = row.run_index
        if key not in linked or row.phase not in ("cold", "warm") or not isinstance(run_index, int):
            continue
        file = linked[key]
        phase = memory.phase_for_row(measurements[file], row.phase, run_index)
        index = next((i for i, p in enumerate(measurements[file].phases) if p is phase), None)
        if index is not None:
            out.setdefault((file, index), []).append(line)
    return out


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _coverage(measurements: dict[str, MeasurementDoc], timed: list[tuple[str, int, Phase]]) -> list[Finding]:
    """An error on each measurement that dates none of its runs; one warning on the window when no run of the
    campaign is dated at all (the protocol's registration, window and deadline are then proved by nothing)."""
    out = []
    if not timed:
        out.append(make_finding("no-run-times", Severity.WARNING, "protocol.json",
                                "no measurement of the campaign records when its runs started and ended: the "
                                "registration before the runs, the window and the deadline cannot be checked "
                                "against the runs", field="/window", rule="runs start after registered_at, inside "
                                "the window, and end before the deadline", fix="measure with `gpu-audit campaign "
                                "run` or `gpu-audit measure run`, which record started_at and ended_at (UTC) for "
                                "every phase"))
    # The campaign's runner records every phase: a linked file without any time would hide its own runs from
    # the checks below, whether or not the campaign's other files carry them.
    with_times = {file for file, _, _ in timed}
    beside = "while the campaign's other measurements do" if timed else "(nor does any other measurement)"
    out.extend(make_finding("run-times-missing", Severity.ERROR, file,
                            f"{file} records no run time {beside}: no phase has started_at and ended_at, so its "
                            "runs cannot be placed after the registration, inside the window and before the "
                            "deadline, nor their order proved", field="/phases",
                            rule="each measurement proves when its own runs started and ended",
                            fix="measure this variant again with `gpu-audit campaign run` or `gpu-audit measure "
                                "run`, inside the registered window; the Lab's `mesure_memoire.py measure` output "
                                "dates no phase")
               for file in sorted(set(measurements) - with_times))
    return out


class _Report:
    """Reports a time error on the measurement phase and on the grid rows of the same run."""

    def __init__(self, measurements: dict[str, MeasurementDoc], grid_file: str,
                 rows_of: dict[tuple[str, int], list[int]], out: list[Finding]):
        self.measurements, self.grid_file, self.rows_of, self.out = measurements, grid_file, rows_of, out

    def __call__(self, code: str, file: str, index: int, key: str, claimed: str, recomputed: str, what: str,
                 rule: str, fix: str) -> None:
        where = f"/phases/{index}/{key}"
        phase = self.measurements[file].phases[index]
        run = phase.phase + (f" repeat {phase.repeat}" if phase.repeat else "")
        self.out.append(make_finding(code, Severity.ERROR, file, f"{run} {what}", field=where, claimed=claimed,
                                     recomputed=recomputed, rule=rule, fix=fix))
        for line in self.rows_of.get((file, index), []):
            self.out.append(make_finding(code, Severity.ERROR, self.grid_file,
                                         f"this run ({file} {where} = {claimed}) {what}", line=line,
                                         field=GRID_FIELD, claimed=claimed, recomputed=recomputed, rule=rule, fix=fix))


def _invalid(file: str, index: int, phase: Phase, start: datetime | None, end: datetime | None) -> Finding:
    """A phase whose times are no UTC moments, or end before they start."""
    key = "started_at" if start is None else "ended_at"
    stamp = phase.started_at if start is None else phase.ended_at
    return make_finding("run-time-invalid", Severity.ERROR, file,
                        f"{key} {stamp!r} is no UTC moment" if start is None or end is None else
                        f"ended_at {phase.ended_at} is before started_at {phase.started_at}",
                        field=f"/phases/{index}/{key}", claimed=stamp,
                        rule="both times in UTC (YYYY-MM-DDTHH:MM:SS.ffffffZ), the end not before the start",
                        fix="keep the times the runner wrote; a run whose times are lost cannot prove its window")


def _check_phase(report: _Report, protocol: Protocol, bounds: dict[str, datetime], file: str, index: int,
                 phase: Phase, start: datetime, end: datetime) -> None:
    """One phase's times against the registration, the window and the deadline."""
    w = protocol.window
    s_text, e_text = phase.started_at or "", phase.ended_at or ""  # both parsed: never None here
    if start <= bounds["registered"]:
        report("run-before-registration", file, index, "started_at", s_text, str(protocol.registered_at),
               f"started at {s_text}, before the protocol was registered ({protocol.registered_at})",
               "the protocol is registered before the first run", "register a new protocol and run the "
               "campaign again after it; a rule written after the runs needs a new independent evaluation")
    if start < bounds["start"] or end > bounds["end"]:
        key, text, edge = ("started_at", s_text, bounds["start"]) if start < bounds["start"] else \
            ("ended_at", e_text, bounds["end"])
        report("run-outside-window", file, index, key, text, _stamp(edge),
               f"ran {s_text} to {e_text}, outside the registered window {w.start} to {w.end} {w.timezone} "
               f"({_stamp(bounds['start'])} to {_stamp(bounds['end'])})",
               "every run lies inside the registered campaign window, in its time zone",
               "run the campaign inside the window the rental covers, or register a new protocol before "
               "the runs")
    if end > bounds["deadline"]:
        report("run-after-deadline", file, index, "ended_at", e_text, _stamp(bounds["deadline"]),
               f"ended at {e_text}, after the deadline {protocol.deadline} {w.timezone} "
               f"({_stamp(bounds['deadline'])})", "the last run ends before the deadline",
               "a result delivered after the deadline does not answer the registered question")


def _devices(protocol: Protocol, measurements: dict[str, MeasurementDoc]) -> dict[str, tuple[str, str]]:
    """Measurement file -> (rental, device): the files whose runs share one rented GPU (an experiment's own
    rental, or a shared one that several experiments ran in)."""
    return {v.measurement: (exp.rental_key, measurements[v.measurement].environment.device)
            for exp in protocol.experiments for v in exp.variants
            if v.measurement in measurements}


def _cross_checks(protocol: Protocol, measurements: dict[str, MeasurementDoc],
                  timed: list[tuple[str, int, Phase]]) -> list[Finding]:
    """All or none of a file's phases dated, in their order, no two runs at once on a device, the registered
    order of the warm runs."""
    process = {file: coldphases.processes(doc) for file, doc in measurements.items()}
    dated = [runphases.Dated(file, i, p, start, end, process[file][i] if file in process else 0)
             for file, i, p in timed
             if (start := parse_utc(p.started_at)) is not None
             and (end := parse_utc(p.ended_at)) is not None and start <= end]
    by_file: dict[str, list[runphases.Dated]] = {}
    for d in dated:
        by_file.setdefault(d.file, []).append(d)
    return (runphases.partial_findings(measurements) + runphases.order_findings(dated)
            + runphases.overlap_findings(dated, _devices(protocol, measurements))
            + runorder.order_findings(protocol, measurements, by_file))


def run_time_findings(protocol: Protocol, measurements: dict[str, MeasurementDoc], grid_file: str,
                      rows: list[GridRow], lines: list[int]) -> list[Finding]:
    """Prove each recorded phase time against registered_at, the window (in its zone) and the deadline, the
    phases' order and the run order, and each grid duration against its measured run.

    An error is reported on the measurement phase and on the grid row of the same run, so that it concerns
    that configuration; a campaign with no recorded time at all gets one warning on protocol.json.
    """
    timed = [(file, i, p) for file, doc in sorted(measurements.items()) for i, p in enumerate(doc.phases)
             if p.timed]
    bounds = _bounds(protocol)
    out = _coverage(measurements, timed) + _cross_checks(protocol, measurements, timed)
    out += durations.duration_findings(protocol, measurements, grid_file, rows, lines,
                                       (bounds["start"], bounds["end"]) if bounds else None)
    if bounds is None or not timed:
        return out
    report = _Report(measurements, grid_file, _grid_lines(protocol, measurements, rows, lines), out)
    for file, index, phase in timed:
        start, end = parse_utc(phase.started_at), parse_utc(phase.ended_at)
        if start is None or end is None or end < start:
            out.append(_invalid(file, index, phase, start, end))
        else:
            _check_phase(report, protocol, bounds, file, index, phase, start, end)
    return out
