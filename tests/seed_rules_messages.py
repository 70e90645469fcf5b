"""Issue 31's seed rules (messages), in the form of tests/seed_rules.py; tests/test_seed_rules.py runs them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from seed_rules import (
    B1,
    B4,
    B200,
    B200_ALL,
    GRID,
    PROTOCOL,
    RTX,
    RTX_ALL,
    A,
    P,
    SeedRule,
    Where,
    edit_protocol,
    meas,
    pred,
    set_phase,
)

from generator.audit.report import format_findings

B200_B1 = B200_ALL[0]

REGISTERED = f"{A} 'Festlegen, was als akzeptiertes Ergebnis zählt'; {P} §1"
SCHEDULE = f"{A} 'Die Dauer mit dem vollständigen Zeitplan wählen'"
# The example's window, 2026-10-05T09:00 to 2026-10-09T09:00 Europe/Paris, is 07:00Z to 07:00Z. Its first
# phase is rtx4090-batch/b1's model load (07:30Z on Oct 5), its last b200-batch/b1's warm run 5 (Oct 6).


def _registered(text: str) -> Callable[[Path], list[Where]]:
    """The protocol registered at `text` (an offset other than the window's), nothing else changed."""
    def mutate(c: Path) -> list[Where]:
        edit_protocol(c, lambda p: p.update(registered_at=text))
        return []

    return mutate


def _first_phase_at(c: Path, started: str) -> list[Where]:
    """rtx4090-batch/b1's model load (the campaign's first phase) started at `started`, ended as before."""
    index = set_phase(c, meas(RTX, "b1"), "model_load", None, started_at=started)
    return [Where(meas(RTX, "b1"), None, f"/phases/{index}/started_at")]


def _last_phase_to(c: Path, ended: str) -> list[Where]:
    """b200-batch/b1's warm run 5 (the campaign's last phase: the rounds rotate) ended at `ended`."""
    index = set_phase(c, meas(B200, "b1"), "warm_forward", 5, ended_at=ended)
    return [Where(meas(B200, "b1"), None, f"/phases/{index}/ended_at")]


def m_run_before_negative_offset(c: Path) -> list[Where]:
    # registered 2026-10-04T23:50-07:00 = 06:50Z Oct 5; a load at 06:40Z is before it (its text sorts after it)
    edit_protocol(c, lambda p: p.update(registered_at="2026-10-04T23:50:00-07:00"))
    return _first_phase_at(c, "2026-10-05T06:40:00.000000Z")


def m_run_on_registration(c: Path) -> list[Where]:
    # a run at the registration instant is not after it: registered 08:50+02:00, a load at 06:50Z
    edit_protocol(c, lambda p: p.update(registered_at="2026-10-05T08:50:00+02:00"))
    return _first_phase_at(c, "2026-10-05T06:50:00.000000Z")


def m_registered_on_start(c: Path) -> list[Where]:
    # 02:00-05:00 is the window's start, 09:00 in Paris: registered at the start is not registered before it
    edit_protocol(c, lambda p: p.update(registered_at="2026-10-05T02:00:00-05:00"))
    return [Where(PROTOCOL, None, "/registered_at")]


def m_runs_on_edges(c: Path) -> list[Where]:
    # the first phase starts on the window's start, the last ends on its end, which is also the deadline
    edit_protocol(c, lambda p: p.update(deadline="2026-10-09T09:00"))
    _first_phase_at(c, "2026-10-05T07:00:00.000000Z")
    _last_phase_to(c, "2026-10-09T07:00:00.000000Z")
    return []


def m_run_before_window(c: Path) -> list[Where]:
    return _first_phase_at(c, "2026-10-05T06:59:59.999999Z")


def m_run_after_window(c: Path) -> list[Where]:
    return _last_phase_to(c, "2026-10-09T07:00:00.000001Z")


def m_window_of_seven_days(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: (p["window"].update(end="2026-10-12T09:00"), p.update(deadline="2026-10-12T18:00")))
    return []


def m_window_a_second_longer(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: (p["window"].update(end="2026-10-12T09:00:01"), p.update(deadline="2026-10-12T18:00")))
    return [Where(PROTOCOL, None, f"/experiments/{RTX}/rental"), Where(PROTOCOL, None, f"/experiments/{B200}/rental")]


def m_prediction_file_missing(c: Path) -> list[Where]:
    (c / pred(RTX, "b4", "warm", 2)).unlink()
    return [Where(pred(RTX, "b4", "warm", 2))]


def v_answer_b4(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == B4, decision["decision"]


def v_seven_days(decision: dict[str, Any], findings: list[Any]) -> None:
    v_answer_b4(decision, findings)
    assert decision["window"]["hours"] == "168" and decision["window"]["smallest_covering_days"] == 7


def v_listed_under_the_cause(decision: dict[str, Any], findings: list[Any]) -> None:
    rel, line = pred(RTX, "b4", "warm", 2), 8
    row = [f for f in findings if f.file == GRID and f.line == line]
    assert {f.field for f in row} == {"observed_ids", "ids_match", "format_valid", "corpus_accepted", "quality_value"}
    for f in row:
        assert f.extra["follows_from"] == {"code": "missing-prediction-file", "file": rel}, f
        assert f.fix == f"restore the run's prediction file {rel}, or record the run as failed (outcome=failed in " \
                        "its notes)", f.fix
    text = format_findings(findings, subject="c", max_findings=200)
    assert "None" not in text and "True" not in text and "as recomputed" not in text
    lines = text.splitlines()
    at = lines.index(f"{rel}: the prediction file of this run attempt is missing [error missing-prediction-file]")
    assert lines[at + 3] == "  5 further findings follow from it (fix it first):"
    assert all(x.startswith(f"    {GRID}:{line}: ") for x in lines[at + 4: at + 4 + 5]), lines[at:]


RULES: list[SeedRule] = [
    SeedRule("registration-offset", "registered_at is an instant: 08:50+02:00 is before the runs at 07:30Z",
             REGISTERED, None, _registered("2026-10-05T08:50:00+02:00"), protect="decision", verify=v_answer_b4),
    SeedRule("registration-negative-offset", "a run before a registration written at -07:00 is before it",
             REGISTERED, "run-before-registration", m_run_before_negative_offset, targets=(B1,)),
    SeedRule("run-on-registration", "a run at the registration instant is not after the registration", REGISTERED,
             "run-before-registration", m_run_on_registration, targets=(B1,)),
    SeedRule("registered-on-window-start", "registered at the window's start (written at -05:00) is too late",
             REGISTERED, "registered-after-start", m_registered_on_start, protect="withheld"),
    SeedRule("registered-a-second-before-start", "registered one second before the window (written at +14:00)",
             REGISTERED, None, _registered("2026-10-05T20:59:59+14:00"), protect="decision", verify=v_answer_b4),
    SeedRule("runs-on-window-edges", "a run may start on the window's start and end on its end and the deadline",
             SCHEDULE, None, m_runs_on_edges, protect="decision", verify=v_answer_b4),
    SeedRule("run-a-microsecond-before-window", "a run starting before the window is outside it", SCHEDULE,
             "run-outside-window", m_run_before_window, targets=(B1,)),
    SeedRule("run-a-microsecond-after-window", "a run ending after the window is outside it", SCHEDULE,
             "run-outside-window", m_run_after_window, targets=(B200_B1,)),
    SeedRule("seven-day-window", "a 7-day package covers a window of exactly 168 h", f"{SCHEDULE}; {P} §5", None,
             m_window_of_seven_days, protect="decision", verify=v_seven_days),
    SeedRule("seven-days-and-a-second", "a 7-day package does not cover 168 h and one second", f"{SCHEDULE}; {P} §5",
             "package-does-not-cover-window", m_window_a_second_longer, targets=RTX_ALL + B200_ALL),
    SeedRule("missing-file-is-the-cause", "the claims of a run without its prediction file follow from that cause",
             f"{P} §1, §4 ids_match", "missing-prediction-file", m_prediction_file_missing, targets=(B4,),
             verify=v_listed_under_the_cause),
]
