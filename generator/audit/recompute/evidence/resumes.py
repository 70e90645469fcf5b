"""Resumes (003 'Wiederholen'): a resume setting is a variant of its own, its resumptions and their time its own."""

from __future__ import annotations

from dataclasses import dataclass, field

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.load.inputs.protocol import ExperimentSpec, Resume
from generator.audit.load.inputs.rows import GridRow
from generator.audit.load.readers.grid import Outcome, row_outcome
from generator.audit.recompute.evidence import memory
from generator.audit.recompute.times.runphases import parse_utc, seconds

Key = tuple[str, str, int]  # an attempt of the experiment: variant, phase, run index
Row = tuple[int, GridRow, int]  # (index in the grid, row, file line), as generator.audit.recompute.money.package's
E, W = Severity.ERROR, Severity.WARNING
RULE = ("a resume setting is a variant of its own: each resumed attempt names the interrupted attempt it resumes "
        "(resumed=<variant>/<phase>/<run_index>), and its time and attempts count in that variant's balance, never in "
        "the variant it resumes")


@dataclass
class ResumePlan:
    """One resume variant: the interrupted attempts its resumptions resume, and for each resumption that completed
    the corpus, the measured time of the interrupted attempts it continues (None when one of them is undated)."""

    variant: str
    resume: Resume
    interrupted: set[Key] = field(default_factory=set)
    added: dict[int, float | None] = field(default_factory=dict)  # grid row index -> seconds added

    @property
    def interrupted_seconds(self) -> float | None:
        """The interrupted attempts' time counted in the resumed durations; None when one is not measured."""
        times = list(self.added.values())
        return None if any(t is None for t in times) else round(sum(t for t in times if t is not None), 6)


def through(plan: ResumePlan | None, index: int, outcome: Outcome) -> bool:
    """A completed run of a configuration: one that went through (no outcome=, or ok), or in a resume variant a
    resumption that completed an interrupted attempt it may resume (a stray resumed outcome is neither)."""
    return outcome.completed_run or (plan is not None and index in plan.added)


def duration(plan: ResumePlan | None, index: int, elapsed: float) -> float:
    """A completed run's duration: a resumption's with the measured time of the attempts it continues added."""
    return round(float(elapsed) + ((plan.added.get(index) or 0.0) if plan is not None else 0.0), 6)


def parse_target(text: str | None) -> Key | None:
    """`b8/warm/3` as (variant, phase, run index); None when it is no such name."""
    parts = (text or "").split("/")
    if len(parts) != 3 or parts[1] not in ("cold", "warm") or not parts[2].isdigit():
        return None
    return parts[0], parts[1], int(parts[2])


def _key(row: GridRow) -> Key:
    return str(row.variant_id), str(row.phase), int(row.run_index or 0)


def _problem(row: GridRow, target: Key | None, resume: Resume, by_key: dict[Key, Row]) -> str | None:
    """Why a row of a resume variant, on its own, does not resume an interrupted attempt it may resume; None when it
    may (whether it resumes one resumed already, or a resumption that loops, is `plans`' to say)."""
    outcome = row_outcome(row.notes)
    said = outcome.resumed
    if target is None:
        return ("names no resumed=<variant>/<phase>/<run_index>: every attempt of a resume variant resumes one"
                if said is None else f"names resumed={said!r}, which is no <variant>/<phase>/<run_index>")
    name = "/".join(map(str, target))
    if not (outcome.failed or outcome.status == "resumed"):
        return (f"names resumed={name} but is written outcome={outcome.status}: a resumption is outcome=resumed "
                "once it completed the corpus, or keeps the failure that interrupted it in turn")
    if target == _key(row):
        return f"resumes {name}, itself: its own failure is a failure of {row.variant_id}, never resumed by itself"
    if target[0] not in (resume.of, row.variant_id):
        return f"resumes {name}, an attempt of neither {resume.of} nor {row.variant_id}"
    if target not in by_key:
        return f"resumes {name}, which has no row in the grid"
    resumed = by_key[target][1]
    if not row_outcome(resumed.notes).failed:
        return f"resumes {name}, which was not interrupted (its notes give no outcome=failed, oom or aborted)"
    if target[1] != row.phase:
        return f"resumes {name}, a {target[1]} attempt, as a {row.phase} one"
    for column, mine, theirs in (("seed", row.seed, resumed.seed),
                                 ("corpus", row.corpus_revision, resumed.corpus_revision)):
        if mine != theirs:
            return f"runs {column} {mine}, where {name}, the attempt it resumes, ran {column} {theirs}"
    return None


def _loops(first: Key, own: Key, links: dict[Key, Key], of: str) -> bool:
    """Whether a resumption's chain (what it resumes, what that resumed...) fails to go back to an attempt of `of`:
    it names itself again, or an attempt that resumes nothing it may resume."""
    key, seen = first, {own}
    while key[0] != of:
        if key in seen or key not in links:
            return True
        seen.add(key)
        key = links[key]
    return False


