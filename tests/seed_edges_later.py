"""Edges of the seed rules in the later seed_rules_*.py modules (messages to metrics): at the limit, one unit past."""

from __future__ import annotations

from seed_edges import Edge

EDGES: list[Edge] = []
EDGELESS: dict[str, str] = {}
