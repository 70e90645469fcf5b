"""Issue 31's seed rules (work), in the form of tests/seed_rules.py, which adds them to SEED_RULES."""

from __future__ import annotations

from seed_rules import SeedRule

RULES: list[SeedRule] = []