def _interrupted_s(exp: ExperimentSpec, key: Key, measurements: dict[str, MeasurementDoc]) -> float | None:
    """How long an interrupted attempt ran before it stopped, from its measured phase's times."""
    variant = next((v for v in exp.variants if v.id == key[0]), None)
    doc = measurements.get(variant.measurement) if variant is not None and variant.measurement else None
    phase = memory.phase_for_row(doc, key[1], key[2]) if doc is not None else None
    start, end = (parse_utc(phase.started_at), parse_utc(phase.ended_at)) if phase is not None else (None, None)
    return seconds(start, end) if start is not None and end is not None and start <= end else None


def _chain_s(exp: ExperimentSpec, first: Key, links: dict[Key, Key],
             measurements: dict[str, MeasurementDoc]) -> float | None:
    """The time of an interrupted attempt and of the interrupted resumptions before it, back to the first try."""
    total, key, seen = 0.0, first, set()
    while key not in seen:
        seen.add(key)
        part = _interrupted_s(exp, key, measurements)
        if part is None:
            return None
        total += part
        if key not in links:
            return total
        key = links[key]
    return total


def _undeclared(row: GridRow, line: int, grid_file: str) -> Finding:
    return make_finding("resume-not-declared", E, grid_file,
                        f"{row.variant_id} attempt {row.phase} {row.run_index} is a resumed attempt, but variant "
                        f"{row.variant_id!r} declares no resume setting: a resumption counted in the variant whose "
                        "run failed replaces the failure", line=line, field="notes",
                        claimed=row_outcome(row.notes).status, rule=RULE,
                        fix="keep the interrupted attempt as it ended, and register the resume setting as a variant "
                            "of its own (variants[].resume) whose rows are the resumptions")


def plans(exp: ExperimentSpec, rows: list[Row], measurements: dict[str, MeasurementDoc],
          grid_file: str) -> tuple[dict[str, ResumePlan], list[Finding]]:
    """Each resume variant's resumptions checked and planned for its balance; a resumption elsewhere is an error."""
    by_key = {_key(r): (i, r, ln) for i, r, ln in rows}
    resumes = {v.id: v.resume for v in exp.variants if v.resume is not None}
    found: dict[str, ResumePlan] = {v: ResumePlan(v, r) for v, r in resumes.items()}
    out: list[Finding] = []
    checked: list[tuple[int, GridRow, int, Key | None, str | None]] = []
    links: dict[Key, Key] = {}  # a resumption that was interrupted in turn -> what it resumed
    for index, row, line in sorted(rows, key=lambda r: r[2]):
        outcome = row_outcome(row.notes)
        resume = resumes.get(str(row.variant_id))
        if resume is None:
            if outcome.status == "resumed" or outcome.resumed is not None:
                out.append(_undeclared(row, line, grid_file))
            continue
        target = parse_target(outcome.resumed)
        problem = _problem(row, target, resume, by_key)
        checked.append((index, row, line, target, problem))
        if problem is None and target is not None and outcome.failed:
            links[_key(row)] = target
    claimed: dict[Key, int] = {}
    completed: list[tuple[int, int, Key, str]] = []
    for index, row, line, target, problem in checked:
        resume = resumes[str(row.variant_id)]
        if problem is None and target is not None:
            name = "/".join(map(str, target))
            if _loops(target, _key(row), links, resume.of):
                problem = (f"resumes {name}, a resumption whose chain does not go back to an interrupted attempt of "
                           f"{resume.of}: a resumption names an attempt before it, never itself or one that "
                           "resumes it")
            elif target in claimed:
                problem = f"resumes {name}, which the attempt on line {claimed[target]} resumes already"
        if problem is not None or target is None:
            out.append(make_finding("resume-target-invalid", E, grid_file,
                                    f"attempt {row.phase} {row.run_index} of resume variant {row.variant_id} "
                                    f"{problem}", line=line, field="notes", claimed=row_outcome(row.notes).resumed,
                                    rule=RULE,
                                    fix=f"name the interrupted attempt of {resume.of} this attempt resumes, as "
                                        f"resumed={resume.of}/<phase>/<run_index>, once, under its seed and corpus, "
                                        "with outcome=resumed once the corpus is completed"))
            continue
        claimed[target] = line
        found[str(row.variant_id)].interrupted.add(target)
        if row_outcome(row.notes).status == "resumed":
            completed.append((index, line, target, str(row.variant_id)))
    for index, line, target, variant in completed:
        plan = found[variant]
        plan.added[index] = _chain_s(exp, target, links, measurements)
        if plan.added[index] is None:
            out.append(make_finding(
                "resume-time-unmeasured", W, grid_file,
                f"the attempt this resumption continues ({'/'.join(map(str, target))}) has no measured start and "
                "end: its time until the interruption is not counted, and the resumed duration holds only the "
                "resumption", line=line, field="elapsed_seconds", rule=RULE,
                fix="measure the runs with a runner that dates every phase, the failed ones included"))
    return found, out
