"""Memory evidence: baselines and absolute peaks kept apart; allocated is part of reserved; CSV agrees with JSON."""

from __future__ import annotations

from typing import Protocol

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.measurement import MeasurementDoc, Phase
from generator.audit.load.inputs.rows import GridRow
from generator.audit.load.readers.grid import row_outcome
from generator.audit.recompute.times import coldphases, runphases

PAIRS = (("baseline_allocated_bytes", "baseline_reserved_bytes"), ("final_allocated_bytes", "final_reserved_bytes"),
         ("peak_allocated_bytes", "peak_reserved_bytes"))
PEAKS = (("baseline_allocated_bytes", "peak_allocated_bytes"), ("baseline_reserved_bytes", "peak_reserved_bytes"))
ROW_COLUMNS = ("baseline_allocated_bytes", "baseline_reserved_bytes", "peak_allocated_bytes", "peak_reserved_bytes")
# The phases before the warm runs, in order: the Lab's four, with the optional set-up phases where a file has them.
PHASE_ORDER = ("model_load", "inputs", "cold_forward", "warmup")
E = Severity.ERROR


class Readings(Protocol):
    """What holds memory readings by name: a grid row, a phase row, one GPU's share of a pass."""

    def counter(self, key: str) -> float | None: ...



def invariant_findings(record: Readings, file: str, line: int | None, where: str) -> list[Finding]:
    """peak >= baseline and allocated <= reserved, for one phase row or one grid row."""
    out: list[Finding] = []
    for alloc, res in PAIRS:
        a, r = record.counter(alloc), record.counter(res)
        if a is not None and r is not None and a > r:
            out.append(make_finding("allocated-exceeds-reserved", E, file,
                                    f"{alloc} {a} exceeds {res} {r}: allocated is part of reserved", line=line,
                                    field=f"{where}{alloc}", claimed=a, recomputed=r, rule="allocated <= reserved",
                                    fix="report the allocator's counters as read; never add allocated to reserved"))
    for base, peak in PEAKS:
        b, p = record.counter(base), record.counter(peak)
        if b is not None and p is not None and p < b:
            out.append(make_finding("peak-below-baseline", E, file,
                                    f"{peak} {p} is below {base} {b}: an absolute peak cannot be lower than the "
                                    "baseline", line=line, field=f"{where}{peak}", claimed=p, recomputed=b,
                                    rule="peak >= baseline",
                                    fix="record the absolute peak after resetting the peak statistics"))
    return out


def check_measurement(doc: MeasurementDoc, file: str, resumptions: bool = False) -> list[Finding]:
    """Invariants of one measurement JSON: phases in order, warm rows as declared, memory rules.

    A resume variant's file (`resumptions`) holds the processes of its resumptions: the set-up and inputs, then
    only the runs it resumed (a cold_forward, a warm-up, warm_forward rows of some repeats)."""
    out: list[Finding] = []
    phases = doc.phases
    names = [p.phase for p in phases]
    head = [n for n in names if n != "warm_forward"]
    failed_at = next((i for i, p in enumerate(phases) if p.status == "failed"), None)
    optional = runphases.OPTIONAL_PHASES | ({"cold_forward", "warmup"} if resumptions else frozenset())
    expected = [n for n in runphases.PHASE_ORDER if n in PHASE_ORDER and n not in optional
                or n in optional and n in head]
    # A failure in the set-up or the first passes may end the record early: its phases are then the start of the
    # expected order. Any other record (no failure, a failed warm run, warm rows written) has them all, once each.
    ended_early = failed_at is not None and phases[failed_at].phase != "warm_forward" \
        and "warm_forward" not in names
    if coldphases.per_cold_run(doc):
        out.extend(coldphases.order_findings(doc, file, resumptions))
    elif head != expected and not (ended_early and head == expected[:len(head)]):
        out.append(make_finding("phase-order", E, file, f"phases are {head}, expected {expected} "
                                "then one warm_forward per repeat", field="/phases", claimed=head,
                                recomputed=expected,
                                rule="[download, install,] model_load, [compile,] inputs, cold_forward, warmup, "
                                     "warm_forward x repeats (the set-up phases in brackets optional, each once)",
                                fix="write the phases in the Lab's order"))
    repeats = doc.configuration.repeats
    warm = [p.repeat for p in phases if p.phase == "warm_forward"]
    numbered = [r for r in warm if isinstance(r, int) and 1 <= r <= repeats]
    if resumptions and numbered == warm and numbered == sorted(set(numbered)):
        pass  # the repeats it resumed, each once, in order
    elif failed_at is None and warm != list(range(1, repeats + 1)):
        out.append(make_finding("warm-rows-mismatch", E, file,
                                f"{len(warm)} warm_forward rows (repeats {warm}) where configuration.repeats is "
                                f"{repeats}",
                                field="/phases", claimed=len(warm), recomputed=repeats,
                                rule="one warm_forward row per repeat",
                                fix="write one warm_forward row per declared repeat, numbered 1..repeats"))
    elif failed_at is not None:
        out.extend(_warm_rows_after_failure(phases, failed_at, warm, repeats, file))
    for i, phase in enumerate(phases):
        out.extend(invariant_findings(phase, file, None, f"/phases/{i}/"))
    return out


