"""What page 1 shows the reader who pays: each rented package, the campaign total, idle GPUs, the signer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from generator.audit.load.inputs.protocol import SEED
from generator.audit.recompute.decision.answer import REASON_REFS
from generator.audit.recompute.decision.model import Configuration, DecisionDocument, FindingRef, Package
from generator.audit.recompute.times.timing import MIN_FOR_TAIL
from generator.render.view.fields import environment_value, measured_gpu


@dataclass(frozen=True)
class Signature:
    """How the note is signed, for its words: `certified` by build with a key (subject and certificate
    fingerprint), `unsigned` (build --unsigned), or `render` (gpu-audit render signs nothing)."""

    kind: str
    subject: str = ""
    fingerprint: str = ""
    organisation: str = ""  # the subject's O (else CN), the words page 1 names the signer by


RENDERED = Signature("render")


@dataclass(frozen=True)
class RentedPackage:
    """A rented package (one per rental: the experiments run in it and their configurations share it, so it
    counts once), with the GPUs its lots hold, the most any of its runs used and the configurations run on it.
    `experiment` is the first experiment run in it; `rental` the shared rental's id (None for an experiment's own)."""

    experiment: str
    package: Package
    gpus_paid: int | None
    gpus_used: int | None
    idle_gpus: int
    configurations: list[str]
    rental: str | None = None
    experiments: tuple[str, ...] = ()
    gpu_name: str = ""  # the GPU's model name (gpu_name below), never the rental's slug where a name is known


@dataclass(frozen=True)
class CampaignTotal:
    """The campaign's committed spend in cents (None when a package has no price: `unpriced` names them)."""

    usd_minor: int | None
    unpriced: list[str]
    packages: int


@dataclass(frozen=True)
class TailGroup:
    """Configurations whose warm series has `observations` runs, fewer than the `needed` for a tail percentile."""

    observations: int
    configurations: list[str]
    needed: int


@dataclass(frozen=True)
class Reason:
    """Why a configuration is not admissible: a code, and the figures the template words it with."""

    code: str
    completed: int = 0
    rejected: int = 0
    count: int = 0
    refs: tuple[FindingRef, ...] = ()
    more: int = 0
    subgroup: str = ""  # for "subgroup": the planned subgroup that fails
    seeds: tuple[object, ...] = ()  # the seeds a `seeds` or `seed-variants` reason names, the corpora a `corpora`


@dataclass(frozen=True)
class Exclusion:
    """A configuration that is not admissible, with its reasons."""

    configuration: str
    reasons: list[Reason]


def gpu_name(config: Configuration, package: Package | None = None) -> str:
    """The GPU a configuration ran on as its model is named, from the data only: the tariffs' model_name, else
    the name the measurement saw (gpu_name), else the grid's gpu_model; the rental's slug ("h200") only when no
    file names the model."""
    measured = measured_gpu(config.measurement)[0] if config.measurement else None
    for name in (package.model_name if package else None, measured, environment_value(config, "gpu_model")):
        if isinstance(name, str) and name.strip():
            return name
    return config.gpu


def gpu_names(decision: DecisionDocument) -> dict[str, str]:
    """Each configuration's GPU model name (gpu_name), by configuration id."""
    package = {e.id: e.package for e in decision.experiments}
    return {c.id: gpu_name(c, package.get(c.experiment_id)) for c in decision.configurations}


def packages(decision: DecisionDocument) -> list[RentedPackage]:
    """One entry per rented package (one per rental: an experiment's own, or a shared one that several ran in;
    their configurations share it, so it counts once), with the GPUs the lots hold and the most any of its runs
    used."""
    configs = decision.configurations
    rentals: dict[str, list[str]] = {}
    for e in decision.experiments:
        rentals.setdefault(f"rental {e.package.rental}" if e.package.rental is not None else f"experiment {e.id}",
                           []).append(e.id)
    rows = []
    for ids in rentals.values():
        p = next(e.package for e in decision.experiments if e.id == ids[0])
        run = [c for c in configs if c.experiment_id in ids]
        counted = [n for n in (environment_value(c, "gpu_count") for c in run) if isinstance(n, int)]
        paid = p.gpus if isinstance(p.gpus, int) else None
        most_used = max(counted) if counted else None
        rows.append(RentedPackage(ids[0], p, paid, most_used,
                                  paid - most_used if paid is not None and most_used is not None
                                  and most_used < paid else 0,
                                  [c.id for c in run], p.rental, tuple(ids),
                                  gpu_name(run[0], p) if run else p.model_name or p.gpu))
    return rows


