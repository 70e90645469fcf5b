"""The decision: per configuration verdicts, the ranking by committed budget, and every recomputation finding."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import replace
from decimal import Decimal

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.load.inputs.protocol import ExperimentSpec, Protocol, Variant
from generator.audit.load.inputs.rows import GridRow, TariffRow
from generator.audit.load.readers.grid import row_outcome
from generator.audit.recompute.decision.model import (
    Comparison,
    Configuration,
    CostPerResult,
    EnvironmentCells,
    Experiment,
    Measurement,
    Package,
    Recomputation,
    ResumeBalance,
    Timing,
    Window,
)
from generator.audit.recompute.decision.runcells import SubgroupSummary
from generator.audit.recompute.decision.tally import Tally, tally
from generator.audit.recompute.evidence import (
    attempts,
    comparability,
    lotdevices,
    measured_config,
    memory,
    provenance,
    rentaldevice,
    resumes,
    samework,
)
from generator.audit.recompute.money import cost
from generator.audit.recompute.money.package import Row, price_package
from generator.audit.recompute.quality import corpora, seeds, subgroups
from generator.audit.recompute.quality.acceptance import (
    Acceptance,
    claim_findings,
    completed_findings,
    failed_run_findings,
)
from generator.audit.recompute.times import runtimes, timing
from generator.audit.validate.tariffrules import ManifestProof
from generator.core import instants

E, W = Severity.ERROR, Severity.WARNING


class _Context:
    """Inputs of one recomputation, gathered once."""

    def __init__(self, protocol: Protocol, grid_file: str, rows: list[GridRow], lines: list[int],
                 acceptances: dict[int, Acceptance], measurements: dict[str, MeasurementDoc],
                 tariffs: dict[tuple[str, int], cost.Tariff], tariffs_file: str,
                 proof: ManifestProof | None = None) -> None:
        self.protocol = protocol
        self.grid_file = grid_file
        self.rows = rows
        self.lines = lines
        self.acceptances = acceptances
        self.measurements = measurements
        self.tariffs = tariffs
        self.tariffs_file = tariffs_file
        self.proof = proof
        self.window_hours: Decimal | None = None  # exact, set by _window (the Window shows them rounded)
        self.findings: list[Finding] = []
        self.measurements_checked: set[str] = set()


def _window(ctx: _Context) -> Window:
    p = ctx.protocol
    w = p.window
    ctx.window_hours = cost.window_hours(w.start, w.end, w.timezone)
    cover = cost.coverage(ctx.window_hours)
    start = instants.parse_local(w.start, w.timezone)
    end = instants.parse_local(w.end, w.timezone)
    deadline = instants.deadline_instant(p.deadline, w.timezone)
    registered = instants.parse_utc(p.registered_at)
    if registered is not None and registered >= start:
        ctx.findings.append(make_finding(
            "registered-after-start", E, "protocol.json", "the protocol was registered after the campaign window "
            "started", field="/registered_at", claimed=p.registered_at, recomputed=w.start,
            rule="the rule is fixed before the first measurement",
            fix="register the protocol before the runs; a rule written afterwards needs a new independent evaluation"))
    if cover.extra_30_day_periods:
        ctx.findings.append(make_finding(
            "window-exceeds-packages", W, "protocol.json",
            f"the window lasts {cover.hours} h, longer than the 30-day package (720 h): "
            f"{cover.extra_30_day_periods} extra 30-day period(s) needed",
            field="/window", claimed=cover.hours, rule="no automatic extension",
            fix="budget the extra periods explicitly or shorten the programme"))
    return Window(start=w.start, end=w.end, timezone=w.timezone, deadline=p.deadline,
                  ends_before_deadline=end <= deadline, hours=cover.hours, packages=cover.packages,
                  smallest_covering_days=cover.smallest_covering_days,
                  extra_30_day_periods=cover.extra_30_day_periods)


# Columns of the grid that the measurement's environment observed too.
ENVIRONMENT_SEEN = ("driver_version", "python_version", "torch_version", "runtime_version")


def _measurement_checked_once(ctx: _Context, doc_file: str) -> bool:
    """True the first time a measurement file is met: its own findings are made once, not once per grid row."""
    first = doc_file not in ctx.measurements_checked
    ctx.measurements_checked.add(doc_file)
    return first


def _environment_findings(ctx: _Context, row: GridRow, line: int, doc: MeasurementDoc,
                          doc_file: str) -> None:
    """The row's GPU count, software and GPU model against what the measurement observed."""
    env = doc.environment
    used = env.devices_used
    if used is None:
        used = env.visible_device_count
    if row.gpu_count is not None and used is not None and row.gpu_count != used:
        ctx.findings.append(make_finding(
            "gpu-count-not-seen", E, ctx.grid_file, f"gpu_count claims {row.gpu_count} GPUs, {doc_file} saw "
            f"the program use {used} ({env.visible_device_count} visible)", line=line, field="gpu_count",
            claimed=row.gpu_count, recomputed=used, rule="a package with two GPUs does not mean the program used "
            "both", fix="report the number of GPUs actually used"))
    if row.gpu_count is None and row.cell("gpu_count") is None and used is not None:
        ctx.findings.append(make_finding(
            "gpu-count-not-seen", E, ctx.grid_file, f"gpu_count is empty where {doc_file} saw the program use "
            f"{used} GPU(s)", line=line, field="gpu_count", claimed="", recomputed=used,
            rule="the number of GPUs actually used is recorded", fix=f"write gpu_count {used}, as measured"))
    _blank_environment(ctx, row, line, env.written, env.gpu_name, doc_file)
    for column in ENVIRONMENT_SEEN:
        seen = env.written.get(column)
        if row.cell(column) is not None and seen is not None and str(row.cell(column)) != str(seen):
            ctx.findings.append(make_finding(
                "environment-not-seen", E, ctx.grid_file,
                f"{column} {row.cell(column)!r} differs from what {doc_file} observed, {seen!r}", line=line,
                field=column, claimed=row.cell(column), recomputed=seen,
                rule="the environment actually observed, not copied from an offer or another run",
                fix=f"write the {column} the measurement observed, or measure this run again"))
    if row.gpu_model and env.gpu_name and row.gpu_model != env.gpu_name:
        ctx.findings.append(make_finding(
            "gpu-model-not-seen", E, ctx.grid_file, f"gpu_model {row.gpu_model!r} differs from the GPU the "
            f"runtime reported in {doc_file}, {env.gpu_name!r}", line=line, field="gpu_model",
            claimed=row.gpu_model, recomputed=env.gpu_name,
            rule="the hardware actually used, not an offer", fix="copy the name the runtime reports"))


