"""Issue 31's seed rules (runs), in the form of tests/seed_rules.py; tests/test_seed_rules.py runs them."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from conftest import GRID
from seed_rules import (
    B1,
    B4,
    PROTOCOL,
    RTX,
    RTX_ALL,
    STAMP,
    A,
    P,
    SeedRule,
    Where,
    edit_json,
    edit_protocol,
    line_of,
    meas,
    phase_index,
    set_phase,
    set_row,
    set_rows,
    v_withheld_unmeasured,
)

TIMES = f"{A} 'Die Dauer mit dem vollständigen Zeitplan wählen'"


# ------------------------------------------------------------------------------- durations against measurement


def m_duration_cut(c: Path) -> list[Where]:
    # b1's warm durations typed at 20 s: shorter than its own measured forward passes (~77 s), b1 would win
    lines = [set_row(c, RTX, "b1", "warm", r, elapsed_seconds=f"{20 + r / 10:.1f}") for r in range(1, 6)]
    return [Where(GRID, line, "elapsed_seconds") for line in lines]


def m_duration_inflated(c: Path) -> list[Where]:
    # 95 s claimed for a run whose measurement brackets 31.954 s
    return [Where(GRID, set_row(c, RTX, "b4", "warm", 1, elapsed_seconds="95"), "elapsed_seconds")]


def m_duration_by_hand(c: Path) -> list[Where]:
    # no variant links a measurement: every duration of the grid was typed, nothing times the runs
    def unlink(p: Any) -> None:
        for exp in p["experiments"]:
            for v in exp["variants"]:
                v.pop("measurement")

    edit_protocol(c, unlink)
    return [Where(GRID, line_of(c, RTX, "b1", "cold", 1), "elapsed_seconds")]


# ---------------------------------------------------------------------------------- run times, all or nothing


def _strip(c: Path, rel: str, keep: set[int]) -> None:
    def change(doc: Any) -> None:
        for i, p in enumerate(doc["phases"]):
            if i not in keep:
                p.pop("started_at", None)
                p.pop("ended_at", None)

    edit_json(c, rel, change)


def m_one_phase_undated(c: Path) -> list[Where]:
    # b4's last run ran after the window; only its times were removed, the others kept
    rel = meas(RTX, "b4")
    index = set_phase(c, rel, "warm_forward", 5, started_at="2026-10-09T07:10:00.000000Z",
                      ended_at="2026-10-09T07:10:32.008000Z")
    _strip(c, rel, {i for i in range(9) if i != index})
    return [Where(rel, None, f"/phases/{index}")]


def m_only_model_load_dated(c: Path) -> list[Where]:
    rel = meas(RTX, "b4")
    _strip(c, rel, {0})
    return [Where(rel, None, "/phases/1")]


def m_runs_overlap(c: Path) -> list[Where]:
    # b4's warm run 1 moved into b1's warm run 1 on the one RTX 4090
    rel = meas(RTX, "b4")
    i = set_phase(c, rel, "warm_forward", 1, started_at="2026-10-05T07:38:00.000000Z",
                  ended_at="2026-10-05T07:38:31.954000Z")
    return [Where(rel, None, f"/phases/{i}/started_at"),
            Where(meas(RTX, "b1"), None, f"/phases/{phase_index(c, meas(RTX, 'b1'), 'warm_forward', 1)}/started_at")]


def m_warm_before_model_load(c: Path) -> list[Where]:
    rel = meas(RTX, "b4")
    i = set_phase(c, rel, "warm_forward", 1, started_at="2026-10-05T07:29:00.000000Z",
                  ended_at="2026-10-05T07:29:31.954000Z")
    return [Where(rel, None, f"/phases/{i}/started_at")]


def m_end_pulled_back(c: Path) -> list[Where]:
    # b4's last run started 20 s before the window closed and lasted 32 s; its end was moved onto the edge
    rel = meas(RTX, "b4")
    i = set_phase(c, rel, "warm_forward", 5, started_at="2026-10-09T06:59:40.000000Z",
                  ended_at="2026-10-09T07:00:00.000000Z")
    return [Where(rel, None, f"/phases/{i}/ended_at")]


# ------------------------------------------------------------------------------------------ the registered order


def _retime(c: Path, order: list[tuple[str, int]]) -> None:
    """The RTX experiment's warm runs given true times in `order`, one after the other (30 s between runs)."""
    docs = {v: json.loads((c / meas(RTX, v)).read_text(encoding="utf-8")) for v in ("b1", "b4", "b8")}
    clock = datetime(2026, 10, 5, 8, 0)
    for v, r in order:
        phase = next(p for p in docs[v]["phases"] if p["phase"] == "warm_forward" and p["repeat"] == r)
        length = phase["elapsed_seconds"] if phase["elapsed_seconds"] is not None else 9.629
        phase["started_at"] = clock.strftime(STAMP)
        clock += timedelta(seconds=length)
        phase["ended_at"] = clock.strftime(STAMP)
        clock += timedelta(seconds=30)
    for v, doc in docs.items():
        (c / meas(RTX, v)).write_text(json.dumps(doc, indent=2), encoding="utf-8")