def campaign_total(rows: list[RentedPackage]) -> CampaignTotal:
    """The campaign's committed spend: the sum of its packages' totals, each counted once; undefined (with the
    packages that lack a price) when any package has no price."""
    unpriced = [e for r in rows if r.package.total_usd_minor is None for e in r.experiments or (r.experiment,)]
    if unpriced or not rows:
        return CampaignTotal(None, unpriced, len(rows))
    return CampaignTotal(sum(int(r.package.total_usd_minor or 0) for r in rows), [], len(rows))


def tail_groups(configs: Sequence[Configuration]) -> list[TailGroup]:
    """The configurations whose warm series is too short for a tail percentile, grouped by their run count, so
    that the note names each configuration the statement is about."""
    groups: dict[int, list[str]] = {}
    for c in configs:
        warm = c.timing.warm
        if warm.p95 is None:
            groups.setdefault(int(warm.successes), []).append(c.id)
    return [TailGroup(n, ids, MIN_FOR_TAIL) for n, ids in sorted(groups.items())]


def exclusions(configs: Sequence[Configuration]) -> list[Exclusion]:
    """Why each configuration is not admissible, as codes with their figures (the template words them)."""
    out = []
    for c in configs:
        if c.admissible:
            continue
        reasons: list[Reason] = []
        if not c.accepted and not (c.completed > 0 and c.accepted_runs == c.completed):
            reasons.append(Reason("not-accepted", completed=c.completed, rejected=c.completed - c.accepted_runs))
        for g in c.subgroups or ():
            if g.accepted_runs < g.completed_runs:
                reasons.append(Reason("subgroup", completed=g.completed_runs,
                                      rejected=g.completed_runs - g.accepted_runs, subgroup=g.id))
        reasons.extend(_seed_reasons(c, configs))
        missed = tuple(k.name for k in c.corpora or () if not k.accepted)
        if missed:
            reasons.append(Reason("corpora", count=len(missed), seeds=missed))
        if c.out_of_memory:
            reasons.append(Reason("out-of-memory", count=c.out_of_memory))
        if _excluding_failures(c) > c.out_of_memory:  # any other failed attempt: issue 31 item 5
            reasons.append(Reason("failed", count=_excluding_failures(c) - c.out_of_memory))
        if c.fits_window is False:
            reasons.append(Reason("window"))
        if c.fits_deadline is False:
            reasons.append(Reason("deadline"))
        errors = c.evidence.errors if c.evidence is not None else ()
        if errors:
            reasons.append(Reason("errors", count=len(errors), refs=errors[:REASON_REFS],
                                  more=max(0, len(errors) - REASON_REFS)))
        out.append(Exclusion(c.id, reasons))
    return out


def _excluding_failures(c: Configuration) -> int:
    """The failed attempts that exclude a configuration: all of them but, in a resume variant, the interrupted
    attempts it resumed (each counted as a failure of its balance, not as one that excludes it)."""
    return c.failures - (c.resume.resumed if c.resume is not None else 0)


def _own_fault(c: Configuration) -> bool:
    """Whether a configuration is not admissible on its own runs and evidence (not only for its sibling seeds)."""
    return not c.accepted or _excluding_failures(c) > 0 or not c.fits_window or not c.fits_deadline \
        or bool(c.evidence is not None and c.evidence.errors)


def _seed_reasons(c: Configuration, configs: Sequence[Configuration]) -> list[Reason]:
    """A common seed not accepted; with seed declared, the experiment's other seeds that are not admissible."""
    missed = tuple(s.seed for s in c.seeds or () if not s.accepted)
    out = [Reason("seeds", count=len(missed), seeds=missed)] if missed else []
    if c.variable == SEED:
        others = tuple(o.value for o in configs
                       if o.experiment_id == c.experiment_id and o.id != c.id and _own_fault(o))
        if others:
            out.append(Reason("seed-variants", count=len(others), seeds=others))
    return out


def unpriced_gpus(decision: DecisionDocument) -> list[str]:
    """The GPUs of the admissible configurations that have no published price (why the question has no answer),
    by their model names (gpu_name)."""
    names = gpu_names(decision)
    return sorted({names[u.configuration] for u in decision.decision.unpriced if u.configuration in names})