def _blank_environment(ctx: _Context, row: GridRow, line: int, written: Mapping[str, object], gpu_name: str | None,
                       doc_file: str) -> None:
    """A blank software or GPU cell where the measurement observed a value (an empty driver is driver-not-recorded)."""
    for column in ENVIRONMENT_SEEN[1:]:
        seen = written.get(column)
        if row.cell(column) is None and seen is not None:
            ctx.findings.append(make_finding(
                "environment-not-seen", E, ctx.grid_file, f"{column} is empty where {doc_file} observed {seen}",
                line=line, field=column, claimed="", recomputed=str(seen),
                rule="the environment actually observed is recorded, not left out",
                fix=f"write the {column} the measurement observed"))
    if row.cell("gpu_model") is None and gpu_name:
        ctx.findings.append(make_finding(
            "gpu-model-not-seen", E, ctx.grid_file, f"gpu_model is empty where the runtime reported {gpu_name} in "
            f"{doc_file}", line=line, field="gpu_model", claimed="", recomputed=gpu_name,
            rule="the hardware actually used is recorded", fix="copy the name the runtime reports"))


def _measurement_findings(ctx: _Context, row: GridRow, line: int, exp: ExperimentSpec) -> None:
    """The row against its variant's measurement file (whose own findings are made once)."""
    variant = next((v for v in exp.variants if v.id == row.variant_id), None)
    doc_file = variant.measurement if variant else None
    doc = ctx.measurements.get(doc_file) if doc_file else None
    if doc is None or variant is None or doc_file is None:
        return
    if _measurement_checked_once(ctx, doc_file):
        ctx.findings.extend(measured_config.file_findings(doc, doc_file, exp, variant))
    ctx.findings.extend(measured_config.row_findings(row, line, ctx.grid_file, doc, doc_file, bool(exp.seeds)))
    _, _, phase_name, run_index = row.key()  # a row of a configuration has its whole key
    phase = memory.phase_for_row(doc, phase_name, run_index)
    if phase is not None:
        ctx.findings.extend(memory.agreement_findings(row, line, ctx.grid_file, phase, doc_file))
        ctx.findings.extend(memory.outcome_findings(row, line, ctx.grid_file, phase, doc_file))
    _environment_findings(ctx, row, line, doc, doc_file)


