"""The decision: per configuration verdicts, the ranking by committed budget, and every recomputation finding."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from generator.audit.findings import Finding, Severity
from generator.audit.readers.grid import row_outcome
from generator.audit.recompute import comparability, cost, measured_config, memory, runtimes, timing
from generator.audit.recompute.acceptance import Acceptance, claim_findings, completed_findings, failed_run_findings

E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFO


def _f(code: str, severity: Severity, file: str, message: str, *, line: int | None = None, field: str | None = None,
       claimed: Any = None, recomputed: Any = None, rule: str | None = None, fix: str | None = None) -> Finding:
    return Finding(code=code, severity=severity, file=file, line=line, field=field, value=claimed, claimed=claimed,
                   recomputed=recomputed, rule=rule, fix=fix, message=message)


class _Context:
    """Inputs of one recomputation, gathered once."""

    def __init__(self, protocol: dict[str, Any], grid_file: str, rows: list[dict[str, Any]], lines: list[int],
                 acceptances: dict[int, Acceptance], measurements: dict[str, dict[str, Any]],
                 tariffs: dict[tuple[str, int], cost.Tariff], tariffs_file: str) -> None:
        self.protocol = protocol
        self.grid_file = grid_file
        self.rows = rows
        self.lines = lines
        self.acceptances = acceptances
        self.measurements = measurements
        self.tariffs = tariffs
        self.tariffs_file = tariffs_file
        self.findings: list[Finding] = []
        self.measurements_checked: set[str] = set()


def _covers(window: dict[str, Any], days: int) -> bool:
    """Whether a package of `days` covers the window's hours."""
    return Decimal(window["hours"]) <= days * 24


def _window(ctx: _Context) -> dict[str, Any]:
    p = ctx.protocol
    w = p["window"]
    hours = cost.window_hours(w["start"], w["end"], w["timezone"])
    cover = cost.covering_packages(hours)
    start = cost.parse_local(w["start"], w["timezone"])
    end = cost.parse_local(w["end"], w["timezone"])
    deadline = cost.parse_local(p["deadline"], w["timezone"])
    registered = datetime.fromisoformat(p["registered_at"].replace("Z", "+00:00"))
    if registered.tzinfo is not None and registered >= start:
        ctx.findings.append(_f("registered-after-start", E, "protocol.json", "the protocol was registered after the "
                               "campaign window started", field="/registered_at", claimed=p["registered_at"],
                               recomputed=w["start"], rule="the rule is fixed before the first measurement",
                               fix="register the protocol before the runs; a rule written afterwards needs a new "
                                   "independent evaluation"))
    if cover["extra_30_day_periods"]:
        ctx.findings.append(_f("window-exceeds-packages", W, "protocol.json",
                               f"the window lasts {cover['hours']} h, longer than the 30-day package (720 h): "
                               f"{cover['extra_30_day_periods']} extra 30-day period(s) needed",
                               field="/window", claimed=cover["hours"], rule="no automatic extension",
                               fix="budget the extra periods explicitly or shorten the programme"))
    return {"start": w["start"], "end": w["end"], "timezone": w["timezone"], "deadline": p["deadline"],
            "ends_before_deadline": end <= deadline, **cover}


# Columns of the grid that the measurement's environment observed too.
ENVIRONMENT_SEEN = ("driver_version", "python_version", "torch_version", "runtime_version")


def _measurement_checked_once(ctx: _Context, doc_file: str) -> bool:
    """True the first time a measurement file is met: its own findings are made once, not once per grid row."""
    first = doc_file not in ctx.measurements_checked
    ctx.measurements_checked.add(doc_file)
    return first


