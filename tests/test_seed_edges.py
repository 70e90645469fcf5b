"""Every seed rule with a number or an order in it holds exactly at its limit and fails one unit past it."""

from __future__ import annotations

from pathlib import Path

import pytest
from seed_edges import EDGELESS as SHARED_EDGELESS
from seed_edges import LIMITED, Edge
from seed_edges_first import EDGELESS as FIRST_EDGELESS
from seed_edges_first import EDGES as FIRST_EDGES
from seed_edges_later import EDGELESS as LATER_EDGELESS
from seed_edges_later import EDGES as LATER_EDGES
from seed_rules import SETUPS
from test_seed_rules import SEED_RULES, _at, _copy

from generator.audit.check import check_campaign

EDGES: list[Edge] = [*FIRST_EDGES, *LATER_EDGES]
EDGELESS = {**SHARED_EDGELESS, **FIRST_EDGELESS, **LATER_EDGELESS}
RULES = {r.id: r for r in SEED_RULES}


def test_every_limited_rule_has_its_edges() -> None:
    # by construction: a new rule with a figure or an order in its text needs an Edge (or a reason it has none)
    limited = {r.id for r in SEED_RULES if LIMITED.search(r.rule)}
    edged = {e.rule for e in EDGES}
    assert not edged - set(RULES), sorted(edged - set(RULES))
    assert not set(EDGELESS) - set(RULES), sorted(set(EDGELESS) - set(RULES))
    assert not edged & set(EDGELESS), sorted(edged & set(EDGELESS))
    assert sorted(limited - edged - set(EDGELESS)) == []


@pytest.mark.parametrize("edge", [pytest.param(e, id=e.rule) for e in EDGES])
def test_holds_exactly_at_the_limit(tmp_path: Path, edge: Edge) -> None:
    rule = RULES[edge.rule]
    folder = _copy(tmp_path, rule.setup)
    edge.at(folder)
    result = check_campaign(folder)
    errors = [(f.code, f.file, f.line, f.field, f.message) for f in result.findings if f.is_error]
    assert errors == []
    if rule.code is not None:
        assert rule.code not in {f.code for f in result.findings}
    assert result.decision["decision"]["answer"] == SETUPS[rule.setup][1]


@pytest.mark.parametrize("edge", [pytest.param(e, id=e.rule) for e in EDGES])
def test_fails_one_unit_past_the_limit(tmp_path: Path, edge: Edge) -> None:
    rule = RULES[edge.rule]
    folder = _copy(tmp_path, rule.setup)
    wheres = edge.past(folder)
    result = check_campaign(folder)
    code = edge.code or rule.code
    assert code is not None, "a decision rule without a code of its own names the finding past its limit"
    mine = [f for f in result.findings if f.code == code]
    assert mine, f"no {code} one {edge.unit} past; found {sorted({f.code for f in result.findings})}"
    for where in wheres:
        assert [f for f in mine if _at(f, where)], (where, [(f.file, f.line, f.field) for f in mine])
