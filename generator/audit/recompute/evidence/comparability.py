"""Comparability of variants: only the declared variable changes; every registered attempt is present."""

from __future__ import annotations

from collections import Counter

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.protocol import ExperimentSpec
from generator.audit.load.inputs.rows import GRID_COLUMNS, GridRow
from generator.audit.recompute.evidence import rentaldevice
from generator.audit.recompute.quality import seeds

E = Severity.ERROR
# Columns that must be identical across an experiment, except the declared variable.
SHARED_COLUMNS = (
    "corpus_revision", "model_revision", "tokenizer_revision", "seed", "precision", "batch", "context",
    "gpu_model", "gpu_count", "device", "driver_version", "python_version", "torch_version", "runtime_version",
)
REVISION_COLUMNS = ("corpus_revision", "model_revision", "tokenizer_revision")
# Protocol `fixed` keys checked against each row.
FIXED_COLUMNS = ("corpus_revision", "model_revision", "tokenizer_revision", "precision", "batch", "context", "seed",
                 "gpu_count")


def _row_findings(exp: ExperimentSpec, row: GridRow, line: int, grid_file: str) -> list[Finding]:
    """One row against its experiment: the variant's value, the fixed values, the warm-up and the package."""
    out: list[Finding] = []
    variable = exp.variable
    registered = {v.id: v.value for v in exp.variants}.get(row.variant_id or "")
    claimed = row.cell(variable) if variable in GRID_COLUMNS else None  # input_order: no grid column
    if variable == "gpu_count" and row.device == "cpu":
        claimed = None  # a test run on the CPU uses no GPU: its processes stand in for the lot's GPUs
    if registered is not None and claimed is not None and str(claimed) != str(registered):
        out.append(make_finding("variant-value-mismatch", E, grid_file,
                                f"variant {row.variant_id!r} is registered with {variable} {registered!r}, this "
                                f"row ran {variable} {claimed!r}", line=line, field=variable, claimed=claimed,
                                recomputed=registered, rule="a variant's rows all apply its registered value",
                                fix="keep the failed attempt under its own variant; a changed setting is a new "
                                    "declared variant"))
    for column in FIXED_COLUMNS:
        fixed = exp.fixed.setting(column)
        if column == variable or fixed is None or (column == "seed" and exp.seeds) \
                or (column == "gpu_count" and row.device == "cpu") \
                or (column == "corpus_revision" and row.corpus_revision in exp.further_corpora):
            continue  # the rows of common seeds run each listed seed (seeds.row_findings), and of further corpora each
        if row.cell(column) is not None and str(row.cell(column)) != str(fixed):
            out.append(make_finding("fixed-value-mismatch", E, grid_file,
                                    f"{column} {row.cell(column)!r} differs from the value held fixed, {fixed!r}",
                                    line=line, field=column, claimed=row.cell(column), recomputed=fixed,
                                    rule="protocol experiments[].fixed", fix=_fixed_fix(exp, column, row.cell(column))))
    out.extend(_warmup_findings(exp, row, line, grid_file))
    out.extend(seeds.row_findings(exp, row, line, grid_file))
    rental = exp.rental
    for column in ("duration_days", "lots"):
        rented = rental.duration_days if column == "duration_days" else rental.lots
        if column == "duration_days" and len(rental.periods) > 1 and row.cell(column) in rental.periods:
            continue  # a row of consecutive packages names the one it ran in
        if row.cell(column) is not None and row.cell(column) != rented:
            out.append(make_finding("package-mismatch", E, grid_file,
                                    f"{column} {row.cell(column)} differs from the rented package ({rented})",
                                    line=line, field=column, claimed=row.cell(column), recomputed=rented,
                                    rule="protocol experiments[].rental",
                                    fix="report the package actually committed, as registered"))
    return out


def _fixed_fix(exp: ExperimentSpec, column: str, ran: object) -> str:
    """What to do about a row that ran another value than the one held fixed: for a revision, what to register."""
    if column in REVISION_COLUMNS:
        return (f"the runs used the {column.removesuffix('_revision')} whose revision is {ran}: if those are the files "
                f"meant, register {ran} as fixed.{column} of experiment {exp.id!r} in a new protocol before its runs "
                "(`gpu-audit campaign run` checks the registered revisions against the files and names the value), "
                "and run it; a registration corrected after the runs registers nothing")
    return "only the declared variable may change; study other changes in a separate experiment"


def _warmup_findings(exp: ExperimentSpec, row: GridRow, line: int, grid_file: str) -> list[Finding]:
    """A warm run applies the registered warm-up; a cold run has none."""
    iterations = exp.warmup.iterations
    if row.phase == "warm" and row.warmup_iterations is not None \
            and row.warmup_iterations != iterations:
        return [make_finding("warmup-mismatch", E, grid_file,
                             f"{row.warmup_iterations} warm-up iterations where the protocol registers "
                             f"{iterations}", line=line, field="warmup_iterations",
                             claimed=row.warmup_iterations, recomputed=iterations,
                             rule="the warm-up rule is identical for all variants",
                             fix="apply the same registered warm-up to every variant")]
    if row.phase == "cold" and row.warmup_iterations not in (None, 0):
        # A cold run is the first pass after loading: warmed up, it is a warm run filed as cold.
        return [make_finding("warmup-mismatch", E, grid_file,
                             f"a cold run with {row.warmup_iterations} warm-up iterations: the cold run is the "
                             "first pass after loading, before any warm-up", line=line, field="warmup_iterations",
                             claimed=row.warmup_iterations, recomputed=0,
                             rule="loading, first pass and warmed-up passes are kept apart",
                             fix="write 0 for a cold run, or file a warmed-up run as warm")]
    return []


