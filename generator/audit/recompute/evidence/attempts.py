"""Attempts as evidence: known outcomes, registered exclusions, incidents explained, five runs, and no separation
without spread."""

from __future__ import annotations

from collections.abc import Sequence

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.readers.grid import row_outcome
from generator.audit.recompute.decision.model import Configuration, PhaseTiming, RunExclusion, Separation
from generator.audit.recompute.times import timing

# The seeds ask for five measured runs per variant (000/001/002 §3): fewer show too little of the spread.
MIN_RUNS = 5
# A series needs two runs to show any spread at all.
MIN_FOR_SPREAD = 2
E, W = Severity.ERROR, Severity.WARNING


def series_findings(protocol: Protocol, file: str) -> list[Finding]:
    """Fewer measured runs per variant than the seeds' five: a warning on the experiment."""
    out = []
    for i, exp in enumerate(protocol.experiments):
        runs = exp.runs_per_variant
        if runs < MIN_RUNS:
            out.append(make_finding(
                "fewer-than-five-runs", W, file,
                f"experiment {exp.id!r} registers {runs} measured run(s) per variant, fewer than the seeds' "
                f"{MIN_RUNS}: its median and min-max show little of the spread, and "
                f"{'one run shows none' if runs < MIN_FOR_SPREAD else 'few runs show little'}",
                field=f"/experiments/{i}/runs_per_variant", claimed=runs, recomputed=MIN_RUNS,
                rule=f"{MIN_RUNS} measured runs per variant, in a rotated or drawn order",
                fix=f"register and run at least {MIN_RUNS} measured runs per variant"))
    return out


def separation(a: PhaseTiming, b: PhaseTiming) -> Separation:
    """`timing.separation`, except that a series without spread (fewer than two runs) never separates."""
    if a.successes < MIN_FOR_SPREAD or b.successes < MIN_FOR_SPREAD:
        gap = abs(a.median - b.median) if a.median is not None and b.median is not None else None
        reason = ("a series has no successful run" if gap is None else
                  "a series of fewer than two runs has no spread: its runs cannot separate it from another")
        return Separation(decides=False, gap=gap, spread=None, reason=reason)
    return timing.separation(a, b)


def failure_reason(statuses: Sequence[str]) -> str | None:
    """Why failed attempts other than out-of-memory (which has its own reason) make a configuration inadmissible."""
    other = [s for s in statuses if s != "oom"]
    if not other:
        return None
    counts = ", ".join(f"{other.count(s)} {s}" for s in sorted(set(other)))
    return (f"failed attempts: {counts}, kept as failure observations (only an exclusion registered in the protocol "
            "sets an attempt aside)")


def exclusions(configs: Sequence[Configuration]) -> tuple[RunExclusion, ...]:
    """Every attempt set aside as excluded, in configuration and run order, with the cause its notes name."""
    return tuple(RunExclusion(configuration=c.id, line=r.line, phase=r.phase, run_index=r.run_index,
                              cause=row_outcome(r.notes).cause)
                 for c in configs for r in c.runs if r.outcome == "excluded")