def _warm_rows_after_failure(phases: tuple[Phase, ...], failed_at: int, warm: list[int | None], repeats: int,
                             file: str) -> list[Finding]:
    """A failure ends the record early, never makes it patchy: every repeat attempted up to it keeps its row.

    `measure run` stops after the failed phase; a campaign may go on with the next repeats. Either way the
    warm rows are numbered 1, 2, 3 ... without a gap or a repeat, never beyond the declared repeats, and a
    failed warm_forward r comes after the rows of repeats 1..r-1 (so a slow or failed repeat cannot vanish).
    A record that goes on after the failure goes on to the last declared repeat: one that stops on a
    completed repeat short of it has dropped the repeats after (the last repeat of the OOM variant, say).
    """
    failed = phases[failed_at]
    reached = failed.repeat if failed.phase == "warm_forward" else 0
    ends = phases[-1].status == "failed" or len(warm) == repeats
    if warm == list(range(1, len(warm) + 1)) and len(warm) <= repeats and len(warm) >= (reached or 0) and ends:
        return []
    expected = f"1..{reached}" if reached else "none required"
    want = max(reached or 0, len(warm)) if ends else repeats
    return [make_finding("warm-rows-mismatch", E, file,
                         f"warm_forward rows are repeats {warm} where phase {failed_at} ({failed.phase}"
                         f"{f' repeat {reached}' if reached else ''}) failed: every repeat attempted up to the "
                         f"failure needs its row ({expected}), numbered without gaps; a record that goes on after the "
                         f"failure keeps every repeat up to configuration.repeats {repeats}",
                         field="/phases", claimed=warm,
                         recomputed=list(range(1, min(want, repeats) + 1)),
                         rule="one warm_forward row per attempted repeat, up to the failure",
                         fix="keep one warm_forward row per attempted repeat, the failed one included; never drop "
                             "or renumber a repeat")]


def phase_for_row(doc: MeasurementDoc, phase: str, run_index: int) -> Phase | None:
    """The measurement phase describing a grid row: cold_forward for cold run 1 (format 2: cold_forward repeat k
    for cold run k), warm_forward repeat r for warm r."""
    if phase == "cold":
        return coldphases.cold_phase(doc, run_index)
    for p in doc.phases:
        if phase == "warm" and p.phase == "warm_forward" and p.repeat == run_index:
            return p
    return None


