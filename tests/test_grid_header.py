"""Issue 49 item 5: the grid read by its header in any order, and the findings that follow from one cause grouped
under it (terminal, check --json, decision.json)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from conftest import EXAMPLE, GRID, read_grid, write_grid

from generator.audit.check import check_campaign
from generator.audit.load.findings import Finding, FindingRef, sort_key
from generator.audit.load.readers.csvheader import read_header
from generator.audit.report import format_findings
from generator.core.system.resources import load_schema

COLUMNS: list[str] = load_schema("raw-results-row")["x-csv-columns"]
DECIDED = ("campaign", "rule", "window", "experiments", "configurations", "decision")
_EXAMPLE: dict[str, Any] = {}


def _example() -> dict[str, Any]:
    if not _EXAMPLE:
        _EXAMPLE.update(check_campaign(EXAMPLE).decision)
    return _EXAMPLE


def _decided(decision: dict[str, Any]) -> dict[str, Any]:
    return {k: decision[k] for k in DECIDED}


def _codes(findings: list[Finding]) -> list[str]:
    return sorted(f.code for f in findings)


def test_shuffled_columns_give_the_same_decision_and_one_warning(campaign: Path) -> None:
    rows = read_grid(campaign)
    order = list(range(len(COLUMNS)))
    random.Random(49).shuffle(order)
    write_grid(campaign, [[r[i] for i in order] for r in rows])
    result = check_campaign(campaign)
    assert _decided(result.decision) == _decided(_example())
    added = [f for f in result.findings if f.code == "reordered-columns"]
    assert _codes(result.findings) == sorted([*_codes(check_campaign(EXAMPLE).findings), "reordered-columns"])
    (f,) = added
    first = COLUMNS[order[0]]
    assert (f.severity.value, f.file, f.line, f.field, f.value) == ("warning", GRID, 1, first, first)
    assert f.message.startswith(f"the columns stand in another order than the seeds': column 1 is {first!r} where "
                                "the seeds' order has 'experiment_id'")


def test_names_in_another_case_with_a_bom_or_spaces_are_read_with_one_warning(campaign: Path) -> None:
    rows = read_grid(campaign)
    written = {"experiment_id": "\ufeffExperiment_ID", "batch": "Batch ", "notes": " NOTES"}
    rows[0] = [written.get(c, c) for c in rows[0]]
    write_grid(campaign, rows)
    result = check_campaign(campaign)
    assert _decided(result.decision) == _decided(_example())
    (f,) = [f for f in result.findings if f.code not in {g.code for g in check_campaign(EXAMPLE).findings}]
    # The file's byte-order mark is the encoding's (read silently); the case and the spaces are named as written.
    assert (f.code, f.severity.value, f.field, f.value) == ("column-name-variant", "warning", "experiment_id",
                                                            "Experiment_ID")
    assert "3 column names are written otherwise than the seeds write them" in f.message
    assert "'Batch ' (column 15) as batch" in f.message and "' NOTES' (column 38) as notes" in f.message


def test_a_missing_and_an_unknown_column_are_named_as_written() -> None:
    header = [c for c in COLUMNS if c != "device"] + ["P95 seconds"]
    random.Random(5).shuffle(header)
    head = read_header(header, COLUMNS, [], GRID)
    # One unknown name beside one missing column reads as a rename, wherever it stands.
    (f,) = [f for f in head.findings if f.is_error]
    assert (f.code, f.field, f.value, f.fix) == ("renamed-column", "device", "P95 seconds",
                                                 "rename the column to 'device'")
    header.append("p50")
    head = read_header(header, COLUMNS, [], GRID)
    found = {(f.code, f.field, f.value) for f in head.findings if f.is_error}
    assert found == {("missing-column", "device", None), ("unknown-column", "P95 seconds", "P95 seconds"),
                     ("unknown-column", "p50", "p50")}
    missing = next(f for f in head.findings if f.code == "missing-column")
    assert missing.fix == "add the column 'device' (in any position); leave its cells empty when not recorded"
    assert head.columns.count(None) == 2 and len(head.columns) == len(header)


def test_a_column_named_twice_in_two_cases_is_one_error() -> None:
    head = read_header([*COLUMNS, "Batch"], COLUMNS, [], GRID)
    (f,) = head.findings
    assert (f.code, f.field, f.value) == ("duplicate-column", "batch", "Batch")
    assert f.message == f"column 'batch' appears 2 times (columns 15, {len(COLUMNS) + 1})"
    assert head.columns[-1] is None  # read from its first column


def test_the_optional_tariff_source_is_read_anywhere() -> None:
    schema = load_schema("tariffs-row")
    expected, optional = schema["x-csv-columns"], schema["x-csv-optional-columns"]
    assert read_header(expected, expected, optional, "t.csv").findings == []
    head = read_header([*optional, *expected], expected, optional, "t.csv")
    assert [f.code for f in head.findings] == ["reordered-columns"] and head.columns[0] == optional[0]


def _semicolons(campaign: Path) -> None:
    rows = read_grid(campaign)
    (campaign / GRID).write_text("\n".join(";".join(r) for r in rows) + "\n", encoding="utf-8")


def test_a_semicolon_grid_is_one_error_with_its_follow_ons(campaign: Path) -> None:
    _semicolons(campaign)
    result = check_campaign(campaign)
    errors = [f for f in result.findings if f.is_error]
    causes = [f for f in errors if f.caused_by is None]
    assert [f.code for f in causes] == ["csv-delimiter"]
    cause = causes[0]
    follow = [f for f in result.findings if f.caused_by is not None]
    assert len(follow) == len(errors) - 1 == 36 and {f.code for f in follow} == {"missing-attempt"}
    assert all(f.caused_by == FindingRef.of(cause) for f in follow)
    assert cause.follow_ons is not None and (cause.follow_ons.count, cause.follow_ons.errors) == (36, 36)
    assert cause.follow_ons.first == tuple(FindingRef.of(f) for f in sorted(follow, key=sort_key)[:5])
    # The counts stay honest: every follow-on is a finding, and the answer is withheld by the cause.
    assert result.decision["finding_counts"]["error"] == 37
    assert result.decision["decision"]["status"] == "withheld"
    text = format_findings(result.findings, subject="c", max_findings=200).splitlines()
    at = text.index(next(t for t in text if t.endswith("[error csv-delimiter]")))
    assert text[at + 3] == "  36 further findings follow from it (fix it first); the first 5:"
    assert text[at + 4] == ("    resultats-bruts.csv: run_index: no row for rtx4090-batch/b1 warm run 1 (5 warm runs "
                            "registered) [error missing-attempt]")
    assert text[at + 9] == "    ... and 31 more (--json lists each, its caused_by naming csv-delimiter)"
    assert sum("missing-attempt" in t for t in text) == 5
    assert text[-1] == "c: 1 error (+36 that follow from it), 1 warning, 0 info"


def test_check_json_tells_a_script_which_findings_follow(campaign: Path, run_cli) -> None:
    _semicolons(campaign)
    r = run_cli("check", str(campaign), "--json")
    assert r.code == 1
    findings = json.loads(r.out)["findings"]
    (cause,) = [f for f in findings if "follow_ons" in f]
    assert cause["code"] == "csv-delimiter" and cause["follow_ons"]["count"] == 36
    assert cause["follow_ons"]["first"][0] == {
        "code": "missing-attempt", "severity": "error", "file": GRID, "line": None, "field": "run_index"}
    ref = {k: cause[k] for k in ("code", "severity", "file", "line", "field")}
    assert sum(f.get("caused_by") == ref for f in findings) == 36
    assert all("caused_by" not in f and "follow_ons" not in f for f in findings if f["code"] == "registration-"
               "not-sealed")


def test_a_missing_row_key_column_is_the_cause_of_the_missing_attempts(campaign: Path) -> None:
    rows = read_grid(campaign)
    i = rows[0].index("run_index")
    write_grid(campaign, [r[:i] + r[i + 1:] for r in rows])
    result = check_campaign(campaign)
    (cause,) = [f for f in result.findings if f.is_error and f.caused_by is None]
    assert (cause.code, cause.field) == ("missing-column", "run_index")
    assert cause.follow_ons is not None and cause.follow_ons.count == 36


def test_a_missing_column_is_the_cause_of_the_findings_on_its_cells(campaign: Path) -> None:
    rows = read_grid(campaign)
    i = rows[0].index("elapsed_seconds")
    write_grid(campaign, [r[:i] + r[i + 1:] for r in rows])
    result = check_campaign(campaign)
    (cause,) = [f for f in result.findings if f.is_error and f.caused_by is None]
    assert (cause.code, cause.field) == ("missing-column", "elapsed_seconds")
    follow = [f for f in result.findings if f.caused_by is not None]
    assert follow and {f.field for f in follow} == {"elapsed_seconds"}
    assert cause.follow_ons is not None and cause.follow_ons.count == len(follow)


def test_the_note_names_the_follow_ons_under_their_cause(campaign: Path) -> None:
    import html
    import re

    from generator.render.page.note import render_html

    _semicolons(campaign)
    decision = check_campaign(campaign).decision

    def text(language: str) -> str:
        return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", render_html(decision, language=language))))

    english = text("en")
    assert "Errors (37) 36 of them follow from another finding and are named under it." in english
    assert "36 further findings follow from it (fix it first); the first 5: missing-attempt (resultats-bruts.csv): " \
           "no row for rtx4090-batch/b1 warm run 1" in english
    assert english.count("missing-attempt (resultats-bruts.csv): no row") == 5
    assert "The others are listed in decision.json, each with caused_by naming this finding." in english
    german = text("de")
    assert "36 davon folgen aus einem anderen Befund und stehen unter diesem." in german
    assert "36 weitere Befunde folgen daraus (zuerst diesen beheben); die ersten 5:" in german


def test_a_syntax_error_is_the_cause_of_the_rows_it_left_unread_only() -> None:
    from generator.audit.load.findings import Severity, make_finding
    from generator.audit.load.readers.csvtable import Table
    from generator.audit.validate import followons

    syntax = make_finding("csv-syntax", Severity.ERROR, GRID, "CSV syntax error", line=9)
    grid = Table(file=GRID, header=COLUMNS, rows=[{}], lines=[2], findings=[syntax])
    absent = make_finding("missing-attempt", Severity.ERROR, GRID, "no row for e/v warm run 5", field="run_index")
    own = make_finding("quality-value-mismatch", Severity.ERROR, GRID, "a row read before it", line=3,
                       field="quality_value")
    elsewhere = make_finding("missing-attempt", Severity.ERROR, "other.csv", "not the grid's", field="run_index")
    linked = followons.link([syntax, absent, own, elsewhere], grid)
    assert [f.caused_by for f in linked] == [None, FindingRef.of(syntax), None, None]
    assert linked[0].follow_ons is not None and linked[0].follow_ons.count == 1
