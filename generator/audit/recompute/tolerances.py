"""The tolerances the rules share: one definition, imported by the recomputation and by the note alike.

Kept apart from the recomputation's modules, so that the renderer can import a constant without loading
pyarrow and numpy (a fresh `render` pays for every import).
"""

from __future__ import annotations

from decimal import Decimal

# Claimed quality values are usually rounded; a claim within this distance of the recomputed value agrees.
QUALITY_TOLERANCE = 5e-4
_TOLERANCE = Decimal("0.0005")


def quality_agrees(claimed: float, recomputed: float) -> bool:
    """A claim within the tolerance of the recomputed value, compared in decimal as both are written.

    In binary floating point 0.876 - 0.8755 is 5.000000000000004e-4, just over the tolerance: a value rounded
    half-up to the three decimals the README asks for would be flagged. Each float is taken as its shortest
    decimal form (what a file writes and what the note shows), so the distance exactly at the tolerance agrees.
    """
    return abs(Decimal(repr(float(claimed))) - Decimal(repr(float(recomputed)))) <= _TOLERANCE
