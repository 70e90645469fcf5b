"""Comparability of variants: only the declared variable changes; every registered attempt is present."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import Any

from generator.audit.findings import Finding, Severity
from generator.audit.readers.grid import row_key

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
        if row.get("phase") == "cold" and row.get("warmup_iterations") not in (None, 0):
            # A cold run is the first pass after loading: warmed up, it is a warm run filed as cold.
            out.append(_f("warmup-mismatch", grid_file, line, "warmup_iterations",
                          f"a cold run with {row['warmup_iterations']} warm-up iterations: the cold run is the first "
                          "pass after loading, before any warm-up",
                          "write 0 for a cold run, or file a warmed-up run as warm",
                          claimed=row["warmup_iterations"], recomputed=0,
                          rule="loading, first pass and warmed-up passes are kept apart"))
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
                    missing = _f("missing-attempt", grid_file, None, "run_index",
                                 f"no row for {exp['id']}/{variant['id']} {phase} run {i} "
                                 f"({count} {phase} runs registered)",
                                 "keep one row per attempted run, failures included; a failed run is kept, "
                                 "not deleted or replaced", recomputed=i, rule=f"{count} {phase} runs per variant")
                    # No row to point at: the finding names the configuration whose attempt is missing.
                    out.append(replace(missing, configurations=(f"{exp['id']}/{variant['id']}",)))
    for row, line in rows:
        limit = registered.get(row["phase"], 0)
        if row["run_index"] > limit:
            out.append(_f("unregistered-attempt", grid_file, line, "run_index",
                          f"{row['phase']} run {row['run_index']} exceeds the {limit} registered runs",
                          "report extra attempts as a new experiment; never rerun to replace a result",
                          claimed=row["run_index"], recomputed=limit, rule=f"{limit} {row['phase']} runs per variant"))
    return out


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9]+", text.lower()) if t]


def rented_gpu_findings(row: dict[str, Any], line: int, grid_file: str, rental_gpu: str,
                        model_name: str | None) -> list[Finding]:
    """gpu_model must be the GPU the experiment rents: fast hardware must not be billed at a cheaper lot's price.

    The rented GPU is named by its tariff id (`rtx-4090`) and, when priced, the catalogue's model name
    (`GeForce RTX 4090`); the runtime writes vendor names (`NVIDIA GeForce RTX 4090`). Every word of either
    name must appear in gpu_model.
    """
    claimed = row.get("gpu_model")
    if not isinstance(claimed, str) or not claimed.strip():
        return []
    seen = "".join(_tokens(claimed))
    names = [n for n in (rental_gpu, model_name) if n and _tokens(n)]
    if not names or any(all(t in seen for t in _tokens(n)) for n in names):
        return []
    return [_f("gpu-not-rented", grid_file, line, "gpu_model",
               f"gpu_model {claimed!r} is not the rented GPU {rental_gpu!r}"
               f"{f' ({model_name})' if model_name else ''}: the package and its price are for another GPU",
               "run the experiment on the GPU the protocol rents, or register the rental of the GPU actually used",
               claimed=claimed, recomputed=rental_gpu, rule="protocol experiments[].rental.gpu is the GPU measured")]
