"""Issue 47 item 1's seed rules (measured evidence is required for an answer), in the form of tests/seed_rules.py;
test_seed_rules.py runs them. Every configuration that can be the answer, or that it is compared with, rests on a
measurement of its own runs with dated phases, each grid row tied to a measured phase."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from conftest import GRID
from seed_rules import (
    B4,
    PROTOCOL,
    RTX,
    A,
    P,
    SeedRule,
    Where,
    edit_json,
    edit_protocol,
    line_of,
    meas,
    v_withheld_unmeasured,
)
from seed_rules_protocol import _second_seed

MEASURED = f"{A} 'Speicher als Machbarkeitskriterium nutzen'; {P} §3"


def unmeasure(c: Path) -> list[Where]:
    """measurements/ deleted and the protocol's links to it removed: every figure of the grid typed by hand."""
    shutil.rmtree(c / "measurements")
    wheres = []

    def unlink(p: Any) -> None:
        for i, exp in enumerate(p["experiments"]):
            for j, v in enumerate(exp["variants"]):
                v.pop("measurement", None)
                wheres.append(Where(PROTOCOL, None, f"/experiments/{i}/variants/{j}/measurement"))

    edit_protocol(c, unlink)
    return wheres


def m_warm_phase_removed(c: Path) -> list[Where]:
    # b4's measurement keeps no warm_forward repeat 2: that row's 40-odd seconds are tied to no measured phase
    edit_json(c, meas(RTX, "b4"), lambda d: d.update(
        phases=[p for p in d["phases"] if not (p["phase"] == "warm_forward" and p.get("repeat") == 2)]))
    return [Where(GRID, line_of(c, RTX, "b4", "warm", 2), "elapsed_seconds")]


def m_cold_run_missing_in_format_2(c: Path) -> list[Where]:
    # both seeds run (a second cold run per variant), and b4's measurement says format 2, which holds each cold run,
    # yet keeps only the first seed's cold process: the second seed's cold run is tied to no measured phase
    _second_seed(c)

    def format_2(doc: Any) -> None:
        doc["schema_version"] = "2"
        next(p for p in doc["phases"] if p["phase"] == "cold_forward")["repeat"] = 1

    edit_json(c, meas(RTX, "b4"), format_2)
    return [Where(GRID, line_of(c, RTX, "b4", "cold", 2), "elapsed_seconds")]


RULES: list[SeedRule] = [
    SeedRule("answer-needs-measurements", "no configuration whose runs were not measured can be the answer: "
             "measurements deleted everywhere withhold it with one plain reason", MEASURED,
             "measurement-not-linked", unmeasure, protect="decision", verify=v_withheld_unmeasured),
    SeedRule("grid-row-measured", "each grid row is tied to a measured phase of its variant's measurement",
             f"{P} §4 elapsed_seconds", "duration-unmeasured", m_warm_phase_removed, targets=(B4,)),
    SeedRule("cold-runs-measured", "a measurement of format 2 holds every cold run (each seed's, each corpus's) in "
             "its fresh process: one it lacks is unmeasured", f"{P} §4 elapsed_seconds", "duration-unmeasured",
             m_cold_run_missing_in_format_2, targets=(B4,)),
]
