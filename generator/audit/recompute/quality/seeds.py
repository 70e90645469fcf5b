"""Several seeds of a stochastic protocol kept apart: each row's seed listed, each seed's runs, acceptance and time."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.protocol import SEED, ExperimentSpec, Protocol
from generator.audit.load.inputs.rows import GridRow
from generator.audit.load.readers.grid import row_outcome
from generator.audit.recompute.decision.model import Configuration, SeedRuns, Timing
from generator.audit.recompute.evidence import resumes
from generator.audit.recompute.money.package import Row
from generator.audit.recompute.quality.acceptance import Acceptance
from generator.audit.recompute.times import timing

E = Severity.ERROR
RULE = ("a stochastic protocol runs every variant under the same common seeds and keeps their runs apart; the "
        "decision needs every seed")


def _listed(seeds: Sequence[int]) -> str:
    return ", ".join(str(s) for s in seeds)


def protocol_findings(protocol: Protocol, file: str) -> list[Finding]:
    """An announced seed (fixed.seed) beside the common seeds is one of them."""
    out = []
    for i, exp in enumerate(protocol.experiments):
        fixed = exp.fixed.seed
        if exp.seeds and fixed is not None and fixed not in exp.seeds:
            out.append(make_finding(
                "seed-not-listed", E, file, f"experiment {exp.id!r} announces seed {fixed} in fixed, which is none "
                f"of its common seeds ({_listed(exp.seeds)})", field=f"/experiments/{i}/fixed/seed", claimed=fixed,
                recomputed=list(exp.seeds), rule=RULE,
                fix="announce one of the common seeds in fixed.seed, or leave it null; every seed run is listed in "
                    "seeds"))
    return out


def row_findings(exp: ExperimentSpec, row: GridRow, line: int, grid_file: str) -> list[Finding]:
    """A row of an experiment with common seeds ran one of them."""
    if not exp.seeds or row.seed is None or row.seed in exp.seeds:
        return []
    return [make_finding(
        "seed-not-listed", E, grid_file, f"seed {row.seed} is none of the common seeds experiment {exp.id!r} lists "
        f"({_listed(exp.seeds)})", line=line, field="seed", claimed=row.seed, recomputed=list(exp.seeds), rule=RULE,
        fix="a run under another seed belongs to a protocol that lists it before the runs; write the seed the run "
            "actually used")]


def count_findings(exp: ExperimentSpec, rows: Sequence[tuple[GridRow, int]], grid_file: str) -> list[Finding]:
    """Every variant has its registered runs under each common seed (the run indexes alone do not show it)."""
    if not exp.seeds:
        return []
    counted = Counter((r.variant_id, r.phase, r.seed) for r, _ in rows)
    out = []
    for variant in exp.variants:
        if variant.resume is not None:
            continue  # a resume variant's rows are resumptions, not a series of its own
        corpora = 1 + len(exp.further_corpora)  # each seed's runs are made on every corpus of the work
        for phase, per_seed in (("warm", exp.runs_per_variant * corpora),
                                ("cold", exp.cold_runs_per_variant * corpora)):
            for seed in exp.seeds:
                n = counted[(variant.id, phase, seed)]
                if n >= per_seed:
                    continue
                out.append(make_finding(
                    "seed-runs-missing", E, grid_file, f"{exp.id}/{variant.id} has {n} {phase} run(s) under seed "
                    f"{seed}, where {per_seed} are registered under each of its common seeds ({_listed(exp.seeds)})",
                    field="seed", claimed=n, recomputed=per_seed, rule=RULE,
                    fix="keep every run of every listed seed, failures included, with the seed it ran in the seed "
                        "column; a seed with fewer runs cannot be compared with the others",
                    configurations=(f"{exp.id}/{variant.id}",)))
    return out


def seed_runs(exp: ExperimentSpec, rows: Sequence[Row], acceptances: Mapping[int, Acceptance],
              plan: resumes.ResumePlan | None = None) -> tuple[SeedRuns, ...] | None:
    """Each common seed's runs of one configuration, counted, accepted and timed apart (None without seeds); a
    resume variant's completed resumptions (`plan`) count as the configuration's completed runs do."""
    if not exp.seeds:
        return None
    by_seed: dict[int | None, list[Row]] = defaultdict(list)
    for item in sorted(rows, key=lambda r: r[1].key()[2:]):
        by_seed[item[1].seed].append(item)
    return tuple(_one_seed(seed, by_seed.get(seed, []), acceptances, plan) for seed in exp.seeds)


def _one_seed(seed: int, rows: list[Row], acceptances: Mapping[int, Acceptance],
              plan: resumes.ResumePlan | None) -> SeedRuns:
    attempts, completed, failures, accepted, timed = balance(rows, acceptances, plan)
    return SeedRuns(seed=seed, attempts=attempts, completed=completed, failures=failures, accepted_runs=accepted,
                    accepted=completed > 0 and accepted == completed, timing=timed)


def balance(rows: Sequence[Row], acceptances: Mapping[int, Acceptance],
            plan: resumes.ResumePlan | None = None) -> tuple[int, int, int, int, Timing]:
    """A series of runs (one seed's, one corpus's): attempts, completed, failed and accepted runs, and timing;
    completed runs as the configuration counts them (resumptions included, timed with the interrupted time)."""
    durations: dict[str, list[float]] = {"cold": [], "warm": []}
    failures = {"cold": 0, "warm": 0}
    completed = accepted = 0
    for index, row, _ in rows:
        outcome, phase = row_outcome(row.notes), str(row.phase)
        if outcome.failed:
            failures[phase] += 1
        elif resumes.through(plan, index, outcome):
            completed += 1
            if row.elapsed_seconds is not None:
                durations[phase].append(resumes.duration(plan, index, row.elapsed_seconds))
            acc = acceptances.get(index)
            accepted += acc is not None and acc.corpus_accepted
    return (len(rows), completed, failures["cold"] + failures["warm"], accepted,
            Timing(warm=timing.phase_stats(durations["warm"], failures["warm"]),
                   cold=timing.phase_stats(durations["cold"], failures["cold"])))


def seed_reason(runs: Sequence[SeedRuns] | None) -> str | None:
    """Why a configuration is not accepted under every common seed; None when it is (or lists none)."""
    missed = [s for s in runs or () if not s.accepted]
    if not missed:
        return None
    said = "; ".join(f"seed {s.seed}: " + ("no completed run" if s.completed == 0 else
                                           f"{s.completed - s.accepted_runs} of {s.completed} completed runs not "
                                           "accepted") for s in missed)
    return f"not accepted under every seed ({said})"


def every_seed(configs: Sequence[Configuration]) -> list[Configuration]:
    """With seed as the declared variable, a configuration is admissible only when every seed of its experiment
    is: a lucky seed is no answer."""
    by_experiment: dict[str, list[Configuration]] = defaultdict(list)
    for c in configs:
        if c.variable == SEED:
            by_experiment[c.experiment_id].append(c)
    out = []
    for c in configs:
        others = [o for o in by_experiment.get(c.experiment_id, []) if o.id != c.id and not o.admissible]
        if c.variable == SEED and others:
            said = ", ".join(f"seed {o.value} ({o.id})" for o in others)
            c = replace(c, admissible=False, reasons=(*c.reasons, f"not admissible under every seed: {said} is not; "
                                                                  "the decision needs every seed"))
        out.append(c)
    return out
