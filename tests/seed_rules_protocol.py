"""Issue 34's seed rules (the protocol in full), in the form of tests/seed_rules.py; test_seed_rules.py runs them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from seed_rules import ANY, B4, GRID, RTX, A, SeedRule, Where, edit_lines, edit_protocol, line_of, pred

_SOURCE = f"{A} 'Qualität nach einem Wechsel der Präzision prüfen'"


def _register(c: Path, **target: Any) -> None:
    edit_protocol(c, lambda p: p["quality"].update(reproduction=target))


def _relabel_ten(c: Path) -> None:
    """Warm run 3 of rtx4090-batch/b4 gives its first ten texts the next one's label: the same IDs, other
    predictions (its quality moves a little, and stays above the threshold)."""
    def swap(lines: list[str]) -> list[str]:
        rows = [t.split(",") for t in lines[1:]]
        labels = [r[1] for r in rows[:11]]
        for i in range(10):
            rows[i][1] = labels[i + 1]
        return [lines[0]] + [",".join(r) for r in rows]
    edit_lines(c, pred(RTX, "b4", "warm", 3), swap)


def m_not_identical(c: Path) -> list[Where]:
    _register(c, target="identical")
    _relabel_ten(c)
    return [Where(GRID, line_of(c, RTX, "b4", "warm", 3), "run_index")]


def m_beyond_bound(c: Path) -> list[Where]:
    _register(c, target="bounded", bound=0.0)
    _relabel_ten(c)
    return [Where(GRID, ANY, "quality_value")]


def m_quality_only(c: Path) -> list[Where]:
    _register(c, target="quality")
    return []


def v_quality_only(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == B4, decision["decision"]
    assert decision["rule"]["reproduction"] == "quality"


RULES: list[SeedRule] = [
    SeedRule("reproduction-identical", "with identical outputs registered, every warm run writes the same "
             "predictions", _SOURCE, "reproduction-not-identical", m_not_identical, targets=(B4,)),
    SeedRule("reproduction-bounded", "with a bounded deviation registered, the metric's spread across the warm "
             "runs stays within the bound", _SOURCE, "reproduction-beyond-bound", m_beyond_bound, targets=(B4,)),
    SeedRule("reproduction-quality", "with acceptable quality registered, acceptance alone decides", _SOURCE, None,
             m_quality_only, protect="decision", verify=v_quality_only),
]
