"""Issue 47 item 4's seed rules on what a campaign leaves unsaid: the reproduction target by default, and each
incident explained, in the form of tests/seed_rules.py; test_seed_rules.py runs them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from seed_rules import (
    B8,
    GRID,
    OK_NOTE,
    PROTOCOL,
    RTX,
    A,
    P,
    SeedRule,
    Where,
    cell,
    edit_protocol,
    set_row,
)
from seed_rules_outcomes import PREEMPTION
from seed_rules_protocol import _relabel_ten

_REPRODUCTION = f"{A} 'Qualität nach einem Wechsel der Präzision prüfen'"
_INCIDENT = f"{P} §3, §4 notes; {A} 'Wiederholen und Fehlschläge beibehalten'"
BARE_OOM = "outcome=oom; completed=408"


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


def m_oom_unexplained(c: Path) -> list[Where]:
    # the case: the out-of-memory row says only what the machine reads
    return [Where(GRID, set_row(c, RTX, "b8", "warm", 3, notes=BARE_OOM), "notes")]


def v_oom_named(decision: dict[str, Any], findings: list[Any]) -> None:
    (f,) = [f for f in findings if f.code == "incident-unexplained"]
    assert (f.claimed, f.value, f.configurations) == (BARE_OOM, BARE_OOM, (B8,)), f
    b8 = next(c for c in decision["configurations"] if c["id"] == B8)
    assert b8["admissible"] is False and b8["memory_feasible"] is False, b8["reasons"]  # still the OOM it was


def m_explanation_blank(c: Path) -> list[Where]:
    # an explanation of a no-break space and a zero-width space shows nothing: it explains nothing
    notes = f"{OK_NOTE}; {BARE_OOM}; reason=\u00a0\u200b"
    return [Where(GRID, set_row(c, RTX, "b8", "warm", 3, notes=notes), "notes")]


def m_exclusion_unexplained(c: Path) -> list[Where]:
    # b8's failed run 3 set aside under the registered preemption, its error message dropped: the exclusion
    # stands (the rule is registered), but nothing says what happened to this attempt
    edit_protocol(c, lambda p: p.update(exclusions=[PREEMPTION]))
    notes = f"{OK_NOTE}; outcome=excluded; cause=preemption; completed=408"
    assert "error=" in cell(c, RTX, "b8", "warm", 3, "notes")
    return [Where(GRID, set_row(c, RTX, "b8", "warm", 3, notes=notes), "notes")]


def v_exclusion_stands(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == B8, decision["decision"]  # a warning never gates
    assert [f.configurations for f in findings if f.code == "incident-unexplained"] == [(B8,)]


RULES: list[SeedRule] = [
    SeedRule("reproduction-default", "a protocol that registers no reproduction target is held to the default, "
             "acceptable quality, and the decision says it was not registered", _REPRODUCTION,
             "reproduction-not-registered", m_reproduction_unregistered, protect="warning", severity="warning",
             verify=v_default_applied),
    SeedRule("incident-explained", "an incident's row is kept and the incident explained in notes: an out-of-memory "
             "row with only outcome= and completed= explains nothing", _INCIDENT, "incident-unexplained",
             m_oom_unexplained, protect="warning", severity="warning", verify=v_oom_named),
    SeedRule("incident-explanation-blank", "an explanation of only blanks and invisible characters is none",
             _INCIDENT, "incident-unexplained", m_explanation_blank, protect="warning", severity="warning",
             targets=(B8,)),
    SeedRule("exclusion-explained", "an attempt set aside under a registered exclusion is an incident too: its row "
             "says what happened", _INCIDENT, "incident-unexplained", m_exclusion_unexplained, "b8-failed",
             protect="decision", severity="warning", verify=v_exclusion_stands),
]
