"""The reproduction target, registered or else the default, checked on each configuration's warm runs: identical
outputs, a bounded spread of the metric, or acceptable quality alone (003 'Qualität nach einem Wechsel der Präzision
prüfen')."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from generator.audit.load.findings import Finding, Severity, make_finding
from generator.audit.load.inputs.protocol import Quality
from generator.audit.recompute.decision.model import Configuration, Run
from generator.audit.recompute.quality.tolerances import as_written

IDENTICAL, BOUNDED, QUALITY = "identical", "bounded", "quality"


def _under(run: Run) -> str:
    """The seed a run's comparison is made under, when the experiment lists common seeds."""
    return f" under the same seed {run.seed}" if run.seed is not None else ""


def _judged(config: Configuration) -> list[Run]:
    """The warm runs that went through (in a resume variant, its resumptions that completed the corpus too) and
    were recomputed from a prediction file read."""
    through = ("ok", "resumed") if config.resume is not None else ("ok",)
    return [r for r in config.runs if r.phase == "warm" and r.outcome in through and r.recomputed is not None
            and r.recomputed.file_present and r.recomputed.prediction_file is not None]


def _identical(config: Configuration, runs: list[Run], digests: Mapping[str, tuple[int, str]],
               grid_file: str) -> list[Finding]:
    """Every warm run wrote the first warm run's prediction file, byte for byte."""
    read = [(r, digests.get(r.recomputed.prediction_file or "")) for r in runs if r.recomputed is not None]
    known = [(r, d[1]) for r, d in read if d is not None]
    if not known:
        return []
    first, digest = known[0]
    return [make_finding(
        "reproduction-not-identical", Severity.ERROR, grid_file, f"{config.id} warm run {r.run_index} wrote "
        f"other predictions than warm run {first.run_index}{_under(first)} (SHA-256 {other[:12]}... against "
        f"{digest[:12]}...), "
        "but the protocol registers identical outputs", line=r.line, field="run_index", claimed=IDENTICAL,
        recomputed=other, rule="quality.reproduction identical: every warm run writes the same prediction file",
        fix="find what makes the runs differ (seeds, deterministic options, batch composition), or register the "
            "target the runs can meet (bounded, with its bound, or quality) before a new campaign")
        for r, other in known[1:] if other != digest]


def _bounded(config: Configuration, runs: list[Run], bound: float, metric: str, grid_file: str) -> list[Finding]:
    """The metric's spread across the warm runs (highest minus lowest) is at most the registered bound."""
    valued = [(r, r.recomputed.quality_value) for r in runs
              if r.recomputed is not None and r.recomputed.quality_value is not None]
    if len(valued) < 2:
        return []
    low = min(valued, key=lambda item: item[1] or 0.0)
    high = max(valued, key=lambda item: item[1] or 0.0)
    spread = (high[1] or 0.0) - (low[1] or 0.0)
    if as_written(high[1] or 0.0) - as_written(low[1] or 0.0) <= as_written(bound):
        return []
    return [make_finding(
        "reproduction-beyond-bound", Severity.ERROR, grid_file, f"{config.id}: {metric} varies by {spread:.6f} "
        f"across its warm runs{_under(low[0])} (run {low[0].run_index}: {low[1]:.6f}, run {high[0].run_index}: "
        f"{high[1]:.6f}), "
        f"more than the registered bound {bound}", line=high[0].line, field="quality_value", claimed=bound,
        recomputed=round(spread, 6), rule="quality.reproduction bounded: the metric's spread across the warm runs "
        "is at most the bound", fix="find what makes the runs differ, or register a bound the runs can meet "
        "before a new campaign")]


def reproduction_findings(quality: Quality, configurations: Sequence[Configuration],
                          digests: Mapping[str, tuple[int, str]], grid_file: str) -> list[Finding]:
    """Each configuration's warm runs, each common seed's apart, against the reproduction target applied (nothing
    for `quality`, the default when none is registered: acceptance is then the only rule)."""
    out: list[Finding] = []
    for config in configurations:
        judged = _judged(config)
        # Under common seeds the target holds for each seed's runs, kept apart: seeds are meant to differ; so do
        # the predictions of several corpora.
        for key in dict.fromkeys((r.seed, r.corpus) for r in judged):
            runs = [r for r in judged if (r.seed, r.corpus) == key]
            if quality.reproduction_target == IDENTICAL:
                out.extend(_identical(config, runs, digests, grid_file))
            elif quality.reproduction_target == BOUNDED and quality.reproduction_bound is not None:
                out.extend(_bounded(config, runs, quality.reproduction_bound, quality.metric, grid_file))
    return out