def _row_checks(ctx: _Context, index: int, row: GridRow, line: int, exp: ExperimentSpec | None) -> None:
    acc = ctx.acceptances.get(index)
    if acc is not None and acc.corpus_accepted and row_outcome(row.notes).failed:
        # A failed run is never accepted, whatever its file holds (a complete file copied from another run).
        acc = ctx.acceptances[index] = replace(acc, corpus_accepted=False)
    ctx.findings.extend(failed_run_findings(row, line, ctx.grid_file))
    if acc is not None:
        ctx.findings.extend(claim_findings(row, line, acc, ctx.protocol, ctx.grid_file))
        ctx.findings.extend(completed_findings(row, line, acc, ctx.grid_file))
    ctx.findings.extend(memory.invariant_findings(row, ctx.grid_file, line, ""))
    ctx.findings.extend(provenance.driver_row_findings(row, line, ctx.grid_file))
    if exp is None:
        return
    ctx.findings.extend(rentaldevice.row_findings(row, line, ctx.grid_file))
    model_name = rentaldevice.rented_model_name(ctx.tariffs.values(), exp.rental.gpu)
    ctx.findings.extend(comparability.rented_gpu_findings(row, line, ctx.grid_file, exp.rental.gpu, model_name))
    _measurement_findings(ctx, row, line, exp)




def _environment(first: GridRow) -> EnvironmentCells:
    """The grid's environment columns, as the configuration's first row gives them."""
    return EnvironmentCells(first.gpu_model, first.gpu_count, first.device, first.driver_version, first.python_version,
                            first.torch_version, first.runtime_version, first.precision, first.batch, first.context)


def _reasons(t: Tally, package: Package, window: Window, groups: tuple[SubgroupSummary, ...],
             series: tuple[str | None, ...]) -> tuple[str, ...]:
    """Why the configuration is not admissible on its own evidence (the gate adds its error findings)."""
    reasons = []
    if not (t.completed > 0 and t.accepted_runs == t.completed):
        reasons.append("not accepted: " + ("no completed run" if t.completed == 0 else
                                           f"{t.completed - t.accepted_runs} of {t.completed} completed runs not "
                                           "accepted"))
    for g in groups:
        if g.accepted_runs < g.completed_runs:
            reasons.append(f"subgroup {g.id} fails its rule in {g.completed_runs - g.accepted_runs} of "
                           f"{g.completed_runs} completed runs")
    reasons.extend(r for r in series if r is not None)  # a seed or a corpus not accepted
    if t.oom:
        reasons.append(f"not memory-feasible: {t.oom} out-of-memory failure(s) kept as failure observations")
    failed = attempts.failure_reason(t.failed)
    if failed:
        reasons.append(failed)
    if not package.covers_window:
        reasons.append("the package does not cover the campaign window")
    if not window.ends_before_deadline:
        reasons.append("the campaign window ends after the deadline")
    return tuple(reasons)


def _measurement(ctx: _Context, variant: Variant) -> Measurement | None:
    doc_file = variant.measurement
    measured = ctx.measurements.get(doc_file) if doc_file else None
    if measured is None or doc_file is None:
        return None
    return Measurement(file=doc_file, environment=measured.environment.written,
                       configuration=measured.configuration.written, synthetic_data=bool(measured.synthetic_data),
                       phases=[p.written for p in measured.phases], devices=lotdevices.device_uses(measured))