def _row_checks(ctx: _Context, index: int, row: dict[str, Any], line: int, exp: dict[str, Any] | None) -> None:
    acc = ctx.acceptances.get(index)
    if acc is not None and acc.corpus_accepted and row_outcome(row.get("notes")).failed:
        # A failed run is never accepted, whatever its file holds (a complete file copied from another run).
        acc = ctx.acceptances[index] = replace(acc, corpus_accepted=False)
    ctx.findings.extend(failed_run_findings(row, line, ctx.grid_file))
    if acc is not None:
        ctx.findings.extend(claim_findings(row, line, acc, ctx.protocol, ctx.grid_file))
        ctx.findings.extend(completed_findings(row, line, acc, ctx.grid_file))
    ctx.findings.extend(memory.invariant_findings(row, ctx.grid_file, line, ""))
    if exp is None:
        return
    tariff = ctx.tariffs.get((exp["rental"]["gpu"], exp["rental"]["duration_days"]))
    ctx.findings.extend(comparability.rented_gpu_findings(row, line, ctx.grid_file, exp["rental"]["gpu"],
                                                          tariff.model_name if tariff else None))
    variant = next((v for v in exp["variants"] if v["id"] == row["variant_id"]), None)
    doc_file = variant.get("measurement") if variant else None
    doc = ctx.measurements.get(doc_file) if doc_file else None
    if doc is None or variant is None or doc_file is None:
        return
    if _measurement_checked_once(ctx, doc_file):
        ctx.findings.extend(measured_config.file_findings(doc, doc_file, exp, variant))
    ctx.findings.extend(measured_config.row_findings(row, line, ctx.grid_file, doc, doc_file))
    phase = memory.phase_for_row(doc, row["phase"], row["run_index"])
    if phase is not None:
        ctx.findings.extend(memory.agreement_findings(row, line, ctx.grid_file, phase, doc_file))
        ctx.findings.extend(memory.outcome_findings(row, line, ctx.grid_file, phase, doc_file))
    env = doc["environment"]
    used = env.get("devices_used")
    if used is None:
        used = env.get("visible_device_count")
    if row.get("gpu_count") is not None and used is not None and row["gpu_count"] != used:
        ctx.findings.append(_f("gpu-count-not-seen", E, ctx.grid_file,
                               f"gpu_count claims {row['gpu_count']} GPUs, {doc_file} saw the program use {used} "
                               f"({env.get('visible_device_count')} visible)", line=line, field="gpu_count",
                               claimed=row["gpu_count"], recomputed=used,
                               rule="a package with two GPUs does not mean the program used both",
                               fix="report the number of GPUs actually used"))
    for column in ENVIRONMENT_SEEN:
        seen = env.get(column)
        if row.get(column) is not None and seen is not None and str(row[column]) != str(seen):
            ctx.findings.append(_f("environment-not-seen", E, ctx.grid_file,
                                   f"{column} {row[column]!r} differs from what {doc_file} observed, {seen!r}",
                                   line=line, field=column, claimed=row[column], recomputed=seen,
                                   rule="the environment actually observed, not copied from an offer or another run",
                                   fix=f"write the {column} the measurement observed, or measure this run again"))
    if row.get("gpu_model") and env.get("gpu_name") and row["gpu_model"] != env["gpu_name"]:
        ctx.findings.append(_f("gpu-model-not-seen", E, ctx.grid_file,
                               f"gpu_model {row['gpu_model']!r} differs from the GPU the runtime reported in "
                               f"{doc_file}, {env['gpu_name']!r}", line=line, field="gpu_model",
                               claimed=row["gpu_model"], recomputed=env["gpu_name"],
                               rule="the hardware actually used, not an offer", fix="copy the name the runtime reports"))


def _unverifiable_totals(ctx: _Context, rental: dict[str, Any],
                         rows: list[tuple[int, dict[str, Any], int]]) -> list[Finding]:
    """A claimed package total that no tariff can check: a budget nobody can verify must not pass silently."""
    return [_f("package-total-unverifiable", E, ctx.grid_file,
               f"package_total_usd_minor claims {row['package_total_usd_minor']}, but no tariff prices "
               f"{rental['gpu']} over {rental['duration_days']} days: the total cannot be checked", line=line,
               field="package_total_usd_minor", claimed=row["package_total_usd_minor"], recomputed=None,
               rule="the total is price per lot x lots from a published tariff; gpu-audit never invents a price",
               fix=f"leave package_total_usd_minor empty, or add the provider's price for {rental['gpu']} "
                   f"({rental['duration_days']} days) to the tariffs file")
            for _, row, line in rows if row.get("package_total_usd_minor") is not None]


