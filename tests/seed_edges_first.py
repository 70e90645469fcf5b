"""Edges of the rules in seed_rules.py, seed_rules_runs.py and seed_rules_outcomes.py: at the limit, one past."""

from __future__ import annotations

from seed_edges import Edge

EDGES: list[Edge] = []
EDGELESS: dict[str, str] = {}
