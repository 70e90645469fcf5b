"""Issue 49 item 5's seed rules for the grid as spreadsheets save it, in the form of tests/seed_rules.py;
test_seed_rules.py runs them. The seeds distribute the grid's header (§4: "Die verteilte CSV enthält nur die
Kopfzeilen"): its 38 columns are read by their names, in any order; a grid that cannot be read is one error, and
what follows from it is named under it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import GRID, read_grid, write_grid
from seed_rules import L, P, SeedRule, Where

HEADER = f"{P} §4 (the distributed CSV holds only the headers); {L} Inhalt"


def m_columns_shuffled(c: Path) -> list[Where]:
    # the columns moved as a spreadsheet user moves them: notes first, batch after run_index
    rows = read_grid(c)
    order = [rows[0].index("notes")] + [i for i, name in enumerate(rows[0]) if name != "notes"]
    write_grid(c, [[r[i] for i in order] for r in rows])
    return [Where(GRID, 1, "notes")]


def v_one_order_warning(decision: dict[str, Any], findings: list[Any]) -> None:
    mine = [f for f in findings if f.code == "reordered-columns"]
    assert len(mine) == 1 and mine[0].shared_input == "grid" and mine[0].value == "notes", mine
    assert "column 1 is 'notes' where the seeds' order has 'experiment_id'" in mine[0].message
    assert not any(f.is_error for f in findings), [f.code for f in findings if f.is_error]


def m_names_as_a_spreadsheet_writes_them(c: Path) -> list[Where]:
    rows = read_grid(c)
    rows[0] = [name.upper() if name in ("batch", "context") else name + " " if name == "notes" else name
               for name in rows[0]]
    write_grid(c, rows)
    return [Where(GRID, 1, "batch")]


def v_names_read(decision: dict[str, Any], findings: list[Any]) -> None:
    (f,) = [f for f in findings if f.code == "column-name-variant"]
    assert f.value == "BATCH" and "'notes ' (column 38) as notes" in f.message, f.message
    assert not any(f.is_error for f in findings), [f.code for f in findings if f.is_error]


def m_semicolons(c: Path) -> list[Where]:
    # saved by a spreadsheet set to a French or German locale
    rows = read_grid(c)
    (c / GRID).write_text("\n".join(";".join(r) for r in rows) + "\n", encoding="utf-8")
    return [Where(GRID, 1)]


def v_one_error_and_its_follow_ons(decision: dict[str, Any], findings: list[Any]) -> None:
    errors = [f for f in findings if f.is_error]
    (cause,) = [f for f in errors if f.caused_by is None]
    assert cause.code == "csv-delimiter" and cause.follow_ons.count == len(errors) - 1 > 0, cause
    assert decision["finding_counts"]["error"] == len(errors)
    delimiter = next(f for f in decision["findings"] if f["code"] == "csv-delimiter")
    assert delimiter["follow_ons"]["count"] == len(errors) - 1 and len(delimiter["follow_ons"]["first"]) == 5


RULES = [
    SeedRule("grid-read-by-header", "the grid's columns are read by their names: another order is named once and "
             "changes nothing of the decision", HEADER, "reordered-columns", m_columns_shuffled, protect="warning",
             severity="warning", verify=v_one_order_warning),
    SeedRule("grid-column-names-as-written", "a column name in another case or with spaces around it is read as "
             "the seeds' column, and named", HEADER, "column-name-variant", m_names_as_a_spreadsheet_writes_them,
             protect="warning", severity="warning", verify=v_names_read),
    SeedRule("grid-unreadable-one-cause", "a grid saved with ';' is one error; the missing attempts that follow "
             "from it are named under it", f"{P} §4 (usual CSV rules)", "csv-delimiter", m_semicolons,
             protect="withheld", verify=v_one_error_and_its_follow_ons),
]
