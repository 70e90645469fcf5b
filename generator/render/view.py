"""The note's view model: decision.json arranged for the templates, which then only format."""

from __future__ import annotations

import json
from typing import Any

# One tolerance for a claimed quality value, the one the recomputation applies.
from generator.audit.recompute.tolerances import QUALITY_TOLERANCE

# bundle_id: one definition, shared with `verify` (which must not import this module)
from generator.core.bundleid import bundle_id
from generator.render import finance, i18n
from generator.render.filters import shorten
from generator.render.finance import Signature

HTML_LANGUAGE = {"zh": "zh-Hans"}  # the note's `lang` (BCP 47): Simplified Chinese says its script
# What the note lists at most (docs/note.md): past these it says how many it left out and where they are
# (decision.json, findings.json, the grid), so that the time to lay the note out stays bounded by these caps
# and not by the size of the inputs. Every text is also cut at filters.TEXT_CHARS.
FINDINGS_PER_SEVERITY = 100
NOTE_CHARS = 500  # of one grid note: about five lines of the notes table
NOTES_LISTED = 20  # distinct grid notes
ROWS_LISTED = 200  # rows of the acceptance table, and of the memory table
DURATIONS_LISTED = 100  # raw durations in one cell of the timing table (the chart draws them all)
CLAIM_COLUMNS = (
    ("expected_ids", "expected_ids"), ("observed_ids", "observed_ids"), ("ids_match", "ids_match"),
    ("format_valid", "format_valid"), ("quality_value", "quality_value"), ("corpus_accepted", "corpus_accepted"),
)


def _agrees(column: str, claimed: Any, recomputed: Any) -> bool:
    if claimed is None:
        return True  # not recorded: nothing claimed, nothing contradicted
    if column == "quality_value":
        return recomputed is not None and abs(float(claimed) - float(recomputed)) <= QUALITY_TOLERANCE
    return bool(claimed == recomputed)


def _run_view(run: dict[str, Any]) -> dict[str, Any]:
    rec = run["recomputed"] or {}
    cells = []
    for column, key in CLAIM_COLUMNS:
        claimed, recomputed = run["claimed"].get(column), rec.get(key)
        cells.append({"column": column, "claimed": claimed, "recomputed": recomputed,
                      "mismatch": bool(rec) and not _agrees(column, claimed, recomputed)})
    return {**run, "cells": cells, "sets": {k: rec.get(k) for k in ("duplicates", "missing", "extra")},
            "failed": run["outcome"] != "ok"}


def _index_list(indexes: list[int]) -> str:
    """Run numbers with each series of three or more consecutive ones as a range: '1, 3–5'."""
    parts: list[str] = []
    start = 0
    for i in range(1, len(indexes) + 1):
        if i == len(indexes) or indexes[i] != indexes[i - 1] + 1:
            series = indexes[start:i]
            parts += [f"{series[0]}\u2013{series[-1]}"] if len(series) > 2 else [str(n) for n in series]
            start = i
    return ", ".join(parts)