def agreement_findings(row: GridRow, line: int, grid_file: str, phase: Phase,
                       doc_file: str) -> list[Finding]:
    """A grid row and the measurement phase describing the same run must report the same figures."""
    out: list[Finding] = []
    for column in ROW_COLUMNS:
        claimed, measured = row.counter(column), phase.counter(column)
        if claimed == 0 and measured is None and phase.writes(column):
            # null in the measurement is "not measured"; a 0 in the grid would turn it into a real zero.
            out.append(make_finding("zero-not-measured", E, grid_file,
                                    f"{column} is 0 where {doc_file} says not measured (null): an empty cell means not "
                                    "recorded, 0 means a real zero", line=line, field=column, claimed=0,
                                    recomputed=None, rule="an empty cell is never written as 0",
                                    fix="leave the cell empty and say in notes why it was not measured"))
            continue
        if claimed is None and measured is not None and row.cell(column) is None:
            # the measurement is the evidence: a blank cell would hide its counters from every reader of the grid
            out.append(make_finding("memory-disagrees", E, grid_file,
                                    f"{column} is empty where {doc_file} measured {measured} bytes for this run: an "
                                    "empty cell means not measured", line=line, field=column, claimed="",
                                    recomputed=measured, rule=f"same run as {doc_file}",
                                    fix="copy the counters from the measurement file unchanged"))
            continue
        if claimed is None or measured is None or claimed == measured:
            continue
        hint = ""
        kind = column.split("_")[0]
        alloc, res = phase.counter(f"{kind}_allocated_bytes"), phase.counter(f"{kind}_reserved_bytes")
        if alloc is not None and res is not None and claimed == alloc + res:
            hint = " (allocated was added to reserved: allocated is part of reserved, never add them)"
        if column.startswith("peak") and phase.peak_reserved_bytes is not None and \
                phase.peak_allocated_bytes is not None and \
                claimed == phase.peak_reserved_bytes - phase.peak_allocated_bytes:
            hint = " (the two peaks were subtracted: they may occur at different moments, never subtract them)"
        out.append(make_finding("memory-disagrees", E, grid_file,
                                f"{column} {claimed} disagrees with {doc_file} ({measured}){hint}", line=line,
                                field=column, claimed=claimed, recomputed=measured, rule=f"same run as {doc_file}",
                                fix="copy the counters from the measurement file unchanged"))
    return out


def _out_of_memory(error: str | None) -> bool:
    text = (error or "").lower()
    return "out of memory" in text or "outofmemory" in text


def outcome_findings(row: GridRow, line: int, grid_file: str, phase: Phase,
                     doc_file: str) -> list[Finding]:
    """The grid row and the measurement phase of the same run must tell the same outcome.

    A completed slow run relabelled `outcome=aborted` drops out of the median, and an out-of-memory failure
    relabelled `outcome=failed` makes a batch look memory-feasible: the measurement file is the evidence.
    """
    outcome = row_outcome(row.notes)
    status, error = phase.status, phase.error
    rule = f"the grid row and {doc_file} describe the same run"
    if status == "ok" and (outcome.failed or outcome.excluded):
        return [make_finding("outcome-disagrees-measurement", E, grid_file,
                             f"the row says outcome={outcome.status}, {doc_file} recorded this run as completed "
                             f"({phase.phase}, {phase.elapsed_seconds} s)", line=line, field="notes",
                             claimed=outcome.status, recomputed="ok", rule=rule,
                             fix="report the run as it happened: a completed run keeps its row, its duration and "
                                 "its outcome; a slow run is explained in notes, never declared failed or excluded")]
    if status == "failed" and outcome.through:
        return [make_finding("outcome-disagrees-measurement", E, grid_file,
                             f"the row is a completed run "
                             f"({'no outcome= in notes' if outcome.completed_run else 'outcome=resumed'}), "
                             f"{doc_file} recorded this run as failed ({error})", line=line, field="notes",
                             claimed=outcome.status, recomputed="failed",
                             rule=rule,
                             fix="write outcome=oom|failed|aborted and completed=N in notes and leave "
                                 "elapsed_seconds empty: a failure stays a failure observation")]
    if status == "failed" and _out_of_memory(error) and outcome.status != "oom":
        return [make_finding("outcome-disagrees-measurement", E, grid_file,
                             f"the row says outcome={outcome.status}, {doc_file} recorded this run out of memory "
                             f"({error})",
                             line=line, field="notes", claimed=outcome.status, recomputed="oom", rule=rule,
                             fix="write outcome=oom: an out-of-memory failure is what makes a configuration not "
                                 "memory-feasible")]
    return []
