"""What the protocol registers before the runs, held against the grid's rows: each exclusion under a registered
cause, each incident explained, and the reproduction target the runs are judged by."""

from __future__ import annotations

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.protocol import Protocol, Quality
from generator.audit.load.inputs.work import DEFAULT_REPRODUCTION
from generator.audit.load.readers.grid import EXPLANATION_KEYS, KNOWN_OUTCOMES, Outcome
from generator.audit.validate.tariffrules import as_written, blank

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


def registration_findings(quality: Quality, file: str) -> list[Finding]:
    """No target registered: the default (quality: acceptance alone) applies, and a warning says so, since the seeds
    ask each protocol to state what it reproduces (003)."""
    if quality.reproduction is not None:
        return []
    return [make_finding(
        "reproduction-not-registered", Severity.WARNING, file, "the protocol registers no reproduction target "
        f"(quality.reproduction is absent): the default, {DEFAULT_REPRODUCTION}, applies: each run is judged by "
        "acceptance alone, and nothing checks how far a configuration's warm runs agree with one another",
        field="/quality/reproduction", recomputed=DEFAULT_REPRODUCTION,
        rule="the protocol states what is to be reproduced across the warm runs: identical outputs, a bounded "
             f"deviation of the metric, or acceptable quality; absent, {DEFAULT_REPRODUCTION} applies",
        fix='register "reproduction": {"target": "identical"}, {"target": "bounded", "bound": <largest spread>} or '
            '{"target": "quality"} in protocol.json\'s quality before the runs of the next campaign; a target chosen '
            "after the runs is no registration")]