def _package(ctx: _Context, exp: dict[str, Any], rows: list[tuple[int, dict[str, Any], int]],
             window: dict[str, Any]) -> dict[str, Any]:
    rental = exp["rental"]
    tariff = ctx.tariffs.get((rental["gpu"], rental["duration_days"]))
    package: dict[str, Any] = {**rental, "covers_window": _covers(window, rental["duration_days"])}
    if not package["covers_window"]:
        ctx.findings.append(_f("package-does-not-cover-window", E, "protocol.json",
                               f"the {rental['duration_days']}-day package ({rental['duration_days'] * 24} h) does not "
                               f"cover the {window['hours']} h window", field=f"/experiments/{exp['id']}/rental",
                               claimed=rental["duration_days"], recomputed=window["smallest_covering_days"],
                               rule="the package must cover the whole campaign window",
                               fix="rent a package that covers the window, or budget the extra periods"))
    for _, row, line in rows:
        days = row.get("duration_days")
        if days is not None and not _covers(window, days):
            ctx.findings.append(_f("duration-does-not-cover-window", E, ctx.grid_file,
                                   f"a {days}-day package does not cover the {window['hours']} h window", line=line,
                                   field="duration_days", claimed=days, recomputed=window["smallest_covering_days"],
                                   rule="3, 7 or 30 days covering the window", fix="choose a package covering the window"))
    if tariff is None:
        ctx.findings.append(_f("no-tariff", W, ctx.tariffs_file,
                               f"no tariff for {rental['gpu']} over {rental['duration_days']} days: the cost is undefined",
                               field="gpu", claimed=rental["gpu"], rule="prices come from the tariffs file only",
                               fix="add the provider's published price, or accept an undefined cost"))
        package.update(total_usd_minor=None, gpus_per_lot=None, price_per_lot_usd_minor=None, price_status=None,
                       model_name=None, snapshot_date=None)
        ctx.findings.extend(_unverifiable_totals(ctx, rental, rows))
        return package
    total = cost.package_total(tariff, rental["lots"])
    rented = tariff.gpus_per_lot * rental["lots"]
    for _, row, line in rows:
        used = row.get("gpu_count")
        if isinstance(used, int) and used > rented:
            ctx.findings.append(_f("gpus-beyond-rental", E, ctx.grid_file,
                                   f"gpu_count claims {used} GPUs; the package rents {rental['lots']} lot(s) of "
                                   f"{tariff.gpus_per_lot} = {rented} GPU(s)", line=line, field="gpu_count",
                                   claimed=used, recomputed=rented,
                                   rule="the program runs on the GPUs of the lots billed",
                                   fix="rent and register the lots the runs used, or report the GPUs actually used"))
    package.update(total_usd_minor=total, gpus_per_lot=tariff.gpus_per_lot, gpus=rented,
                   price_per_lot_usd_minor=tariff.price_per_lot_usd_minor, price_status=tariff.price_status,
                   model_name=tariff.model_name, snapshot_date=tariff.snapshot_date)
    if tariff.price_status == "illustrative":
        ctx.findings.append(_f("illustrative-price", I, ctx.tariffs_file,
                               f"the price of {tariff.gpu} for {tariff.duration_days} days is illustrative, not published",
                               field="price_status", claimed=tariff.price_per_lot_usd_minor,
                               rule="only published prices commit a budget", fix="check the provider's current offer"))
    for _, row, line in rows:
        claimed = row.get("package_total_usd_minor")
        if claimed is None or claimed == total:
            continue
        hint = ""
        if tariff.gpus_per_lot > 1 and claimed == total * tariff.gpus_per_lot:
            hint = (f": a {tariff.gpu} lot already holds {tariff.gpus_per_lot} GPUs and its price covers them; "
                    "multiplying by the GPU count again counts them twice")
        elif total and claimed % total == 0 and claimed // total > 1:
            hint = f": {claimed // total} x the package; a package is one expense, never summed over repeated rows"
        ctx.findings.append(_f("package-total-mismatch", E, ctx.grid_file,
                               f"package_total_usd_minor claims {claimed}, the tariff gives {total} "
                               f"({tariff.price_per_lot_usd_minor} x {rental['lots']} lots){hint}", line=line,
                               field="package_total_usd_minor", claimed=claimed, recomputed=total,
                               rule="price per lot x lots, in integer cents", fix=f"write {total}"))
    return package


