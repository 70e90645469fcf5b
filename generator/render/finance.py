"""What page 1 shows the reader who pays: each rented package, the campaign total, idle GPUs, the signer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator.audit.recompute.gate import REASON_REFS
from generator.audit.recompute.timing import MIN_FOR_TAIL


@dataclass(frozen=True)
class Signature:
    """How the note is signed, for its words: `certified` by build with a key (subject and certificate
    fingerprint), `unsigned` (build --unsigned), or `render` (gpu-audit render signs nothing)."""

    kind: str
    subject: str = ""
    fingerprint: str = ""


RENDERED = Signature("render")


def packages(decision: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per rented package (one per experiment: its configurations share it, so it counts once),
    with the GPUs the lots hold and the most any of its runs used."""
    configs = decision["configurations"]
    rows = []
    for e in decision["experiments"]:
        p = e["package"]
        used = [c["environment"].get("gpu_count") for c in configs if c["experiment_id"] == e["id"]]
        counted = [n for n in used if isinstance(n, int)]
        paid = p["gpus"] if isinstance(p.get("gpus"), int) else None
        most_used = max(counted) if counted else None
        rows.append({**p, "experiment": e["id"], "gpus_paid": paid, "gpus_used": most_used,
                     "idle_gpus": paid - most_used if paid is not None and most_used is not None
                     and most_used < paid else 0,
                     "configurations": [c["id"] for c in configs if c["experiment_id"] == e["id"]]})
    return rows


def campaign_total(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The campaign's committed spend: the sum of its packages' totals, each counted once; undefined (with the
    packages that lack a price) when any package has no price."""
    unpriced = [r["experiment"] for r in rows if r["total_usd_minor"] is None]
    if unpriced or not rows:
        return {"usd_minor": None, "unpriced": unpriced, "packages": len(rows)}
    return {"usd_minor": sum(int(r["total_usd_minor"]) for r in rows), "unpriced": [], "packages": len(rows)}


def tail_groups(configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The configurations whose warm series is too short for a tail percentile, grouped by their run count, so
    that the note names each configuration the statement is about."""
    groups: dict[int, list[str]] = {}
    for c in configs:
        warm = c["timing"]["warm"]
        if warm["p95"] is None:
            groups.setdefault(int(warm["successes"]), []).append(c["id"])
    return [{"observations": n, "configurations": ids, "needed": MIN_FOR_TAIL} for n, ids in sorted(groups.items())]


def exclusions(configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Why each configuration is not admissible, as codes with their figures (the template words them)."""
    out = []
    for c in configs:
        if c["admissible"]:
            continue
        reasons: list[dict[str, Any]] = []
        if not c["accepted"]:
            reasons.append({"code": "not-accepted", "completed": c["completed"],
                            "rejected": c["completed"] - c["accepted_runs"]})
        if c["out_of_memory"]:
            reasons.append({"code": "out-of-memory", "count": c["out_of_memory"]})
        if c["failures"] > c["out_of_memory"]:  # any other failed attempt: issue 31 item 5
            reasons.append({"code": "failed", "count": c["failures"] - c["out_of_memory"]})
        if c["fits_window"] is False:
            reasons.append({"code": "window"})
        if c["fits_deadline"] is False:
            reasons.append({"code": "deadline"})
        errors = c["evidence"]["errors"]
        if errors:
            reasons.append({"code": "errors", "count": len(errors), "refs": errors[:REASON_REFS],
                            "more": max(0, len(errors) - REASON_REFS)})
        out.append({"configuration": c["id"], "reasons": reasons})
    return out


def unpriced_gpus(decision: dict[str, Any]) -> list[str]:
    """The GPUs of the admissible configurations that have no published price (why the question has no answer)."""
    by_id = {c["id"]: c for c in decision["configurations"]}
    return sorted({by_id[u["configuration"]]["gpu"] for u in decision["decision"]["unpriced"]
                   if u["configuration"] in by_id})
