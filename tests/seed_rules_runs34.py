"""Issue 34's seed rules on runs (input order, set-up time, resumes), in the form of tests/seed_rules.py."""

from __future__ import annotations

import copy
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

from conftest import read_grid, write_grid
from seed_rules import (
    B4,
    PROTOCOL,
    RTX,
    STAMP,
    A,
    SeedRule,
    Where,
    _parse,
    edit_json,
    edit_protocol,
    meas,
)

# ------------------------------------------------------------------------- input order as a declared variable

ORDER = "rtx4090-order"
BY_IDS, BY_LENGTH = f"{ORDER}/ids", f"{ORDER}/by-length"
ID_ORDER, LENGTH_ORDER = "expected-ids.csv order", "grouped by length, shortest first"
FASTER_S = 5.0  # how much faster the grouped runs are made, so that the grouped variant answers


def _shift(stamp: str, delta: timedelta) -> str:
    return (_parse(stamp) + delta).strftime(STAMP)


def _copy_variant(c: Path, variant: str, value: str, later: timedelta, faster: float) -> None:
    """rtx4090-batch/b4's rows, predictions and measurement copied as variant `variant` of rtx4090-order: its
    measurement records the input order `value` (none when empty), its phases `later`, its warm runs `faster`."""
    rows = read_grid(c)
    h = rows[0]
    for r in [r for r in rows[1:] if r[h.index("experiment_id")] == RTX and r[h.index("variant_id")] == "b4"]:
        new = list(r)
        new[h.index("experiment_id")], new[h.index("variant_id")] = ORDER, variant
        if new[h.index("phase")] == "warm":
            new[h.index("elapsed_seconds")] = f"{float(new[h.index('elapsed_seconds')]) - faster:.3f}"
        rows.append(new)
    write_grid(c, rows)
    shutil.copytree(c / "predictions" / RTX / "b4", c / "predictions" / ORDER / variant)
    shutil.copyfile(c / meas(RTX, "b4"), c / meas(ORDER, variant))

    def describe(doc: Any) -> None:
        doc["run"] = {"experiment_id": ORDER, "variant_id": variant}
        if value:
            doc["configuration"]["input_order"] = value
        for p in doc["phases"]:
            p["started_at"], p["ended_at"] = _shift(p["started_at"], later), _shift(p["ended_at"], later)
            if p["phase"] == "warm_forward":
                p["elapsed_seconds"] = round(p["elapsed_seconds"] - faster, 3)

    edit_json(c, meas(ORDER, variant), describe)


def _order_experiment(c: Path, grouped_records: str = LENGTH_ORDER) -> None:
    """A third experiment on one more rtx-4090 lot declares input_order: the expected-IDs order, and the texts
    grouped by length (003 'Beispiel'), both at batch 4. The grouped runs are the faster ones, so it answers."""
    def add(p: Any) -> None:
        exp = copy.deepcopy(p["experiments"][0])
        exp.update(id=ORDER, variable="input_order", description="Input order series on one rtx-4090 lot.",
                   variants=[{"id": "ids", "value": ID_ORDER, "measurement": meas(ORDER, "ids")},
                             {"id": "by-length", "value": LENGTH_ORDER, "measurement": meas(ORDER, "by-length")}])
        exp["fixed"].update(batch=4, input_order=None)
        exp.pop("order")  # two copies of one series: their start times prove no rotation
        p["experiments"].append(exp)

    edit_protocol(c, add)
    _copy_variant(c, "ids", ID_ORDER, timedelta(days=1), 0.0)
    _copy_variant(c, "by-length", grouped_records, timedelta(days=2), FASTER_S)


def m_order_declared(c: Path) -> list[Where]:
    _order_experiment(c)
    return []


def v_order_declared(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == BY_LENGTH, decision["decision"]
    grouped = next(x for x in decision["configurations"] if x["id"] == BY_LENGTH)
    assert (grouped["variable"], grouped["value"]) == ("input_order", LENGTH_ORDER)
    assert grouped["measurement"]["configuration"]["input_order"] == LENGTH_ORDER


def m_order_not_recorded(c: Path) -> list[Where]:
    _order_experiment(c, grouped_records="")
    return [Where(PROTOCOL, None, "/experiments/2/variants/1")]


def m_order_other(c: Path) -> list[Where]:
    # the grouped variant's measurement ran the texts in the expected-IDs order: nothing was grouped
    _order_experiment(c, grouped_records=ID_ORDER)
    return [Where(meas(ORDER, "by-length"), None, "/configuration/input_order")]


def m_order_not_declared(c: Path) -> list[Where]:
    # b4 grouped its texts by length while the batch series holds the expected-IDs order fixed
    edit_json(c, meas(RTX, "b4"), lambda d: d["configuration"].update(input_order=LENGTH_ORDER))
    return [Where(meas(RTX, "b4"), None, "/configuration/input_order")]


_EXAMPLE = f"{A} 'Beispiel: dieselben 1.000 Texte klassifizieren'"
RULES: list[SeedRule] = [
    SeedRule("input-order-declared", "grouping the inputs by length is a variant declared with its own input "
             "order, and ranked like any other", _EXAMPLE, None, m_order_declared, protect="decision",
             verify=v_order_declared),
    SeedRule("input-order-recorded", "each variant of an input-order series records the order it ran in its "
             "measurement", _EXAMPLE, "input-order-unrecorded", m_order_not_recorded, targets=(BY_LENGTH,)),
    SeedRule("input-order-variant", "a variant's runs apply its registered input order", _EXAMPLE,
             "measurement-config-mismatch", m_order_other, targets=(BY_LENGTH,)),
    SeedRule("input-order-held", "an input order held fixed is the order every variant ran: grouping by length "
             "is a new variant to declare", _EXAMPLE, "measurement-config-mismatch", m_order_not_declared,
             targets=(B4,)),
]


