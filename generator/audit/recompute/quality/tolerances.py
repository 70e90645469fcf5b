"""The tolerances the rules share: one definition, imported by the recomputation and by the note alike.

Kept apart from the recomputation's modules, so that the renderer can import a constant without loading
pyarrow and numpy (a fresh `render` pays for every import).
"""

from __future__ import annotations

from decimal import Decimal

# Claimed quality values are usually rounded; a claim within this distance of the recomputed value agrees.
QUALITY_TOLERANCE = 5e-4
_TOLERANCE = Decimal("0.0005")


def as_written(value: float) -> Decimal:
    """A value as its shortest decimal form, as a file writes it and the note shows it: in binary floating point
    0.81 - 0.80 is 0.010000000000000009, over a bound of 0.01 that the spread meets exactly."""
    return Decimal(repr(float(value)))


def quality_agrees(claimed: float, recomputed: float) -> bool:
    """A claim within the tolerance of the recomputed value, compared in decimal as both are written.

    In binary floating point 0.876 - 0.8755 is 5.000000000000004e-4, just over the tolerance: a value rounded
    half-up to the three decimals the README asks for would be flagged. Each float is taken as its shortest
    decimal form (what a file writes and what the note shows), so the distance exactly at the tolerance agrees.
    """
    return abs(as_written(claimed) - as_written(recomputed)) <= _TOLERANCE
