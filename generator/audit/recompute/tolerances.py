"""The tolerances the rules share: one definition, imported by the recomputation and by the note alike.

Kept apart from the recomputation's modules, so that the renderer can import a constant without loading
pyarrow and numpy (a fresh `render` pays for every import).
"""

from __future__ import annotations

# Claimed quality values are usually rounded; a claim within this distance of the recomputed value agrees.
QUALITY_TOLERANCE = 5e-4
