"""Memory evidence: baselines and absolute peaks kept apart; allocated is part of reserved; CSV agrees with JSON."""

from __future__ import annotations

from typing import Any

from generator.findings import Finding, Severity

PAIRS = (("baseline_allocated_bytes", "baseline_reserved_bytes"), ("final_allocated_bytes", "final_reserved_bytes"),
         ("peak_allocated_bytes", "peak_reserved_bytes"))
PEAKS = (("baseline_allocated_bytes", "peak_allocated_bytes"), ("baseline_reserved_bytes", "peak_reserved_bytes"))
ROW_COLUMNS = ("baseline_allocated_bytes", "baseline_reserved_bytes", "peak_allocated_bytes", "peak_reserved_bytes")
PHASE_ORDER = ("model_load", "inputs", "cold_forward", "warmup")


def _f(code: str, file: str, line: int | None, field: str | None, message: str, fix: str, rule: str, *,
       claimed: Any = None, recomputed: Any = None) -> Finding:
    return Finding(code=code, severity=Severity.ERROR, file=file, line=line, field=field, value=claimed,
                   claimed=claimed, recomputed=recomputed, rule=rule, fix=fix, message=message)


def invariant_findings(record: dict[str, Any], file: str, line: int | None, where: str) -> list[Finding]:
    """peak >= baseline and allocated <= reserved, for one phase row or one grid row."""
    out: list[Finding] = []
    for alloc, res in PAIRS:
        a, r = record.get(alloc), record.get(res)
        if a is not None and r is not None and a > r:
            out.append(_f("allocated-exceeds-reserved", file, line, f"{where}{alloc}",
                          f"{alloc} {a} exceeds {res} {r}: allocated is part of reserved",
                          "report the allocator's counters as read; never add allocated to reserved",
                          "allocated <= reserved", claimed=a, recomputed=r))
    for base, peak in PEAKS:
        b, p = record.get(base), record.get(peak)
        if b is not None and p is not None and p < b:
            out.append(_f("peak-below-baseline", file, line, f"{where}{peak}",
                          f"{peak} {p} is below {base} {b}: an absolute peak cannot be lower than the baseline",
                          "record the absolute peak after resetting the peak statistics", "peak >= baseline",
                          claimed=p, recomputed=b))
    return out


def check_measurement(doc: dict[str, Any], file: str) -> list[Finding]:
    """Invariants of one measurement JSON: phases in order, warm rows as declared, memory rules."""
    out: list[Finding] = []
    phases = doc["phases"]
    names = [p["phase"] for p in phases]
    head = [n for n in names if n != "warm_forward"]
    failed_at = next((i for i, p in enumerate(phases) if p["status"] == "failed"), None)
    if failed_at is None and tuple(head) != PHASE_ORDER:
        out.append(_f("phase-order", file, None, "/phases", f"phases are {head}, expected {list(PHASE_ORDER)} "
                      "then one warm_forward per repeat", "write the phases in the Lab's order",
                      "model_load, inputs, cold_forward, warmup, warm_forward x repeats", claimed=head))
    repeats = doc["configuration"]["repeats"]
    warm = [p.get("repeat") for p in phases if p["phase"] == "warm_forward"]
    if failed_at is None and warm != list(range(1, repeats + 1)):
        out.append(_f("warm-rows-mismatch", file, None, "/phases",
                      f"{len(warm)} warm_forward rows (repeats {warm}) where configuration.repeats is {repeats}",
                      "write one warm_forward row per declared repeat, numbered 1..repeats",
                      "one warm_forward row per repeat", claimed=len(warm), recomputed=repeats))
    for i, phase in enumerate(phases):
        out.extend(invariant_findings(phase, file, None, f"/phases/{i}/"))
    return out


def phase_for_row(doc: dict[str, Any], phase: str, run_index: int) -> dict[str, Any] | None:
    """The measurement phase describing a grid row: cold_forward for cold run 1, warm_forward repeat r for warm r."""
    for p in doc["phases"]:
        if phase == "cold" and run_index == 1 and p["phase"] == "cold_forward":
            return p
        if phase == "warm" and p["phase"] == "warm_forward" and p.get("repeat") == run_index:
            return p
    return None


def agreement_findings(row: dict[str, Any], line: int, grid_file: str, phase: dict[str, Any], doc_file: str) -> list[Finding]:
    """A grid row and the measurement phase describing the same run must report the same figures."""
    out: list[Finding] = []
    for column in ROW_COLUMNS:
        claimed, measured = row.get(column), phase.get(column)
        if claimed is None or measured is None or claimed == measured:
            continue
        hint = ""
        kind = column.split("_")[0]
        alloc, res = phase.get(f"{kind}_allocated_bytes"), phase.get(f"{kind}_reserved_bytes")
        if alloc is not None and res is not None and claimed == alloc + res:
            hint = " (allocated was added to reserved: allocated is part of reserved, never add them)"
        if column.startswith("peak") and phase.get("peak_reserved_bytes") is not None and \
                phase.get("peak_allocated_bytes") is not None and \
                claimed == phase["peak_reserved_bytes"] - phase["peak_allocated_bytes"]:
            hint = " (the two peaks were subtracted: they may occur at different moments, never subtract them)"
        out.append(_f("memory-disagrees", grid_file, line, column,
                      f"{column} {claimed} disagrees with {doc_file} ({measured}){hint}",
                      "copy the counters from the measurement file unchanged", f"same run as {doc_file}",
                      claimed=claimed, recomputed=measured))
    return out
