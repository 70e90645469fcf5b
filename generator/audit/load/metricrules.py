"""The protocol's metric against the registry: a name it knows, and a rule whose values lie in the metric's range."""

from __future__ import annotations

import json
from difflib import get_close_matches

from generator.audit.load.findings import Finding, Severity, cell_text, make_finding
from generator.audit.load.inputs.protocol import Protocol
from generator.core.metrics import METRICS, Metric, known_metrics

_RANGE_RULE = ("the rule's threshold and reference values lie in the metric's range, its tolerances and bound "
               "between 0 and the range's width: a value outside can never be reached, or always is")


def unknown_metric(value: object, file: str) -> Finding:
    """`quality.metric` names no registered metric: the known ones, and the nearest to what is written."""
    written = json.dumps(value, ensure_ascii=False)  # as the file writes it
    near = get_close_matches(value, list(METRICS), n=1, cutoff=0.6) if isinstance(value, str) else []
    hint = f"; did you mean {near[0]} ({METRICS[near[0]].name})?" if near else ""
    return make_finding(
        "metric-unknown", Severity.ERROR, file,
        f"quality.metric {written} is not a metric gpu-audit computes{hint}", field="/quality/metric",
        value=value, rule="the protocol names one of the registered metrics, each computed as scikit-learn does",
        fix=f"write one of them in quality.metric: {known_metrics()} (docs/check.md gives each one's definition)")


def _values(protocol: Protocol) -> list[tuple[str, str, float, bool]]:
    """Every number of the rule on the metric's scale: (pointer, what it is, value, is it a difference)."""
    q = protocol.quality
    out = [("/quality/threshold", "quality.threshold", q.threshold, False),
           ("/quality/tolerance", "quality.tolerance", q.tolerance, True),
           ("/quality/reference/value", "quality.reference.value", q.reference.value, False)]
    if q.reproduction_bound is not None:
        out.append(("/quality/reproduction/bound", "quality.reproduction.bound", q.reproduction_bound, True))
    for i, g in enumerate(q.subgroups):
        for key, value, difference in (("threshold", g.threshold, False), ("tolerance", g.tolerance, True),
                                       ("reference_value", g.reference_value, False)):
            if value is not None:
                out.append((f"/quality/subgroups/{i}/{key}", f"subgroup {g.id}'s {key}", value, difference))
    return out


def _outside(m: Metric, value: float, difference: bool) -> str | None:
    """Why the value cannot be one of the metric's, or None when it can."""
    if difference and not 0 <= value <= m.span:
        return f"a difference of {m.name} lies between 0 and {m.span:g} (its range is {m.range_text()})"
    if not difference and not m.low <= value <= m.high:
        return f"{m.name} ranges over {m.range_text()}"
    return None


def range_findings(protocol: Protocol, file: str) -> list[Finding]:
    """Each threshold, tolerance, reference value and bound outside what the registered metric can take: an error,
    since such a rule accepts every run or none whatever the predictions."""
    m = METRICS.get(protocol.quality.metric)
    if m is None:
        return []  # the schema's enum refused it (metric-unknown)
    out = []
    for pointer, what, value, difference in _values(protocol):
        why = _outside(m, value, difference)
        if why is None:
            continue
        lowest, highest = (0.0, m.span) if difference else (m.low, m.high)
        out.append(make_finding(
            "metric-range-exceeded", Severity.ERROR, file, f"{what} is {cell_text(value)}, but {why}: a rule on a "
            f"value {m.name} never takes accepts every run or none, whatever the predictions", field=pointer,
            value=value, rule=_RANGE_RULE,
            fix=f"register a value from {lowest:g} to {highest:g} for {m.name} ({m.slug}), set before the runs; "
                "or name the metric the value was meant for"))
    return out
