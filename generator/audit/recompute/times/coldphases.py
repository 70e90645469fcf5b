"""A measurement's cold runs: format 1 holds one cold_forward (cold run 1); format 2 one per cold run (each common
seed's, each corpus's), cold_forward repeat k for cold run k, each after its own fresh process's set-up and inputs."""

from __future__ import annotations

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.measurement import MeasurementDoc, Phase

PER_COLD_RUN = "2"  # the first format version with a cold phase per cold run
# A fresh process's phases up to its cold pass, in order; download, install and compile optional, each once.
PROCESS = ("download", "install", "model_load", "compile", "inputs", "cold_forward")
OPTIONAL = frozenset({"download", "install", "compile"})
_RULE = ("format 2: each cold run's fresh process ([download, install,] model_load, [compile,] inputs, cold_forward "
         "repeat k), cold runs 1, 2, ... in order, then warmup and one warm_forward per repeat")


def per_cold_run(doc: MeasurementDoc) -> bool:
    """Whether the file holds a cold phase per cold run (format 2 and later)."""
    return doc.schema_version == PER_COLD_RUN


def cold_phase(doc: MeasurementDoc, run_index: int) -> Phase | None:
    """The cold_forward describing cold run `run_index`: format 1's only one for run 1, format 2's repeat k."""
    for p in doc.phases:
        if p.phase != "cold_forward":
            continue
        if per_cold_run(doc) and p.repeat == run_index or not per_cold_run(doc) and run_index == 1:
            return p
    return None


def processes(doc: MeasurementDoc) -> list[int]:
    """The process each phase belongs to, by position: in format 2 each cold_forward ends one fresh process (0, 1,
    ...) and the phases after the last are the next; format 1 is one sequence (all 0)."""
    out, current = [], 0
    for p in doc.phases:
        out.append(current)
        if per_cold_run(doc) and p.phase == "cold_forward":
            current += 1
    return out


def _expected(head: list[str], resumptions: bool) -> list[str]:
    """The phase order a format 2 file should follow, given the phases it has (the optional ones where present)."""
    expected: list[str] = []
    segment: list[str] = []
    for name in head:
        segment.append(name)
        if name == "cold_forward":
            expected += [n for n in PROCESS if n not in OPTIONAL or n in segment]
            segment = []
    if resumptions:  # the warm resumptions' process: its set-up and inputs, the warm-up where it has one
        if segment:
            expected += [n for n in PROCESS[:-1] if n not in OPTIONAL or n in segment]
            expected += ["warmup"] if "warmup" in segment else []
    elif expected:
        expected.append("warmup")
    else:  # no cold pass at all: the Lab's whole order
        expected = [n for n in (*PROCESS, "warmup") if n not in OPTIONAL or n in segment]
    return expected


def order_findings(doc: MeasurementDoc, file: str, resumptions: bool) -> list[Finding]:
    """A format 2 file's phases before the warm runs, process by process, and its cold runs numbered 1, 2, ... (a
    resume variant's: the cold runs it resumed, each once, in order)."""
    phases = doc.phases
    head = [p.phase for p in phases if p.phase != "warm_forward"]
    expected = _expected(head, resumptions)
    failed_at = next((i for i, p in enumerate(phases) if p.status == "failed"), None)
    ended_early = failed_at is not None and phases[failed_at].phase != "warm_forward" \
        and not any(p.phase == "warm_forward" for p in phases)
    # a file ended by a failed step is judged on the order it got through, the failed process's set-up included
    got_through = head in (expected[:len(head)], _expected([*head, "cold_forward"], resumptions)[:len(head)])
    out = []
    if head != expected and not (ended_early and got_through):
        out.append(make_finding("phase-order", Severity.ERROR, file, f"phases are {head}, expected {expected} then "
                                "one warm_forward per repeat", field="/phases", claimed=head, recomputed=expected,
                                rule=_RULE, fix="write the phases in the order they ran, each cold run's process "
                                                "whole"))
    cold = [p.repeat for p in phases if p.phase == "cold_forward"]
    numbered = [r for r in cold if isinstance(r, int)]
    if resumptions:
        fine = numbered == cold and numbered == sorted(set(numbered))
    else:
        fine = cold in ([], [None]) or cold == list(range(1, len(cold) + 1))
    if not fine:
        out.append(make_finding("phase-order", Severity.ERROR, file, f"cold_forward repeats are {cold}: each cold "
                                "run's phase is numbered by its run_index, 1, 2, ... in the order the runs were made",
                                field="/phases", claimed=cold, recomputed=list(range(1, len(cold) + 1)), rule=_RULE,
                                fix="number each cold_forward by the cold run it measured; never drop or renumber one"))
    return out
