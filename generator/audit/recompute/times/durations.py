"""A grid duration against its measured run: no shorter than the work measured, no longer than its dating allows."""

from __future__ import annotations

from datetime import datetime

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.measurement import MeasurementDoc, Phase
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.inputs.rows import GridRow
from generator.audit.recompute.evidence import memory
from generator.audit.recompute.times import coldphases
from generator.audit.recompute.times.runphases import TOLERANCE_S, parse_utc, seconds

GRID_FIELD = "elapsed_seconds"
# Timer steps done on the device inside the measured phase (the phase is then the timer); steps before it on the
# host (reading, tokenising) may start once the process ended its previous phase, steps after it (materialising,
# scoring, writing) must stop before the process starts its next one.
DEVICE_STEPS = frozenset({"transfer", "inference"})
BEFORE_STEPS = frozenset({"read_corpus", "tokenization"})
# The host steps a measured phase leaves out never weigh more than the forward pass it measured: a run is at
# least half its measured work (the runners time the whole scope inside the phase, a ratio of 1).
HOST_SHARE = 1.0
_RULE = ("elapsed_seconds, by the registered timer scope, includes its run's measured forward pass (when the timer "
         "covers inference) and lasts no longer than the phase's bracket, extended only by the covered host steps "
         "while its process runs no other phase, and by at most the measured phase's own length")


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _allowed(doc: MeasurementDoc, phase: Phase, start: datetime, end: datetime, covers: set[str],
             window: tuple[datetime, datetime] | None) -> tuple[float, str]:
    """The longest the run's timer can have run, and why."""
    bracket = seconds(start, end)
    said = f"its measured phase lasted {bracket:g} s ({phase.started_at} to {phase.ended_at})"
    if covers <= DEVICE_STEPS:
        return bracket, said + " and the timer covers only transfer and inference"
    others = [(s, e) for p in doc.phases if p is not phase
              and (s := parse_utc(p.started_at)) is not None and (e := parse_utc(p.ended_at)) is not None]
    t0 = max((e for _, e in others if e <= start), default=window[0] if window else start) \
        if covers & BEFORE_STEPS else start
    t1 = min((s for s, _ in others if s >= end), default=window[1] if window else end) \
        if covers - DEVICE_STEPS - BEFORE_STEPS else end
    idle, cap = seconds(t0, t1), bracket * (1 + HOST_SHARE)
    if idle <= cap:
        return idle, said + f", and its process ran no other phase only from {_stamp(t0)} to {_stamp(t1)}"
    return cap, said + ", and the host steps it leaves out add at most as much again"


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _row(protocol: Protocol, measurements: dict[str, MeasurementDoc], row: GridRow,
         line: int, grid_file: str, window: tuple[datetime, datetime] | None) -> list[Finding] | str:
    """The row's duration against its measured phase; the reason, when no measured phase stands behind it."""
    claimed = _number(row.elapsed_seconds)
    exp = protocol.experiment(row.experiment_id) if row.experiment_id is not None else None
    variant = next((v for v in exp.variants if v.id == row.variant_id), None) if exp is not None else None
    if claimed is None or variant is None or row.phase not in ("cold", "warm") \
            or not isinstance(row.run_index, int):
        return []
    file = variant.measurement
    doc = measurements.get(file) if file else None
    phase = memory.phase_for_row(doc, row.phase, row.run_index) if doc is not None else None
    work = _number(phase.elapsed_seconds) if phase is not None else None
    if file is not None and doc is None:
        return []  # linked but unreadable: its own finding says so
    if phase is not None and work is None and phase.status != "ok":
        return []  # tied to its measured phase, which failed untimed: the attempt is a failure, never timed
    if phase is None or work is None:
        return ("no measurement is linked to the variant" if file is None else
                f"{file} has no measured phase with a duration for {row.phase} run {row.run_index}")
    covers = set(protocol.timer.covers)
    if "inference" in covers and claimed + TOLERANCE_S < work:
        return [make_finding("duration-below-measured", Severity.ERROR, grid_file,
                             f"elapsed_seconds {claimed:g} is shorter than the {work:g} s its own measurement "
                             f"({file}, {phase.phase}) timed for the work it includes", line=line,
                             field=GRID_FIELD, claimed=claimed, recomputed=work, rule=_RULE,
                             fix=f"write the duration the timer measured ({work:g} s or more, by the timer scope); "
                                 "a duration is never typed or cut")]
    start, end = parse_utc(phase.started_at), parse_utc(phase.ended_at)
    if doc is None or start is None or end is None or end < start:
        return []
    allowed, why = _allowed(doc, phase, start, end, covers, window)
    if claimed <= allowed + TOLERANCE_S:
        return []
    return [make_finding("duration-beyond-bracket", Severity.ERROR, grid_file,
                         f"elapsed_seconds {claimed:g} is longer than {file} allows for this run ({allowed:g} s): "
                         f"{why}", line=line, field=GRID_FIELD, claimed=claimed, recomputed=round(allowed, 6),
                         rule=_RULE, fix="write the duration the timer measured; a duration longer than its run's "
                                         "dating allows was not measured")]