def _configuration(ctx: _Context, exp: dict[str, Any], variant: dict[str, Any],
                   rows: list[tuple[int, dict[str, Any], int]], package: dict[str, Any],
                   window: dict[str, Any]) -> dict[str, Any]:
    runs = []
    durations: dict[str, list[float]] = {"cold": [], "warm": []}
    failures = {"cold": 0, "warm": 0}
    accepted_corpora: set[str] = set()
    accepted_runs = 0
    completed = 0
    oom = 0
    for index, row, line in sorted(rows, key=lambda t: (t[1]["phase"], t[1]["run_index"])):
        outcome = row_outcome(row.get("notes"))
        acc = ctx.acceptances.get(index)
        if outcome.failed:
            failures[row["phase"]] += 1
            oom += outcome.status == "oom"
        else:
            completed += 1
            if row.get("elapsed_seconds") is not None:
                durations[row["phase"]].append(float(row["elapsed_seconds"]))
        if acc is not None and acc.corpus_accepted and not outcome.failed:
            accepted_runs += 1
            accepted_corpora.add(str(row.get("corpus_revision")))
        runs.append({
            "line": line, "phase": row["phase"], "run_index": row["run_index"], "outcome": outcome.status,
            "completed_items": outcome.completed, "elapsed_seconds": row.get("elapsed_seconds"),
            "claimed": {k: row.get(k) for k in ("expected_ids", "observed_ids", "ids_match", "format_valid",
                                                 "quality_metric", "quality_threshold", "quality_tolerance",
                                                 "quality_value", "corpus_accepted")},
            "recomputed": acc.to_dict() if acc else None,
            "memory": {k: row.get(k) for k in memory.ROW_COLUMNS},
            "notes": row.get("notes") or "",
        })
    distinct = len(accepted_corpora)
    for index, row, line in rows:
        claimed = row.get("accepted_unique_corpora")
        if claimed is not None and claimed != distinct:
            hint = (" (repeats of the same corpus were counted: five repeats are not five results)"
                    if claimed > distinct and distinct <= 1 < claimed else "")
            ctx.findings.append(_f("accepted-corpora-mismatch", E, ctx.grid_file,
                                   f"accepted_unique_corpora claims {claimed}, the evidence gives {distinct} distinct "
                                   f"accepted corpora{hint}", line=line, field="accepted_unique_corpora",
                                   claimed=claimed, recomputed=distinct,
                                   rule="distinct corpus revisions with an accepted run; never summed over repeats",
                                   fix=f"write {distinct}"))
    warm = timing.phase_stats(durations["warm"], failures["warm"])
    cold = timing.phase_stats(durations["cold"], failures["cold"])
    accepted = completed > 0 and accepted_runs == completed
    feasible = oom == 0
    total = package.get("total_usd_minor")
    reasons = []
    if not accepted:
        reasons.append("not accepted: " + ("no completed run" if completed == 0 else
                                           f"{completed - accepted_runs} of {completed} completed runs not accepted"))
    if not feasible:
        reasons.append(f"not memory-feasible: {oom} out-of-memory failure(s) kept as failure observations")
    if not package["covers_window"]:
        reasons.append("the package does not cover the campaign window")
    if not window["ends_before_deadline"]:
        reasons.append("the campaign window ends after the deadline")
    doc_file = variant.get("measurement")
    measured = ctx.measurements.get(doc_file) if doc_file else None
    first = rows[0][1] if rows else {}
    return {
        "id": f"{exp['id']}/{variant['id']}",
        "experiment_id": exp["id"], "variant_id": variant["id"], "variable": exp["variable"],
        "value": variant["value"], "gpu": exp["rental"]["gpu"],
        "environment": {k: first.get(k) for k in ("gpu_model", "gpu_count", "device", "driver_version",
                                                   "python_version", "torch_version", "runtime_version",
                                                   "precision", "batch", "context")},
        "measurement": None if measured is None else {
            "file": doc_file, "environment": measured["environment"], "configuration": measured["configuration"],
            "synthetic_data": bool(measured.get("synthetic_data")), "phases": measured["phases"]},
        "runs": runs,
        "timing": {"warm": warm, "cold": cold},
        "attempts": len(rows), "completed": completed, "failures": failures["cold"] + failures["warm"],
        "out_of_memory": oom, "accepted_runs": accepted_runs, "accepted_unique_corpora": distinct,
        "accepted": accepted, "memory_feasible": feasible, "fits_window": package["covers_window"],
        "fits_deadline": window["ends_before_deadline"],
        "admissible": accepted and feasible and package["covers_window"] and window["ends_before_deadline"],
        "reasons": reasons,
        "committed_budget_usd_minor": total, "price_status": package.get("price_status"),
        "duration_days": package["duration_days"],
        "cost_per_accepted_result": (cost.per_result(total, distinct) if total is not None else
                                     {"usd_minor": None, "undefined_reason": "no tariff for this GPU and duration"}),
    }


