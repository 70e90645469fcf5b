"""The bundle ID: one definition for the note, the bundle and `verify` (which recomputes it from decision.json).

Standard library only, so that `verify` computes it without importing the renderer.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def bundle_id(decision: dict[str, Any]) -> str:
    """A stable identifier of the decision: the first 16 hex digits of the SHA-256 of its canonical JSON."""
    canonical = json.dumps(decision, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return "GA-" + hashlib.sha256(canonical).hexdigest()[:16].upper()