def _shared_findings(exp: ExperimentSpec, rows: list[tuple[GridRow, int]], grid_file: str) -> list[Finding]:
    """Columns other than the declared variable hold one value across the experiment: the majority's."""
    out: list[Finding] = []
    variable = exp.variable
    for column in SHARED_COLUMNS:
        if column == variable or (column == "seed" and exp.seeds) or (column == "corpus_revision"
                                                                       and exp.further_corpora):
            continue  # common seeds and several corpora differ between runs on purpose; otherwise not comparable
        seen = Counter(str(r.cell(column)) for r, _ in rows if r.cell(column) is not None)
        if len(seen) <= 1:
            continue
        majority = seen.most_common(1)[0][0]
        for row, line in rows:
            if row.cell(column) is not None and str(row.cell(column)) != majority:
                out.append(make_finding("not-comparable", E, grid_file,
                                        f"{column} {row.cell(column)!r} differs from the rest of experiment "
                                        f"{exp.id!r} ({majority!r})", line=line, field=column,
                                        claimed=row.cell(column), recomputed=majority,
                                        rule=f"declared variable: {variable}",
                                        fix="only the declared variable may differ between the runs of an "
                                            "experiment"))
    return out


def check_experiment(exp: ExperimentSpec, rows: list[tuple[GridRow, int]], grid_file: str) -> list[Finding]:
    """Rules across the rows of one experiment (rows already restricted to it, with their lines)."""
    out = [f for row, line in rows for f in _row_findings(exp, row, line, grid_file)]
    out.extend(_shared_findings(exp, rows, grid_file))
    out.extend(_completeness(exp, rows, grid_file))
    out.extend(seeds.count_findings(exp, rows, grid_file))
    return out


def _completeness(exp: ExperimentSpec, rows: list[tuple[GridRow, int]], grid_file: str) -> list[Finding]:
    """Every registered attempt has its row, and no row is beyond the registered attempts."""
    out: list[Finding] = []
    present = {r.key()[1:] for r, _ in rows}
    registered = {"warm": exp.attempts("warm"), "cold": exp.attempts("cold")}  # under every common seed
    under = f", across the {len(exp.seeds)} common seeds" if exp.seeds else ""
    for variant in exp.variants:
        if variant.resume is not None:
            continue  # a resume variant's attempts are the resumptions it made, not registered in advance
        for phase, count in registered.items():
            for i in range(1, count + 1):
                if (variant.id, phase, i) not in present:
                    # No row to point at: the finding names the configuration whose attempt is missing.
                    out.append(make_finding("missing-attempt", E, grid_file,
                                            f"no row for {exp.id}/{variant.id} {phase} run {i} "
                                            f"({count} {phase} runs registered{under})", field="run_index",
                                            recomputed=i, rule=f"{count} {phase} runs per variant{under}",
                                            fix="keep one row per attempted run, failures included; a failed run "
                                                "is kept, not deleted or replaced",
                                            configurations=(f"{exp.id}/{variant.id}",)))
    for row, line in rows:
        limit = registered.get(row.phase or "", 0)
        if row.run_index is not None and row.run_index > limit:
            out.append(make_finding("unregistered-attempt", E, grid_file,
                                    f"{row.phase} run {row.run_index} exceeds the {limit} registered runs{under}",
                                    line=line, field="run_index", claimed=row.run_index, recomputed=limit,
                                    rule=f"{limit} {row.phase} runs per variant{under}",
                                    fix="report extra attempts as a new experiment; never rerun to replace a "
                                        "result"))
    return out


def rented_gpu_findings(row: GridRow, line: int, grid_file: str, rental_gpu: str,
                        model_name: str | None) -> list[Finding]:
    """gpu_model must be the GPU the experiment rents: fast hardware must not be billed at a cheaper lot's price.

    The rented GPU is named by its tariff id (`rtx-4090`) and, when priced, the catalogue's model name
    (`GeForce RTX 4090`); the runtime writes vendor names (`NVIDIA GeForce RTX 4090`). Vendor and brand words set
    aside, gpu_model names that model whole (`NVIDIA GeForce RTX 4090 D` is another GPU: rentaldevice).
    """
    claimed = row.gpu_model
    if not isinstance(claimed, str) or not claimed.strip() or rentaldevice.is_rented_model(claimed, rental_gpu,
                                                                                           model_name):
        return []
    return [make_finding("gpu-not-rented", E, grid_file,
                         f"gpu_model {claimed!r} is not the rented GPU {rental_gpu!r}"
                         f"{f' ({model_name})' if model_name else ''}: the package and its price are for another GPU",
                         line=line, field="gpu_model", claimed=claimed, recomputed=rental_gpu,
                         rule="protocol experiments[].rental.gpu is the GPU measured",
                         fix="run the experiment on the GPU the protocol rents, or register the rental of the GPU "
                             "actually used")]