def _configuration(ctx: _Context, exp: ExperimentSpec, variant: Variant, rows: list[Row], package: Package,
                   window: Window, plan: resumes.ResumePlan | None = None) -> Configuration:
    """One configuration: its rows tallied, its claimed corpus count checked, its verdicts and cost (a resume
    variant's rows are its resumptions and the attempts of the variant it resumes)."""
    t = tally(rows, exp, plan, ctx.acceptances)
    groups = subgroups.summarise(ctx.protocol.quality, t.subgroups)
    distinct = len(t.accepted_corpora)
    ctx.findings.extend(corpora.claimed_count_findings([r for r in rows if r[1].variant_id == variant.id], distinct,
                                                       ctx.grid_file))
    per_seed = seeds.seed_runs(exp, rows, ctx.acceptances, plan)
    per_corpus = corpora.corpus_runs(ctx.protocol, exp, rows, ctx.acceptances, plan)
    series = (seeds.seed_reason(per_seed), corpora.corpus_reason(per_corpus))
    accepted = t.completed > 0 and t.accepted_runs == t.completed and series == (None, None)
    total = package.total_usd_minor
    return Configuration(
        id=f"{exp.id}/{variant.id}", experiment_id=exp.id, variant_id=variant.id,
        variable=exp.variable, value=variant.value, gpu=exp.rental.gpu,
        environment=_environment(rows[0][1] if rows else GridRow.of({})), measurement=_measurement(ctx, variant),
        runs=tuple(t.runs),
        timing=Timing(warm=timing.phase_stats(t.durations["warm"], t.failures["warm"]),
                      cold=timing.phase_stats(t.durations["cold"], t.failures["cold"])),
        attempts=len(rows), completed=t.completed, failures=t.failures["cold"] + t.failures["warm"],
        out_of_memory=t.oom, accepted_runs=t.accepted_runs, accepted_unique_corpora=distinct, accepted=accepted,
        memory_feasible=t.oom == 0, fits_window=package.covers_window, fits_deadline=window.ends_before_deadline,
        admissible=accepted and not t.failed and package.covers_window and window.ends_before_deadline,
        reasons=_reasons(t, package, window, groups, series), committed_budget_usd_minor=total,
        price_status=package.price_status, duration_days=package.duration_days,
        cost_per_accepted_result=(cost.per_result(total, distinct) if total is not None else
                                  CostPerResult(None, "no tariff for this GPU and duration")),
        subgroups=groups or None, seeds=per_seed, corpora=per_corpus,
        test_run=rentaldevice.is_test_run(ctx.measurements.get(variant.measurement or ""), (r for _, r, _ in rows))
        or None,
        resume=None if plan is None else ResumeBalance(plan.resume.of, plan.resume.setting, len(plan.interrupted),
                                                       plan.interrupted_seconds))


def _comparisons(exp_configs: list[Configuration]) -> tuple[Comparison, ...]:
    return tuple(Comparison.of(a.id, b.id, attempts.separation(a.timing.warm, b.timing.warm))
                 for i, a in enumerate(exp_configs) for b in exp_configs[i + 1:])


def _rows_by_experiment(rows: list[GridRow], lines: list[int]) -> dict[str, list[Row]]:
    by_exp: dict[str, list[Row]] = defaultdict(list)
    for index, (row, line) in enumerate(zip(rows, lines, strict=False)):
        # A row without a readable key (a missing column, a cell that is no number) is already a finding.
        if isinstance(row.experiment_id, str) and isinstance(row.variant_id, str) \
                and row.phase in ("cold", "warm") and isinstance(row.run_index, int):
            by_exp[row.experiment_id].append((index, row, line))
    return by_exp


def _base(variant: Variant) -> tuple[str, ...]:
    """The variant whose attempts a resume variant's balance holds beside its resumptions."""
    return (variant.resume.of,) if variant.resume is not None else ()


