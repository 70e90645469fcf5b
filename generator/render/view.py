"""The note's view model: decision.json arranged for the templates, which then only format."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from generator.render import charts

FINDINGS_PER_SEVERITY = 100
CLAIM_COLUMNS = (
    ("expected_ids", "expected_ids"), ("observed_ids", "observed_ids"), ("ids_match", "ids_match"),
    ("format_valid", "format_valid"), ("quality_value", "quality_value"), ("corpus_accepted", "corpus_accepted"),
)
QUALITY_AGREEMENT = 5e-4


def bundle_id(decision: dict[str, Any]) -> str:
    """A stable identifier of the decision: the first 16 hex digits of the SHA-256 of its canonical JSON."""
    canonical = json.dumps(decision, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return "GA-" + hashlib.sha256(canonical).hexdigest()[:16].upper()


def _agrees(column: str, claimed: Any, recomputed: Any) -> bool:
    if claimed is None:
        return True  # not recorded: nothing claimed, nothing contradicted
    if column == "quality_value":
        return recomputed is not None and abs(float(claimed) - float(recomputed)) <= QUALITY_AGREEMENT
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


def _memory_rows(config: dict[str, Any]) -> list[dict[str, Any]]:
    m = config.get("measurement")
    if not m:
        return []
    return [{"phase": p["phase"] + (f" {p['repeat']}" if p.get("repeat") else ""), **p} for p in m["phases"]]


def _notes(runs: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Each distinct note once, with the attempts that carry it (identical notes are not repeated)."""
    grouped: dict[str, list[str]] = {}
    for r in runs:
        if r["notes"]:
            grouped.setdefault(r["notes"], []).append(f"{r['phase']} {r['run_index']}")
    return [{"attempts": ", ".join(a), "text": text} for text, a in grouped.items()]


def build_view(decision: dict[str, Any], *, signature_status: str) -> dict[str, Any]:
    """Everything the template shows, from decision.json alone (plus the charts drawn from it)."""
    configs = decision["configurations"]
    by_id = {c["id"]: c for c in configs}
    answer = decision["decision"]["answer"]
    findings = decision["findings"]
    grouped = []
    for severity in ("error", "warning", "info"):
        items = [f for f in findings if f["severity"] == severity]
        grouped.append({"severity": severity, "count": len(items), "entries": items[:FINDINGS_PER_SEVERITY],
                        "hidden": max(0, len(items) - FINDINGS_PER_SEVERITY)})
    config_views = []
    for c in configs:
        config_views.append({
            **c,
            "runs_view": [_run_view(r) for r in c["runs"]],
            "memory_rows": _memory_rows(c),
            "notes": _notes(c["runs"]),
            "memory_chart": (charts.memory_chart(c["measurement"]["phases"], f"{c['id']}: peaks per phase "
                                                 f"({c['measurement']['file']})") if c.get("measurement") else None),
        })
    return {
        "bundle_id": bundle_id(decision),
        "signature_status": signature_status,
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
        "configurations": config_views,
        "experiments": decision["experiments"],
        "durations_chart": charts.durations_chart(configs) if configs else None,
        "findings": grouped,
        "inputs": decision["inputs"],
    }