def attempt_parts(runs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The attempts as (phase, run numbers) pairs, e.g. [('cold', '1'), ('warm', '1–5')]: the note words the phase."""
    by_phase: dict[str, list[int]] = {}
    for run in runs:
        by_phase.setdefault(run["phase"], []).append(run["run_index"])
    return [(phase, _index_list(sorted(indexes))) for phase, indexes in by_phase.items()]


def attempt_list(runs: list[dict[str, Any]]) -> str:
    """The attempts named by phase and number, e.g. 'cold 1, warm 1–5'."""
    return ", ".join(f"{phase} {numbers}" for phase, numbers in attempt_parts(runs))


def group_attempts(config_id: str, runs: list[dict[str, Any]], key: Any) -> list[dict[str, Any]]:
    """The attempts of one configuration whose shown values (key) are identical, as one row naming each of them.

    Only identical rows are folded, and every attempt keeps its name and number, so a failure is never merged
    with a success and five identical repeats still read as five attempts.
    """
    groups: dict[Any, list[dict[str, Any]]] = {}
    for run in runs:
        groups.setdefault(key(run), []).append(run)
    return [{**members[0], "configuration": config_id, "attempts": attempt_list(members),
             "attempt_parts": attempt_parts(members), "count": len(members)} for members in groups.values()]


def _acceptance_key(run: dict[str, Any]) -> Any:
    return (run["outcome"], run["completed_items"], json.dumps([run["cells"], run["sets"]], sort_keys=True))


def _memory_key(run: dict[str, Any]) -> Any:
    return (run["outcome"], json.dumps(run["memory"], sort_keys=True))


def _notes(configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each distinct note once, with the attempts that carry it (identical notes are not repeated) and their grid
    lines; a note longer than NOTE_CHARS is cut there, and `length` gives the whole note's length."""
    grouped: dict[str, dict[str, list[dict[str, Any]]]] = {}
    total = 0
    for c in configs:
        for r in c["runs"]:
            total += 1
            if r["notes"]:
                grouped.setdefault(r["notes"], {}).setdefault(c["id"], []).append(r)
    notes = []
    for text, by_config in grouped.items():
        carried = sum(len(runs) for runs in by_config.values())
        lines = sorted({r["line"] for runs in by_config.values() for r in runs})
        cut, length = shorten(text, NOTE_CHARS)
        notes.append({"everywhere": total if carried == total else 0,
                      "places": [(cid, attempt_parts(runs)) for cid, runs in by_config.items()],
                      "text": cut, "length": length, "lines": _index_list(lines), "line_count": len(lines)})
    return notes


def _left_out(rows: list[dict[str, Any]]) -> dict[str, int] | None:
    """What the note says of the rows past ROWS_LISTED: how many, the attempts they hold, the failed ones."""
    rest = rows[ROWS_LISTED:]
    if not rest:
        return None
    return {"rows": len(rest), "attempts": sum(r["count"] for r in rest), "failed": sum(r["failed"] for r in rest)}


ENVIRONMENT_COLUMNS = ("gpu_model", "gpu_count", "driver_version", "python_version", "torch_version",
                       "runtime_version", "precision")


def _environments(configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Configurations that ran in the same environment share a row (the batch size is a variable, not shown)."""
    rows: dict[str, dict[str, Any]] = {}
    for c in configs:
        shown = {k: c["environment"].get(k) for k in ENVIRONMENT_COLUMNS}
        m = c.get("measurement")
        shown["measured"] = ((m["environment"].get("gpu_name"), m["environment"].get("visible_device_count"))
                             if m else None)
        row = rows.setdefault(json.dumps(shown, sort_keys=True), {**shown, "configurations": []})
        row["configurations"].append(c["id"])
    return list(rows.values())


def chart_request(decision: dict[str, Any], language: str = "en") -> dict[str, Any]:
    """What the charts need from decision.json, and nothing else (it travels to a worker as JSON), with their
    words and fonts in the note's language."""
    configs = decision["configurations"]
    return {"words": i18n.chart_words(i18n.translations(language)), "fonts": i18n.chart_fonts(language),
            "durations": [{"id": c["id"], "timing": c["timing"]} for c in configs],
            "memory": [(c["experiment_id"], c["id"], c["measurement"]["phases"]) for c in configs
                       if c.get("measurement")]}


def _memory_peaks(configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each measured configuration's highest peaks over its phases: what the memory chart's text alternative says."""
    peaks = []
    for c in configs:
        phases = c["measurement"]["phases"] if c.get("measurement") else []
        allocated = [p["peak_allocated_bytes"] for p in phases if p.get("peak_allocated_bytes") is not None]
        reserved = [p["peak_reserved_bytes"] for p in phases if p.get("peak_reserved_bytes") is not None]
        if phases:
            peaks.append({"configuration": c["id"], "allocated": max(allocated, default=None),
                          "reserved": max(reserved, default=None)})
    return peaks


def build_view(decision: dict[str, Any], *, signature: Signature = finance.RENDERED,
               language: str = "en") -> dict[str, Any]:
    """Everything the template shows, from decision.json alone; the charts are drawn apart (generator.render.charts)."""
    configs = decision["configurations"]
    rented = finance.packages(decision)
    by_id = {c["id"]: c for c in configs}
    answer = decision["decision"]["answer"]
    findings = decision["findings"]
    grouped = []
    for severity in ("error", "warning", "info"):
        items = [f for f in findings if f["severity"] == severity]
        grouped.append({"severity": severity, "count": len(items), "entries": items[:FINDINGS_PER_SEVERITY],
                        "hidden": max(0, len(items) - FINDINGS_PER_SEVERITY)})
    acceptance_rows, memory_rows = [], []
    for c in configs:
        runs = [_run_view(r) for r in c["runs"]]
        acceptance_rows += group_attempts(c["id"], runs, _acceptance_key)
        memory_rows += group_attempts(c["id"], runs, _memory_key)
    notes = _notes(configs)
    return {
        "bundle_id": bundle_id(decision),
        "language": HTML_LANGUAGE.get(language, language),
        "signature": signature,
        "packages": rented,
        "chosen_package": next((p for p in rented if answer and by_id[answer]["experiment_id"] == p["experiment"]),
                               None),
        "total": finance.campaign_total(rented),
        "unpriced_gpus": finance.unpriced_gpus(decision),
        "exclusions": finance.exclusions(configs),
        "tail_groups": finance.tail_groups(configs),
        "memory_peaks": _memory_peaks(configs),
        "timezone": decision["window"]["timezone"] if decision["window"] else None,
        "decision": decision,
        "campaign": decision["campaign"],
        "rule": decision["rule"],
        "window": decision["window"],
        "answer": answer,
        "chosen": by_id.get(answer) if answer else None,
        "verdict": decision["decision"],
        "errors": decision["finding_counts"]["error"],
        "warnings": decision["finding_counts"]["warning"],
        "synthetic": bool(decision["campaign"] and decision["campaign"]["synthetic_data"])
        or any(c.get("measurement") and c["measurement"]["synthetic_data"] for c in configs),
        "configurations": configs,
        "acceptance_rows": acceptance_rows[:ROWS_LISTED],
        "acceptance_left_out": _left_out(acceptance_rows),
        "memory_rows": memory_rows[:ROWS_LISTED],
        "memory_left_out": _left_out(memory_rows),
        "notes": notes[:NOTES_LISTED],
        "notes_left_out": len(notes[NOTES_LISTED:]),
        "findings_per_severity": FINDINGS_PER_SEVERITY,
        "durations_listed": DURATIONS_LISTED,
        "environments": _environments(configs),
        "measurement_files": [(c["id"], c["measurement"]["file"]) for c in configs if c.get("measurement")],
        "experiments": decision["experiments"],
        "findings": grouped,
        "inputs": decision["inputs"],
    }