def _comparisons(exp_configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for i, a in enumerate(exp_configs):
        for b in exp_configs[i + 1:]:
            sep = timing.separation(a["timing"]["warm"], b["timing"]["warm"])
            out.append({"configurations": [a["id"], b["id"]], **sep})
    return out


def recompute(protocol: dict[str, Any], grid_file: str, rows: list[dict[str, Any]], lines: list[int],
              acceptances: dict[int, Acceptance], measurements: dict[str, dict[str, Any]],
              tariff_rows: list[dict[str, Any]], tariffs_file: str) -> tuple[dict[str, Any], list[Finding]]:
    """Recompute everything the decision rests on. Pure: tables and documents in, results and findings out."""
    ctx = _Context(protocol, grid_file, rows, lines, acceptances, measurements,
                   cost.tariffs_from_rows(tariff_rows), tariffs_file)
    window = _window(ctx)
    for file, doc in sorted(measurements.items()):
        ctx.findings.extend(memory.check_measurement(doc, file))
    ctx.findings.extend(runtimes.run_time_findings(protocol, measurements, grid_file, rows, lines))
    by_exp: dict[str, list[tuple[int, dict[str, Any], int]]] = defaultdict(list)
    for index, (row, line) in enumerate(zip(rows, lines)):
        # A row without a readable key (a missing column, a cell that is no number) is already a finding.
        if isinstance(row.get("experiment_id"), str) and isinstance(row.get("variant_id"), str) \
                and row.get("phase") in ("cold", "warm") and isinstance(row.get("run_index"), int):
            by_exp[row["experiment_id"]].append((index, row, line))
    configs: list[dict[str, Any]] = []
    experiments = []
    for exp in protocol["experiments"]:
        exp_rows = [t for t in by_exp.get(exp["id"], []) if t[1].get("variant_id") in {v["id"] for v in exp["variants"]}]
        for index, row, line in exp_rows:
            _row_checks(ctx, index, row, line, exp)
        ctx.findings.extend(comparability.check_experiment(exp, [(r, ln) for _, r, ln in exp_rows], grid_file))
        before = len(ctx.findings)
        package = _package(ctx, exp, exp_rows, window)
        # What _package says of the price (no tariff, an illustrative one) concerns this experiment's configurations.
        ids = tuple(f"{exp['id']}/{v['id']}" for v in exp["variants"])
        ctx.findings[before:] = [replace(f, configurations=ids) if f.file == tariffs_file and f.line is None else f
                                 for f in ctx.findings[before:]]
        exp_configs = [_configuration(ctx, exp, v, [t for t in exp_rows if t[1]["variant_id"] == v["id"]], package, window)
                       for v in exp["variants"]]
        configs.extend(exp_configs)
        experiments.append({"id": exp["id"], "variable": exp["variable"], "description": exp.get("description", ""),
                            "fixed": exp["fixed"], "runs_per_variant": exp["runs_per_variant"],
                            "cold_runs_per_variant": exp["cold_runs_per_variant"], "warmup": exp["warmup"],
                            "order": exp.get("order"), "package": package, "comparisons": _comparisons(exp_configs)})
    # The decision itself is the gate's (generator.audit.recompute.gate), once every finding is known and attributed.
    return {"window": window, "experiments": experiments, "configurations": configs}, ctx.findings