def _per_cold_run(protocol: Protocol, measurements: dict[str, MeasurementDoc], row: GridRow) -> bool:
    """Whether the row's measurement is of a format that holds every cold run (format 2): one it lacks is then
    unmeasured, not beyond the format."""
    exp = protocol.experiment(row.experiment_id) if row.experiment_id is not None else None
    variant = next((v for v in exp.variants if v.id == row.variant_id), None) if exp is not None else None
    doc = measurements.get(variant.measurement) if variant is not None and variant.measurement else None
    return doc is not None and coldphases.per_cold_run(doc)


def _unmeasured(grid_file: str, config: str, rows: list[tuple[int, float, str]]) -> Finding:
    """One error per configuration for its durations without a measured phase behind them."""
    shown = "; ".join(f"line {line}: {claimed:g} s, {why}" for line, claimed, why in rows[:3])
    more = f"; and {len(rows) - 3} more" if len(rows) > 3 else ""
    return make_finding("duration-unmeasured", Severity.ERROR, grid_file,
                        f"{len(rows)} elapsed_seconds of {config} are tied to no measured phase ({shown}{more}): "
                        "typed by hand, nothing proves them", line=rows[0][0], field=GRID_FIELD,
                        claimed=rows[0][1], rule="each grid row is tied to a measured phase of its variant's "
                        "measurement (cold run 1 = cold_forward, in format 2 cold run k = cold_forward repeat k; "
                        "warm run r = warm_forward repeat r)",
                        fix="measure the runs with `gpu-audit campaign run` or `gpu-audit measure run` and link "
                            "each variant to its measurement, one phase per row")


def _cold_unmeasured(grid_file: str, config: str, rows: list[tuple[int, float, str]]) -> Finding:
    """One warning per configuration for its cold runs after the first: a format 1 measurement holds one
    cold_forward."""
    shown = ", ".join(str(line) for line, _, _ in rows[:5]) + (f" and {len(rows) - 5} more" if len(rows) > 5 else "")
    return make_finding("cold-run-unmeasured", Severity.WARNING, grid_file,
                        f"{len(rows)} cold run(s) of {config} after the first (lines {shown}) have no phase in its "
                        "measurement, whose format (1) holds one cold_forward: their elapsed_seconds are not proved",
                        line=rows[0][0], field=GRID_FIELD, claimed=rows[0][1],
                        rule="a measurement holds the cold_forward of its own fresh process; a cold run after the "
                             "first (another seed's or corpus's) is timed in a process of its own",
                        fix="measure the runs again with `gpu-audit campaign run`, whose measurement (format 2) holds "
                            "each cold run's fresh process")


def duration_findings(protocol: Protocol, measurements: dict[str, MeasurementDoc], grid_file: str,
                      rows: list[GridRow], lines: list[int],
                      window: tuple[datetime, datetime] | None) -> list[Finding]:
    """Every grid elapsed_seconds against the measured phase of the same run (cold run 1 = cold_forward, warm run
    r = warm_forward repeat r); durations with no measured phase behind them are one error per configuration
    (a cold run after the first, which a measurement's one cold_forward cannot hold, one warning)."""
    out: list[Finding] = []
    unmeasured: dict[str, list[tuple[int, float, str]]] = {}
    cold: dict[str, list[tuple[int, float, str]]] = {}
    for row, line in zip(rows, lines, strict=False):
        found = _row(protocol, measurements, row, line, grid_file, window)
        if isinstance(found, str):
            config = f"{row.experiment_id}/{row.variant_id}"
            later_cold = row.phase == "cold" and row.run_index != 1 and not found.startswith("no measurement") \
                and not _per_cold_run(protocol, measurements, row)
            (cold if later_cold else unmeasured).setdefault(config, []).append(
                (line, float(row.elapsed_seconds or 0), found))
        else:
            out.extend(found)
    out.extend(_unmeasured(grid_file, config, found_rows) for config, found_rows in unmeasured.items())
    out.extend(_cold_unmeasured(grid_file, config, found_rows) for config, found_rows in cold.items())
    return out