def _experiment(ctx: _Context, exp: ExperimentSpec, exp_rows: list[Row],
                window: Window) -> tuple[Experiment, list[Configuration]]:
    """One experiment: its rows checked, its package priced, its configurations recomputed and compared."""
    for index, row, line in exp_rows:
        _row_checks(ctx, index, row, line, exp)
    ctx.findings.extend(comparability.check_experiment(exp, [(r, ln) for _, r, ln in exp_rows], ctx.grid_file))
    ctx.findings.extend(corpora.count_findings(ctx.protocol, exp, [(r, ln) for _, r, ln in exp_rows], ctx.grid_file))
    rented, priced = price_package(exp, exp_rows, window, ctx.tariffs, ctx.grid_file, ctx.tariffs_file,
                                   ctx.proof, ctx.window_hours,
                                   ctx.protocol.rental_field(exp) if exp.rental.id is not None else None)
    # What the package says of the price (no tariff, an illustrative one) and of its length concerns the
    # configurations of every experiment run in it: said once, with the first of them (its rows' findings apart).
    sharing = ctx.protocol.sharing(exp)
    ids = tuple(f"{e.id}/{v.id}" for e in sharing for v in e.variants)
    once = [f for f in priced if f.line is not None or sharing[0].id == exp.id]
    ctx.findings.extend(replace(f, configurations=ids) if (f.file == ctx.tariffs_file and f.line is None)
                        or f.code in ("package-longer-than-needed", "package-does-not-cover-window") else f
                        for f in once)
    plans, found = resumes.plans(exp, exp_rows, ctx.measurements, ctx.grid_file)
    ctx.findings.extend(found)
    configs = [_configuration(ctx, exp, v, [t for t in exp_rows if t[1].variant_id in (v.id, *_base(v))], rented,
                              window, plans.get(v.id)) for v in exp.variants]
    description = exp.description if exp.description is not None else ""
    experiment = Experiment(id=exp.id, variable=exp.variable, description=description,
                            fixed=exp.fixed.written, runs_per_variant=exp.runs_per_variant,
                            cold_runs_per_variant=exp.cold_runs_per_variant, warmup=exp.warmup,
                            order=exp.order, package=rented, comparisons=_comparisons(configs), seeds=exp.seeds)
    return experiment, configs


def recompute(protocol: Protocol, grid_file: str, rows: list[GridRow], lines: list[int],
              acceptances: dict[int, Acceptance], measurements: dict[str, MeasurementDoc],
              tariff_rows: list[TariffRow], tariffs_file: str, proof: ManifestProof | None = None
              ) -> tuple[Recomputation, list[Finding]]:
    """Recompute everything the decision rests on. Pure: tables and documents in, records and findings out."""
    ctx = _Context(protocol, grid_file, rows, lines, acceptances, measurements,
                   cost.tariffs_from_rows(tariff_rows), tariffs_file, proof)
    window = _window(ctx)
    resumed = {v.measurement for exp in protocol.experiments for v in exp.variants if v.resume is not None}
    for file, doc in sorted(measurements.items()):
        ctx.findings.extend(memory.check_measurement(doc, file, resumptions=file in resumed))
        ctx.findings.extend(lotdevices.check_devices(doc, file))
    ctx.findings.extend(runtimes.run_time_findings(protocol, measurements, grid_file, rows, lines))
    ctx.findings.extend(attempts.series_findings(protocol, "protocol.json"))
    ctx.findings.extend(seeds.protocol_findings(protocol, "protocol.json"))
    ctx.findings.extend(provenance.measurement_findings(protocol, measurements))
    ctx.findings.extend(rentaldevice.device_findings(protocol, measurements, ctx.tariffs.values()))
    ctx.findings.extend(samework.same_work_findings(protocol, rows, grid_file, measurements))
    ctx.findings.extend(measured_config.input_order_findings(protocol, measurements))
    by_exp = _rows_by_experiment(rows, lines)
    configs: list[Configuration] = []
    experiments: list[Experiment] = []
    for exp in protocol.experiments:
        variants = {v.id for v in exp.variants}
        experiment, exp_configs = _experiment(ctx, exp, [t for t in by_exp.get(exp.id, [])
                                                         if t[1].variant_id in variants], window)
        experiments.append(experiment)
        configs.extend(exp_configs)
    # The decision itself is the gate's (recompute.decision.gate), once every finding is known and attributed.
    return Recomputation(window=window, experiments=tuple(experiments), configurations=tuple(configs)), ctx.findings
