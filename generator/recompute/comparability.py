"""Comparability of variants: only the declared variable changes; every registered attempt is present."""

from __future__ import annotations

from collections import Counter
from typing import Any

from generator.findings import Finding, Severity
from generator.readers.grid import row_key

# Columns that must be identical across an experiment, except the declared variable.
SHARED_COLUMNS = (
    "corpus_revision", "model_revision", "tokenizer_revision", "seed", "precision", "batch", "context",
    "gpu_model", "gpu_count", "device", "driver_version", "python_version", "torch_version", "runtime_version",
)
# Protocol `fixed` keys checked against each row.
FIXED_COLUMNS = ("corpus_revision", "model_revision", "tokenizer_revision", "precision", "batch", "context", "seed")


def _f(code: str, file: str, line: int | None, column: str | None, message: str, fix: str, *,
       claimed: Any = None, recomputed: Any = None, rule: str) -> Finding:
    return Finding(code=code, severity=Severity.ERROR, file=file, line=line, field=column, value=claimed,
                   claimed=claimed, recomputed=recomputed, rule=rule, fix=fix, message=message)


def check_experiment(exp: dict[str, Any], rows: list[tuple[dict[str, Any], int]], grid_file: str) -> list[Finding]:
    """Rules across the rows of one experiment (rows already restricted to it, with their lines)."""
    out: list[Finding] = []
    variable = exp["variable"]
    values = {v["id"]: v["value"] for v in exp["variants"]}
    for row, line in rows:
        registered = values.get(row["variant_id"])
        claimed = row.get(variable)
        if registered is not None and claimed is not None and str(claimed) != str(registered):
            out.append(_f("variant-value-mismatch", grid_file, line, variable,
                          f"variant {row['variant_id']!r} is registered with {variable} {registered!r}, this row ran "
                          f"{variable} {claimed!r}",
                          "keep the failed attempt under its own variant; a changed setting is a new declared variant",
                          claimed=claimed, recomputed=registered, rule="a variant's rows all apply its registered value"))
        for column in FIXED_COLUMNS:
            if column == variable or exp["fixed"].get(column) is None:
                continue
            fixed = exp["fixed"][column]
            if row.get(column) is not None and str(row[column]) != str(fixed):
                out.append(_f("fixed-value-mismatch", grid_file, line, column,
                              f"{column} {row[column]!r} differs from the value held fixed, {fixed!r}",
                              "only the declared variable may change; study other changes in a separate experiment",
                              claimed=row[column], recomputed=fixed, rule="protocol experiments[].fixed"))
        if row.get("phase") == "warm" and row.get("warmup_iterations") is not None \
                and row["warmup_iterations"] != exp["warmup"]["iterations"]:
            out.append(_f("warmup-mismatch", grid_file, line, "warmup_iterations",
                          f"{row['warmup_iterations']} warm-up iterations where the protocol registers "
                          f"{exp['warmup']['iterations']}",
                          "apply the same registered warm-up to every variant",
                          claimed=row["warmup_iterations"], recomputed=exp["warmup"]["iterations"],
                          rule="the warm-up rule is identical for all variants"))
        rental = exp["rental"]
        for column in ("duration_days", "lots"):
            if row.get(column) is not None and row[column] != rental[column]:
                out.append(_f("package-mismatch", grid_file, line, column,
                              f"{column} {row[column]} differs from the rented package ({rental[column]})",
                              "report the package actually committed, as registered",
                              claimed=row[column], recomputed=rental[column], rule="protocol experiments[].rental"))
    for column in SHARED_COLUMNS:
        if column == variable:
            continue
        seen = Counter(str(r.get(column)) for r, _ in rows if r.get(column) is not None)
        if len(seen) <= 1:
            continue
        majority = seen.most_common(1)[0][0]
        for row, line in rows:
            if row.get(column) is not None and str(row[column]) != majority:
                out.append(_f("not-comparable", grid_file, line, column,
                              f"{column} {row[column]!r} differs from the rest of experiment {exp['id']!r} ({majority!r})",
                              "only the declared variable may differ between the runs of an experiment",
                              claimed=row[column], recomputed=majority, rule=f"declared variable: {variable}"))
    out.extend(_completeness(exp, rows, grid_file))
    return out


def _completeness(exp: dict[str, Any], rows: list[tuple[dict[str, Any], int]], grid_file: str) -> list[Finding]:
    out: list[Finding] = []
    present = {row_key(r)[1:] for r, _ in rows}
    registered = {"warm": exp["runs_per_variant"], "cold": exp["cold_runs_per_variant"]}
    for variant in exp["variants"]:
        for phase, count in registered.items():
            for i in range(1, count + 1):
                if (variant["id"], phase, i) not in present:
                    out.append(_f("missing-attempt", grid_file, None, "run_index",
                                  f"no row for {exp['id']}/{variant['id']} {phase} run {i} "
                                  f"({count} {phase} runs registered)",
                                  "keep one row per attempted run, failures included; a failed run is kept, "
                                  "not deleted or replaced", recomputed=i, rule=f"{count} {phase} runs per variant"))
    for row, line in rows:
        limit = registered.get(row["phase"], 0)
        if row["run_index"] > limit:
            out.append(_f("unregistered-attempt", grid_file, line, "run_index",
                          f"{row['phase']} run {row['run_index']} exceeds the {limit} registered runs",
                          "report extra attempts as a new experiment; never rerun to replace a result",
                          claimed=row["run_index"], recomputed=limit, rule=f"{limit} {row['phase']} runs per variant"))
    return out
