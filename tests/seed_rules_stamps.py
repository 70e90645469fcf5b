"""Issue 49 item 6's seed rules (time stamps with offsets), in the form of tests/seed_rules.py."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from seed_rules import B1, B4, RTX, A, P, SeedRule, Where, edit_json, edit_protocol, meas, set_phase

SCHEDULE = f"{A} 'Die Dauer mit dem vollständigen Zeitplan wählen'"
REGISTERED = f"{A} 'Festlegen, was als akzeptiertes Ergebnis zählt'; {P} §1"
PHASES = f"{A} 'Start, Aufwärmphase und gemessenen Durchlauf trennen'"
MINUS_FOUR = timezone(timedelta(hours=-4))
# The example's window, 2026-10-05T09:00 to 2026-10-09T09:00 Europe/Paris, is 07:00Z to 07:00Z, 03:00-04:00 to
# 03:00-04:00; its first phase is rtx4090-batch/b1's model load.


def _at_minus_four(text: str, zone: str | None = None) -> str:
    when = datetime.fromisoformat(text)
    return (when.replace(tzinfo=ZoneInfo(zone)) if zone else when).astimezone(MINUS_FOUR).isoformat()


def m_all_stamps_at_minus_four(c: Path) -> list[Where]:
    """Every stamp of the campaign written at -04:00: the measurements', registered_at, the window, the deadline."""
    def protocol(p: Any) -> None:
        zone = p["window"]["timezone"]
        p["registered_at"] = _at_minus_four(p["registered_at"])
        p["window"]["start"], p["window"]["end"] = (_at_minus_four(p["window"][k], zone) for k in ("start", "end"))
        p["deadline"] = _at_minus_four(p["deadline"], zone)

    def phases(doc: Any) -> None:
        for phase in doc["phases"]:
            phase["started_at"], phase["ended_at"] = (_at_minus_four(phase[k]) for k in ("started_at", "ended_at"))

    edit_protocol(c, protocol)
    for path in sorted((c / "measurements").glob("*.json")):
        edit_json(c, f"measurements/{path.name}", phases)
    return []


def _first_phase_at(c: Path, started: str) -> list[Where]:
    index = set_phase(c, meas(RTX, "b1"), "model_load", None, started_at=started)
    return [Where(meas(RTX, "b1"), None, f"/phases/{index}/started_at")]


def m_run_on_start_at_minus_four(c: Path) -> list[Where]:
    return _first_phase_at(c, "2026-10-05T03:00:00.000000-04:00")  # the window's start, 09:00 in Paris


def m_run_before_start_at_minus_four(c: Path) -> list[Where]:
    return _first_phase_at(c, "2026-10-05T02:59:59.999999-04:00")


def m_deadline_date_only(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: p.update(deadline="2026-10-09"))  # the end of Oct 9 in Paris: after the window
    return []


def m_stamp_without_offset(c: Path) -> list[Where]:
    return _first_phase_at(c, "2026-10-05T07:30:02.050000")


def v_same_answer_stamps_as_written(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == B4, decision["decision"]
    assert decision["window"]["start"] == "2026-10-05T03:00:00-04:00"  # as written
    stamps = [p["started_at"] for c in decision["configurations"] for p in c["measurement"]["phases"]]
    assert stamps and all(s.endswith("-04:00") for s in stamps)


def v_answer_b4(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == B4, decision["decision"]


def v_date_only_deadline(decision: dict[str, Any], findings: list[Any]) -> None:
    v_answer_b4(decision, findings)
    assert decision["window"]["deadline"] == "2026-10-09" and decision["window"]["ends_before_deadline"] is True
    assert json.dumps(decision).count("run-after-deadline") == 0


RULES: list[SeedRule] = [
    SeedRule("stamps-at-another-offset", "stamps written at -04:00 name the same instants: the same decision",
             SCHEDULE, None, m_all_stamps_at_minus_four, protect="decision", verify=v_same_answer_stamps_as_written),
    SeedRule("run-on-window-start-at-offset", "a run on the window's start written at -04:00 is inside it",
             SCHEDULE, None, m_run_on_start_at_minus_four, protect="decision", verify=v_answer_b4),
    SeedRule("run-before-window-at-offset", "a run a microsecond before the window, written at -04:00, is outside",
             SCHEDULE, "run-outside-window", m_run_before_start_at_minus_four, targets=(B1,)),
    SeedRule("deadline-date-only", "a date-only deadline is the end of that day in the window's zone",
             REGISTERED, None, m_deadline_date_only, protect="decision", verify=v_date_only_deadline),
    SeedRule("stamp-without-offset", "a run time without offset names no instant and proves no window",
             PHASES, "schema-violation", m_stamp_without_offset, targets=(B1,)),
]
