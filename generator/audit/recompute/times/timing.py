"""Timings per variant and phase: raw durations, median, min-max, successes and failures; no tail from few runs."""

from __future__ import annotations

import math
import statistics

from generator.audit.recompute.decision.model import PhaseTiming, Separation

MIN_FOR_TAIL = 20


def phase_stats(durations: list[float], failures: int) -> PhaseTiming:
    """Summary of one phase's attempts. Failed attempts have no duration and are counted, never timed as 0."""
    n = len(durations)
    p95, tail_note = None, None
    if n >= MIN_FOR_TAIL:
        p95 = sorted(durations)[math.ceil(0.95 * n) - 1]  # nearest rank
    else:
        tail_note = (f"no p95 or other tail percentile: {n} observations are too few (at least "
                     f"{MIN_FOR_TAIL} needed); the median and min-max describe this small series")
    return PhaseTiming(durations=tuple(durations), successes=n, failures=failures,
                       median=statistics.median(durations) if n else None, min=min(durations) if n else None,
                       max=max(durations) if n else None, p95=p95, tail_note=tail_note)


def separation(a: PhaseTiming, b: PhaseTiming) -> Separation:
    """Whether two warm series decide between their configurations.

    They do not when their min-max ranges overlap, or when the gap between medians is no larger
    than the larger spread: the observed scatter is comparable to the difference.
    """
    if a.median is None or b.median is None or a.min is None or a.max is None or b.min is None or b.max is None:
        return Separation(decides=False, gap=None, spread=None, reason="a series has no successful run")
    gap = abs(a.median - b.median)
    spread = max(a.max - a.min, b.max - b.min)
    if a.min <= b.max and b.min <= a.max:
        return Separation(decides=False, gap=gap, spread=spread, reason="the min-max ranges overlap")
    if gap <= spread:
        return Separation(decides=False, gap=gap, spread=spread,
                          reason="the gap between medians is no larger than the spread")
    return Separation(decides=True, gap=gap, spread=spread,
                      reason="the ranges are apart and the gap exceeds the spread")