def m_blocked_order(c: Path) -> list[Where]:
    _retime(c, [(v, r) for v in ("b1", "b4", "b8") for r in range(1, 6)])
    return [Where(PROTOCOL, None, "/experiments/0/order")]


def m_same_order_every_round(c: Path) -> list[Where]:
    _retime(c, [(v, r) for r in range(1, 6) for v in ("b8", "b4", "b1")])
    return [Where(PROTOCOL, None, "/experiments/0/order")]


def m_drawn_without_sequence(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: p["experiments"][0].update(order="drawn"))
    return [Where(PROTOCOL, None, "/experiments/0/order")]


def m_b1_cut_everywhere(c: Path) -> list[Where]:
    # every b1 duration of both phases halved: the cold run too is below its measured forward pass
    lines = set_rows(c, RTX, "b1", elapsed_seconds="40")
    return [Where(GRID, line, "elapsed_seconds") for line in lines]


RULES: list[SeedRule] = [
    SeedRule("duration-not-below-measured", "a raw duration of the announced scope includes the measured work",
             f"{P} §4 elapsed_seconds, §3", "duration-below-measured", m_duration_cut, targets=(B1,)),
    SeedRule("duration-all-phases-measured", "no duration below its measured forward pass, cold or warm",
             f"{P} §4 elapsed_seconds, §3", "duration-below-measured", m_b1_cut_everywhere, targets=(B1,)),
    SeedRule("duration-within-bracket", "a raw duration is no longer than its run's dating allows",
             f"{P} §4 elapsed_seconds; {TIMES}", "duration-beyond-bracket", m_duration_inflated, targets=(B4,)),
    SeedRule("duration-measured", "a duration typed by hand is no measurement", f"{P} §4 elapsed_seconds",
             "duration-unmeasured", m_duration_by_hand, protect="decision", verify=v_withheld_unmeasured),
    SeedRule("run-times-all-or-none", "a measurement that dates one phase dates them all", TIMES,
             "run-times-partial", m_one_phase_undated, targets=(B4,)),
    SeedRule("run-times-not-one-stamp", "one dated model load does not date the runs", TIMES, "run-times-partial",
             m_only_model_load_dated, targets=(B4,)),
    SeedRule("runs-one-at-a-time", "no two runs on one device overlap", f"{TIMES}; {P} §3", "runs-overlap",
             m_runs_overlap, targets=(B1, B4)),
    SeedRule("phases-in-order", "a warm run starts after its own model load", f"{P} §3; {TIMES}",
             "run-times-out-of-order", m_warm_before_model_load, targets=(B4,)),
    SeedRule("end-not-pulled-back", "a run's times bracket its own measured work", TIMES, "run-time-bracket-short",
             m_end_pulled_back, targets=(B4,)),
    SeedRule("order-rotated-not-blocked", "rotated: every round runs each variant once", f"{P} §3",
             "run-order-not-registered", m_blocked_order, targets=RTX_ALL),
    SeedRule("order-first-variant-rotates", "rotated: the first variant changes from round to round", f"{P} §3",
             "run-order-not-registered", m_same_order_every_round, targets=RTX_ALL),
    SeedRule("order-drawn-registered", "drawn: the sequence is drawn and registered before the runs", f"{P} §3",
             "drawn-sequence-missing", m_drawn_without_sequence, targets=RTX_ALL),
]
