"""Attempts as evidence: known outcomes, registered exclusions, incidents explained, five runs, and no separation
without spread."""

from __future__ import annotations

from collections.abc import Sequence

from generator.audit.findings import Finding, Severity, make_finding
from generator.audit.inputs.protocol import Protocol
from generator.audit.readers.grid import EXPLANATION_KEYS, KNOWN_OUTCOMES, Outcome, row_outcome
from generator.audit.recompute import timing
from generator.audit.recompute.model import Configuration, PhaseTiming, RunExclusion, Separation
from generator.audit.tariffrules import as_written, blank

# The seeds ask for five measured runs per variant (000/001/002 §3): fewer show too little of the spread.
MIN_RUNS = 5
# A series needs two runs to show any spread at all.
MIN_FOR_SPREAD = 2
E, W = Severity.ERROR, Severity.WARNING


def registered_causes(protocol: Protocol | None) -> dict[str, str]:
    """The exclusions the protocol registered before the runs: cause -> the rule's description."""
    return {e.cause: e.description for e in (protocol.exclusions if protocol and protocol.exclusions else ())}


def row_outcome_findings(outcome: Outcome, protocol: Protocol | None, line: int, file: str) -> list[Finding]:
    """An outcome the grid does not know is an error; `excluded` only under a registered cause, named in notes."""
    if not outcome.known:
        return [make_finding("unknown-outcome", E, file,
                             f"notes say outcome={outcome.status!r}, which is none of "
                             f"{', '.join(sorted(KNOWN_OUTCOMES - {'ok'}))}: the attempt cannot be read as completed "
                             "or failed", line=line, field="notes", claimed=outcome.status,
                             rule="outcome=failed, oom, aborted, excluded or resumed; no outcome= means the run "
                                  "completed",
                             fix="write the attempt's outcome as one of the known words, and completed=N for a "
                                 "failure")]
    if not outcome.excluded:
        return []
    causes = registered_causes(protocol)
    if outcome.cause is not None and outcome.cause in causes:
        return []
    said = (f"names cause={outcome.cause!r}, which the protocol does not register" if outcome.cause
            else "names no cause=")
    known = ", ".join(sorted(causes)) or "none"
    return [make_finding("exclusion-not-registered", E, file,
                         f"an attempt written outcome=excluded {said} (registered exclusions: {known}): an attempt "
                         "set aside without a rule fixed before the runs is a failure removed from the record",
                         line=line, field="notes", claimed=outcome.cause, recomputed=sorted(causes),
                         rule="only an exclusion registered in protocol.json (exclusions: an outside cause), applied "
                              "alike to every variant, sets an attempt aside",
                         fix="write the attempt as it ended (outcome=failed, oom or aborted); an exclusion needs its "
                             "rule in the protocol before the runs and cause=<registered cause> in notes")]


def incident_findings(outcome: Outcome, notes: str | None, line: int, file: str) -> list[Finding]:
    """An incident (a failed, excluded or resumed attempt) whose notes explain it nowhere in words (no `error=`,
    `reason=` or `explanation=` holding a visible character) is a warning: the row is kept, the incident unexplained
    (000/001/002 §3)."""
    if not outcome.incident or any(not blank(text) for text in outcome.explanations):
        return []
    keys = f"{', '.join(k + '=' for k in EXPLANATION_KEYS[:-1])} or {EXPLANATION_KEYS[-1]}="
    said = (f"its {keys} item holds only blanks ({', '.join(repr(as_written(t)) for t in outcome.explanations)})"
            if outcome.explanations else f"it has no {keys} item")
    return [make_finding(
        "incident-unexplained", W, file,
        f"an attempt written outcome={outcome.status} is an incident, but its notes do not explain it: {said}",
        line=line, field="notes", claimed=notes,
        rule="an incident row (outcome=failed, oom, aborted, excluded or resumed) is kept and explained in notes: "
             "error= (the error as seen), reason= or explanation= (what happened and why), in words",
        fix=f"add to the row's notes what happened and why, e.g. `outcome={outcome.status}; ...; reason=<what "
            "happened>`, or the error message as error=<message>; keep the row otherwise as it is")]


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
