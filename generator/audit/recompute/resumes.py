"""Resumes (003 'Wiederholen'): a resume setting is a variant of its own, its resumptions and their time its own."""

from __future__ import annotations

from dataclasses import dataclass, field

from generator.audit.findings import Finding, Severity, make_finding
from generator.audit.inputs.measurement import MeasurementDoc
from generator.audit.inputs.protocol import ExperimentSpec, Resume
from generator.audit.inputs.rows import GridRow
from generator.audit.readers.grid import row_outcome
from generator.audit.recompute import memory
from generator.audit.recompute.runphases import parse_utc, seconds

Key = tuple[str, str, int]  # an attempt of the experiment: variant, phase, run index
Row = tuple[int, GridRow, int]  # (index in the grid, row, file line), as generator.audit.recompute.package's
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


def parse_target(text: str | None) -> Key | None:
    """`b8/warm/3` as (variant, phase, run index); None when it is no such name."""
    parts = (text or "").split("/")
    if len(parts) != 3 or parts[1] not in ("cold", "warm") or not parts[2].isdigit():
        return None
    return parts[0], parts[1], int(parts[2])


def _key(row: GridRow) -> Key:
    return str(row.variant_id), str(row.phase), int(row.run_index or 0)


def _problem(row: GridRow, target: Key | None, resume: Resume, by_key: dict[Key, Row],
             claimed: dict[Key, int]) -> str | None:
    """Why a row of a resume variant does not resume an interrupted attempt it may resume; None when it does."""
    said = row_outcome(row.notes).resumed
    if target is None:
        return ("names no resumed=<variant>/<phase>/<run_index>: every attempt of a resume variant resumes one"
                if said is None else f"names resumed={said!r}, which is no <variant>/<phase>/<run_index>")
    name = "/".join(map(str, target))
    if target[0] not in (resume.of, row.variant_id):
        return f"resumes {name}, an attempt of neither {resume.of} nor {row.variant_id}"
    if target not in by_key:
        return f"resumes {name}, which has no row in the grid"
    if not row_outcome(by_key[target][1].notes).failed:
        return f"resumes {name}, which was not interrupted (its notes give no outcome=failed, oom or aborted)"
    if target[1] != row.phase:
        return f"resumes {name}, a {target[1]} attempt, as a {row.phase} one"
    if target in claimed:
        return f"resumes {name}, which the attempt on line {claimed[target]} resumes already"
    return None


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
    claimed: dict[Key, int] = {}
    links: dict[Key, Key] = {}  # a resumption that was interrupted in turn -> what it resumed
    completed: list[tuple[int, int, Key, str]] = []
    for index, row, line in sorted(rows, key=lambda r: r[2]):
        outcome = row_outcome(row.notes)
        resume = resumes.get(str(row.variant_id))
        if resume is None:
            if outcome.status == "resumed" or outcome.resumed is not None:
                out.append(_undeclared(row, line, grid_file))
            continue
        target = parse_target(outcome.resumed)
        problem = _problem(row, target, resume, by_key, claimed)
        if problem is not None or target is None:
            out.append(make_finding("resume-target-invalid", E, grid_file,
                                    f"attempt {row.phase} {row.run_index} of resume variant {row.variant_id} "
                                    f"{problem}", line=line, field="notes", claimed=outcome.resumed, rule=RULE,
                                    fix=f"name the interrupted attempt of {resume.of} this attempt resumes, as "
                                        f"resumed={resume.of}/<phase>/<run_index>, once"))
            continue
        claimed[target] = line
        found[str(row.variant_id)].interrupted.add(target)
        if outcome.failed:
            links[_key(row)] = target
        elif outcome.status == "resumed":
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
