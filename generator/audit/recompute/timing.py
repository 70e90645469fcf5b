"""Timings per variant and phase: raw durations, median, min-max, successes and failures; no tail from few runs."""

from __future__ import annotations

import math
import statistics
from typing import Any

MIN_FOR_TAIL = 20


def phase_stats(durations: list[float], failures: int) -> dict[str, Any]:
    """Summary of one phase's attempts. Failed attempts have no duration and are counted, never timed as 0."""
    n = len(durations)
    stats: dict[str, Any] = {
        "durations": list(durations),
        "successes": n,
        "failures": failures,
        "median": statistics.median(durations) if n else None,
        "min": min(durations) if n else None,
        "max": max(durations) if n else None,
        "p95": None,
        "tail_note": None,
    }
    if n >= MIN_FOR_TAIL:
        ordered = sorted(durations)
        stats["p95"] = ordered[math.ceil(0.95 * n) - 1]  # nearest rank
    else:
        stats["tail_note"] = (f"no p95 or other tail percentile: {n} observations are too few (at least "
                              f"{MIN_FOR_TAIL} needed); the median and min-max describe this small series")
    return stats


def separation(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Whether two warm series decide between their configurations.

    They do not when their min-max ranges overlap, or when the gap between medians is no larger
    than the larger spread: the observed scatter is comparable to the difference.
    """
    if not a["successes"] or not b["successes"]:
        return {"decides": False, "reason": "a series has no successful run"}
    gap = abs(a["median"] - b["median"])
    spread = max(a["max"] - a["min"], b["max"] - b["min"])
    overlap = a["min"] <= b["max"] and b["min"] <= a["max"]
    if overlap:
        return {"decides": False, "gap": gap, "spread": spread, "reason": "the min-max ranges overlap"}
    if gap <= spread:
        return {"decides": False, "gap": gap, "spread": spread,
                "reason": "the gap between medians is no larger than the spread"}
    return {"decides": True, "gap": gap, "spread": spread, "reason": "the ranges are apart and the gap exceeds the spread"}
