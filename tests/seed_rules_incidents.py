"""Issue 47 item 4's seed rules on what a campaign leaves unsaid: the reproduction target by default, in the form
of tests/seed_rules.py; test_seed_rules.py runs them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from seed_rules import (
    PROTOCOL,
    RTX,
    A,
    SeedRule,
    Where,
    edit_protocol,
    set_row,
)
from seed_rules_protocol import _relabel_ten

_REPRODUCTION = f"{A} 'Qualität nach einem Wechsel der Präzision prüfen'"


def m_reproduction_unregistered(c: Path) -> list[Where]:
    # the target left out of the protocol, and b4's warm run 3 writing other predictions than its other warm runs
    # (still accepted): nothing is registered to hold them to, so the default applies and is said, never assumed
    edit_protocol(c, lambda p: p["quality"].pop("reproduction"))
    _relabel_ten(c)
    set_row(c, RTX, "b4", "warm", 3, quality_value="")  # its quality moves a little
    return [Where(PROTOCOL, None, "/quality/reproduction")]


def v_default_applied(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["rule"]["reproduction"] == "quality" and decision["rule"]["reproduction_registered"] is False
    assert not [f for f in findings if f.code.startswith("reproduction-") and f.is_error], findings
    (warning,) = [f for f in findings if f.code == "reproduction-not-registered"]
    assert warning.shared_input == "protocol" and warning.recomputed == "quality", warning


RULES: list[SeedRule] = [
    SeedRule("reproduction-default", "a protocol that registers no reproduction target is held to the default, "
             "acceptable quality, and the decision says it was not registered", _REPRODUCTION,
             "reproduction-not-registered", m_reproduction_unregistered, protect="warning", severity="warning",
             verify=v_default_applied),
]
