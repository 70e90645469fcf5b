"""Issue 49 item 4's seed rules (the metric as the team chooses it, from one registry), in the form of
tests/seed_rules.py; test_seed_rules.py runs them."""

from __future__ import annotations

from pathlib import Path

from seed_rules import PROTOCOL, A, P, SeedRule, Where, edit_protocol

# §1: the main metric ("zum Beispiel Macro-F1"), its threshold and the largest degradation, defined before the runs
_SOURCE = f"{P} §1; {A} 'Festlegen, was als akzeptiertes Ergebnis zählt'"


def m_metric_unknown(c: Path) -> list[Where]:
    # a metric gpu-audit does not compute: named as it is, with the registered ones listed
    edit_protocol(c, lambda p: p["quality"].update(metric="f1-macro"))
    return [Where(PROTOCOL, None, "/quality/metric")]


def m_threshold_below_range(c: Path) -> list[Where]:
    # macro-F1 never goes below 0: a threshold of -0.1 (allowed by the schema for Matthews correlation and
    # Cohen's kappa) would let every run pass, whatever it predicted
    edit_protocol(c, lambda p: p["quality"].update(threshold=-0.1))
    return [Where(PROTOCOL, None, "/quality/threshold")]


def m_tolerance_beyond_range(c: Path) -> list[Where]:
    # a degradation of macro-F1 is at most 1: a tolerance of 1.5 accepts every run against any reference
    edit_protocol(c, lambda p: p["quality"].update(tolerance=1.5))
    return [Where(PROTOCOL, None, "/quality/tolerance")]


RULES: list[SeedRule] = [
    SeedRule("metric-known", "the protocol names a metric gpu-audit computes, from its registry of metrics",
             _SOURCE, "metric-unknown", m_metric_unknown, protect="withheld"),
    SeedRule("metric-threshold-in-range", "the threshold lies in the metric's range: one below it accepts every run",
             _SOURCE, "metric-range-exceeded", m_threshold_below_range, protect="withheld"),
    SeedRule("metric-tolerance-in-range", "the tolerance lies between 0 and the width of the metric's range",
             _SOURCE, "metric-range-exceeded", m_tolerance_beyond_range, protect="withheld"),
]
