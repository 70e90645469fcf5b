"""What each attempt of `campaign run` leaves: its grid row (acceptance as `check` recomputes it) and measurement."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from generator import __version__
from generator.core.metrics import compute_metric, defined, quality_rule_holds, reader_name
from generator.core.system.resources import published_tariffs
from generator.core.system.safefiles import write_new_file
from generator.gpu.campaign.campaign_inputs import (
    CampaignConfig,
    CorpusData,
    Plan,
    Settings,
    attempts,
    experiment_rental,
    read_corpus,
    registered_variants,
)
from generator.gpu.models.loading import BatchModel

WARMUP_TEXTS = 64
MEASUREMENT_VERSION = "2"  # a cold phase per cold run (each common seed's, each corpus's), numbered by its repeat
CPU_NOTE = "TEST-ONLY CPU run (--allow-cpu-for-tests): not a GPU measurement, no memory counters"
TEST_NOTE = "TEST RUN (--allow-cpu-for-tests): never evidence of a decision"
MAX_ERROR = 500


def _assess(plan: Plan, corpus: CorpusData, done: list[tuple[str, str]]) -> dict[str, Any]:
    """The acceptance cells exactly as `gpu-audit check` recomputes them from the prediction file, against the
    expected IDs and reference of the corpus the attempt processed (the planned subgroups are the first corpus's)."""
    q = plan.protocol["quality"]
    seen: dict[str, str] = {}
    dup = False
    for ident, label in done:
        dup = dup or ident in seen
        seen[ident] = label
    classes = set(plan.classes)
    format_valid = all(label in classes and ident.strip() == ident and ident and "\n" not in ident
                       for ident, label in done)
    ids_match = not dup and set(seen) == set(corpus.ids)
    cells: dict[str, Any] = {"expected_ids": len(corpus.ids), "observed_ids": len(seen), "ids_match": ids_match,
                             "format_valid": format_valid, "quality_metric": q["metric"],
                             "quality_threshold": q["threshold"], "quality_tolerance": q["tolerance"],
                             "quality_value": None, "corpus_accepted": False}
    if ids_match and format_valid:
        value = defined(compute_metric(q["metric"], [corpus.reference[i] for i in corpus.ids],
                                       [seen[i] for i in corpus.ids], plan.classes))
        if value is None:  # undefined on these labels (Cohen's kappa on one class): no value, not accepted
            return cells
        ok, _ = quality_rule_holds(value, q["threshold"], q["tolerance"], q["direction"], q["reference"]["value"])
        rules = {g["id"]: g for g in q.get("subgroups") or []}
        # a run is accepted only if the whole corpus and every subgroup (the first corpus's) are
        for group in plan.subgroups if corpus is plan.corpora[0] else []:
            rule = rules[group.id]
            members = list(dict.fromkeys(group.ids))
            sub = defined(compute_metric(q["metric"], [plan.reference[i] for i in members],
                                         [seen[i] for i in members], plan.classes))
            held = sub is not None and quality_rule_holds(sub, rule.get("threshold", q["threshold"]),
                                         rule.get("tolerance", q["tolerance"]), q["direction"],
                                         rule.get("reference_value", q["reference"]["value"]))[0]
            ok = ok and held
        cells.update(quality_value=round(value, 6), corpus_accepted=ok)
    return cells


def truncation(plan: Plan, model: BatchModel, context: int) -> dict[str, Any]:
    """The truncation the model applies to the corpus at `context`: how many texts it cuts, overall and per planned
    subgroup; `reported: false` when the model cannot say (an entry point without `cut`)."""
    cut_fn = getattr(model, "cut", None)
    if not callable(cut_fn):
        return {"context": context, "reported": False}
    ids, texts = read_corpus(plan.corpus_path)
    cut = {i for i, c in zip(ids, cut_fn(texts), strict=True) if c}
    return {"context": context, "reported": True, "texts": len(ids), "texts_cut": len(cut),
            "by_subgroup": {g.id: sum(1 for i in set(g.ids) if i in cut) for g in plan.subgroups}}


def truncation_note(record: dict[str, Any]) -> str:
    """The truncation as the grid's notes say it."""
    if not record["reported"]:
        return f"truncation at {record['context']} tokens: not reported by the model"
    groups = ", ".join(f"{k} {v}" for k, v in record["by_subgroup"].items())
    return (f"truncation at {record['context']} tokens: {record['texts_cut']} of {record['texts']} texts cut"
            + (f" ({groups})" if groups else ""))


def csv_cell(value: Any) -> Any:
    """A grid cell as the CSV holds it: empty for None, true or false for a boolean."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def _notes(plan: Plan, config: CampaignConfig, phase: str, row: dict[str, Any], completed: int,
           extra: list[str], resumed: tuple[str, str] | None) -> str:
    """The notes cell: test run, outcome (with the attempt a resumption resumes), what the timer covers, cold or
    warm, and the registered quality rule."""
    q = plan.protocol["quality"]
    parts = []
    if config.device == "cpu":
        parts.append(CPU_NOTE)
    elif config.allow_cpu_for_tests:
        parts.append(TEST_NOTE)
    if row["status"] != "ok":
        kind = "oom" if (row["error"] or "").startswith("out of memory") else "failed"
        error = (row["error"] or "").replace("\n", " ").replace(";", ",")[:MAX_ERROR]
        parts.append(f"outcome={kind}; completed={completed}; error={error} (kept, not replaced by a smaller batch)"
                     + (f"; resumed={resumed[0]}" if resumed else ""))
    elif resumed:
        parts.append(f"outcome=resumed; resumed={resumed[0]}; reason={resumed[1]}")
    parts.append(f"measured by gpu-audit {__version__} campaign run; timer: read corpus, tokenise, transfer, infer, "
                 "labels on the host, between two device synchronisations")
    parts.append("cold run in a fresh process (its own model load, no warm-up)" if phase == "cold" else
                 f"warm run in the campaign process after the registered warm-up ({WARMUP_TEXTS} texts x iterations)")
    parts.extend(extra)
    parts.append(f"quality {reader_name(q['metric'])} {q['direction'].replace('_', ' ')}: at least {q['threshold']} "
                 f"and at most {q['tolerance']} below the reference {q['reference']['value']} "
                 f"({q['reference']['name']})")
    return "; ".join(parts)


def grid_row(plan: Plan, config: CampaignConfig, env: dict[str, Any], model: BatchModel, exp: dict[str, Any],
              variant: dict[str, Any], settings: Settings, corpus: CorpusData, phase: str, run_index: int,
              row: dict[str, Any], done: list[tuple[str, str]], extra: list[str],
              resumed: tuple[str, str] | None = None) -> dict[str, Any]:
    """The grid row of one attempt on `corpus`, with a private `_outcome` (ok, oom or failed) for the summary;
    `extra` are notes of its own (run order, truncation, precision); `resumed`, for a resumption, the attempt it
    resumes (<variant>/<phase>/<run_index>) and how."""
    cells = _assess(plan, corpus, done)
    failed = row["status"] != "ok"
    gpu, rented = config.device != "cpu", experiment_rental(plan.protocol, exp)
    return {
        "experiment_id": exp["id"], "variant_id": variant["id"], "corpus_revision": corpus.revision,
        "model_revision": model.revision, "tokenizer_revision": model.tokenizer_revision, "seed": settings.seed,
        "gpu_model": env["gpu_name"] if gpu else None, "gpu_count": settings.gpu_count if gpu else 0,
        "device": config.device,
        "driver_version": env["driver_version"], "python_version": env["python_version"],
        "torch_version": env["torch_version"], "runtime_version": env["runtime_version"],
        "precision": settings.precision, "batch": settings.batch, "context": settings.context,
        "phase": phase, "run_index": run_index,
        "warmup_iterations": exp["warmup"]["iterations"] if phase == "warm" else 0, **cells,
        "elapsed_seconds": None if failed or row["elapsed_seconds"] is None else round(row["elapsed_seconds"], 6),
        **{k: row[k] for k in ("baseline_allocated_bytes", "baseline_reserved_bytes", "peak_allocated_bytes",
                               "peak_reserved_bytes")},
        "duration_days": _periods(rented)[0], "lots": rented["lots"],
        "package_total_usd_minor": _package_total(rented), "accepted_unique_corpora": None,
        "notes": _notes(plan, config, phase, row, len(done), extra, resumed),
        "_outcome": "ok" if not failed else ("oom" if (row["error"] or "").startswith("out of memory") else "failed"),
    }


def prediction_path(plan: Plan, tmp: Path, exp_id: str, variant_id: str, phase: str, run_index: int) -> Path:
    """Where one attempt's prediction file goes: the protocol's files.predictions pattern, filled in."""
    pattern = plan.protocol["files"]["predictions"]
    rel = (pattern.replace("{experiment_id}", exp_id).replace("{variant_id}", variant_id)
           .replace("{phase}", phase).replace("{run_index}", str(run_index)))
    return tmp / rel


def _published_tariffs() -> list[dict[str, str]]:
    """The only two prices the seeds publish (the packaged tariffs); no other GPU gets a price here."""
    return list(csv.DictReader(io.StringIO(published_tariffs().read_text(encoding="utf-8"))))


def _periods(rental: dict[str, Any]) -> list[int]:
    """The rental's packages in order: its `periods`, or its one `duration_days`."""
    return [int(d) for d in rental.get("periods") or [rental["duration_days"]]]


def _package_total(rental: dict[str, Any]) -> int | None:
    """Price per lot x lots, summed over the rental's periods, from the published prices only; None (unknown)
    when a period has no such price."""
    prices = {(t["gpu"], int(t["duration_days"])): int(t["price_per_lot_usd_minor"]) for t in _published_tariffs()}
    found = [prices.get((rental["gpu"], days)) for days in _periods(rental)]
    return None if None in found else sum(p for p in found if p is not None) * int(rental["lots"])


def measurement_document(plan: Plan, config: CampaignConfig, env: dict[str, Any], model: BatchModel,
                         exp: dict[str, Any], variant: dict[str, Any], settings: Settings, phases: list[dict[str, Any]],
                         described: dict[str, Any]) -> dict[str, Any]:
    """The measurement JSON of one variant (measurement schema): its run, environment, configuration, model, phases.

    `described` joins the model's record: truncation, padding, precision, run order. A run with
    --allow-cpu-for-tests is marked `test_run`: `check` never ranks a configuration that rests on it. Format 2: each
    cold run (one per common seed and corpus) is its fresh process's model_load, inputs and cold_forward, the
    cold_forward's repeat being the cold run's run_index."""
    return {
        "schema_version": MEASUREMENT_VERSION,
        "tool": f"gpu-audit {__version__} campaign run" + (" (TEST-ONLY CPU run)" if config.device == "cpu" else ""),
        "synthetic_data": False,
        **({"test_run": True} if config.allow_cpu_for_tests else {}),
        "run": {"experiment_id": exp["id"], "variant_id": variant["id"]},
        "environment": env,
        "configuration": {"device": config.device, "batch": settings.batch, "context": settings.context,
                          "dtype": settings.precision, "warmup": exp["warmup"]["iterations"],
                          "repeats": attempts(exp, "warm", len(plan.corpora)),
                          "seed": None if exp.get("seeds") else settings.seed},
        "model": {"name": model.name[:200], "revision": model.revision[:200],
                  "parameter_count": int(model.parameter_count),
                  "tokenizer_revision": model.tokenizer_revision,
                  "phases_note": _phases_note(exp, variant), **described},
        "phases": phases,
    }


def _phases_note(exp: dict[str, Any], variant: dict[str, Any]) -> str:
    """Which process each phase of a variant's measurement comes from."""
    if "resume" in variant:
        return ("each resumed cold run is its fresh process's model_load, inputs and cold_forward; the resumed warm "
                "runs follow the resumption's own model_load, inputs and warm-up in the campaign process")
    if exp["cold_runs_per_variant"] == 1:
        return ("each cold run (cold_forward repeat k = cold run k) is its fresh process's model_load, inputs and "
                "cold_forward; warmup and warm_forward come from the campaign process")
    return "every phase comes from the campaign process"


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def neutralise(cell: Any) -> Any:
    """A text cell that a spreadsheet would run as a formula gets a leading apostrophe; numbers stay numbers."""
    if isinstance(cell, str) and cell.startswith(_FORMULA_START):
        return "'" + cell
    return cell


def csv_bytes(header: list[str], rows: list[list[Any]]) -> bytes:
    """A CSV file's bytes (UTF-8), with formula-like text cells neutralised."""
    buf = io.StringIO()
    # RFC 4180 line ends: the csv module quotes a cell holding a line-end character, a lone CR included.
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows([neutralise(c) for c in row] for row in rows)
    return buf.getvalue().encode("utf-8")


def write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    """Write a new CSV file (never overwriting), with formula-like text cells neutralised."""
    write_new_file(path, csv_bytes(header, rows), what="campaign file")


def rotation(values: list[Any], runs: int) -> list[list[Any]]:
    """1-4-8, 4-8-1, 8-1-4, ...: no variant always first."""
    return [values[i % len(values):] + values[: i % len(values)] for i in range(runs)]


def run_sequence(exp: dict[str, Any], corpora: int = 1) -> list[tuple[dict[str, Any], int]]:
    """The experiment's warm runs in the registered order, as (variant, run index): rotated rounds, or the
    drawn_sequence registered with order drawn (the k-th time a variant is drawn is its run k); each variant's
    runs under every common seed and on every corpus, resume variants aside."""
    variants = registered_variants(exp)
    if exp.get("order", "rotated") == "rotated":
        return [(v, r) for r, order in enumerate(rotation(variants, attempts(exp, "warm", corpora)), start=1)
                for v in order]
    by_id, seen = {v["id"]: v for v in variants}, dict.fromkeys((v["id"] for v in variants), 0)
    out = []
    for vid in exp["drawn_sequence"]:
        seen[vid] += 1
        out.append((by_id[vid], seen[vid]))
    return out
