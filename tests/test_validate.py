"""`gpu-audit validate`: the example passes; each defect gives exit 1 with an exact message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import GRID, read_grid, set_cell, write_grid

from generator.audit.load.readers.csvtable import convert_cell
from generator.audit.load.schemacheck import check_schema
from generator.core.system.resources import load_schema, schema_names


def first_line_for(out: str, code: str) -> str:
    lines = [ln for ln in out.splitlines() if f" {code}]" in ln]
    assert lines, f"no finding {code} in:\n{out}"
    return lines[0]


def test_example_is_valid(run_cli, campaign: Path) -> None:
    r = run_cli("validate", str(campaign))
    assert r.code == 0, r.out
    assert r.out.strip() == f"{campaign}: 0 errors, 0 warnings, 0 info"


def test_missing_folder_is_usage_error(run_cli, tmp_path: Path) -> None:
    r = run_cli("validate", str(tmp_path / "nope"))
    assert r.code == 2
    assert r.err == (f"gpu-audit: error: campaign folder {str(tmp_path / 'nope')!r} does not exist; give the folder "
                     "holding protocol.json\n")
    assert r.out == ""


def test_missing_column(run_cli, campaign: Path) -> None:
    rows = read_grid(campaign)
    i = rows[0].index("device")
    write_grid(campaign, [r[:i] + r[i + 1:] for r in rows])
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    assert first_line_for(r.out, "missing-column") == (
        "resultats-bruts.csv:1: device: column 'device' is missing (expected as column 9) [error missing-column]")


def test_renamed_column(run_cli, campaign: Path) -> None:
    rows = read_grid(campaign)
    rows[0][rows[0].index("gpu_model")] = "gpu"
    write_grid(campaign, rows)
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    assert first_line_for(r.out, "renamed-column") == (
        "resultats-bruts.csv:1: gpu_model: column 7 is 'gpu' where the grid has 'gpu_model' [error renamed-column]")
    assert "missing-column" not in r.out and "unknown-column" not in r.out


def test_reordered_columns(run_cli, campaign: Path) -> None:
    rows = read_grid(campaign)
    a, b = rows[0].index("batch"), rows[0].index("context")
    for row in rows:
        row[a], row[b] = row[b], row[a]
    write_grid(campaign, rows)
    r = run_cli("validate", str(campaign))
    assert r.code == 0  # read by their names: another order is one warning, naming the first column out of place
    assert first_line_for(r.out, "reordered-columns") == (
        "resultats-bruts.csv:1: context: the columns stand in another order than the seeds': column 15 is 'context' "
        "where the seeds' order has 'batch'; every column is read by its name [warning reordered-columns]")
    assert r.out.count("reordered-columns") == 1


def test_decimal_comma(run_cli, campaign: Path) -> None:
    set_cell(campaign, 2, "elapsed_seconds", "48,649")
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    assert first_line_for(r.out, "decimal-comma") == (
        "resultats-bruts.csv:3: elapsed_seconds: '48,649' uses a decimal comma [error decimal-comma]")
    assert "  fix: write 48.649 (decimal point)" in r.out


def test_empty_and_zero_are_distinct() -> None:
    prop = load_schema("raw-results-row")["properties"]["peak_allocated_bytes"]
    assert convert_cell("", prop) == (None, None)
    assert convert_cell("0", prop) == (0, None)
    elapsed = load_schema("raw-results-row")["properties"]["elapsed_seconds"]
    assert convert_cell("0", elapsed) == (0, None)
    assert convert_cell("0.0", elapsed) == (0.0, None)


def _oom_row(campaign: Path) -> int:
    rows = read_grid(campaign)
    return next(i for i, r in enumerate(rows) if "outcome=oom" in r[-1])


def test_failed_run_with_zero_time_is_a_finding_but_empty_is_not(run_cli, campaign: Path) -> None:
    row = _oom_row(campaign)
    assert read_grid(campaign)[row][read_grid(campaign)[0].index("elapsed_seconds")] == ""
    assert run_cli("validate", str(campaign)).code == 0
    set_cell(campaign, row, "elapsed_seconds", "0")
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    assert first_line_for(r.out, "failed-run-timed-zero") == (
        f"resultats-bruts.csv:{row + 1}: elapsed_seconds: a run declared outcome=oom has elapsed_seconds 0 "
        "[error failed-run-timed-zero]")


def test_completed_run_without_time(run_cli, campaign: Path) -> None:
    set_cell(campaign, 1, "elapsed_seconds", "")
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    assert first_line_for(r.out, "missing-duration") == (
        "resultats-bruts.csv:2: elapsed_seconds: a completed run has no elapsed_seconds [error missing-duration]")


def test_non_boolean_ids_match(run_cli, campaign: Path) -> None:
    set_cell(campaign, 4, "ids_match", "yes")
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    assert first_line_for(r.out, "not-boolean") == (
        "resultats-bruts.csv:5: ids_match: 'yes' is not a boolean [error not-boolean]")
    assert "  fix: write true or false (lower case)" in r.out


def test_unquoted_comma_in_notes(run_cli, campaign: Path) -> None:
    lines = (campaign / GRID).read_text(encoding="utf-8").split("\n")
    lines[3] = lines[3] + " (slow start, see log)"  # the notes cell is last and unquoted
    (campaign / GRID).write_text("\n".join(lines), encoding="utf-8")
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    assert first_line_for(r.out, "field-count") == (
        "resultats-bruts.csv:4: 39 fields where the header has 38 [error field-count]")
    assert '  fix: a comma inside a cell (notes?) must be quoted: "..."' in r.out


def test_quoted_comma_and_newline_in_notes_are_fine(run_cli, campaign: Path) -> None:
    rows = read_grid(campaign)
    rows[3][-1] += ", second line\nthird line"
    write_grid(campaign, rows)
    assert run_cli("validate", str(campaign)).code == 0


def test_duplicate_row_key(run_cli, campaign: Path) -> None:
    rows = read_grid(campaign)
    write_grid(campaign, rows + [rows[5]])
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    key = "/".join([rows[5][0], rows[5][1], rows[5][16], rows[5][17]])
    assert first_line_for(r.out, "duplicate-row-key") == (
        f"resultats-bruts.csv:{len(rows) + 1}: run_index: attempt {key} already on line 6 [error duplicate-row-key]")


def test_unknown_variant(run_cli, campaign: Path) -> None:
    set_cell(campaign, 1, "variant_id", "b16")
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    assert first_line_for(r.out, "unknown-variant") == (
        "resultats-bruts.csv:2: variant_id: variant_id 'b16' is not declared for experiment 'rtx4090-batch' "
        "[error unknown-variant]")


def test_prediction_path_escaping_through_identifier(run_cli, campaign: Path) -> None:
    set_cell(campaign, 1, "variant_id", "../../../../../../etc")
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    assert first_line_for(r.out, "path-outside-campaign") == (
        "resultats-bruts.csv:2: variant_id: the prediction file of this row, "
        "'predictions/rtx4090-batch/../../../../../../etc/cold-1.csv', would leave the campaign folder "
        "[error path-outside-campaign]")


def test_prediction_path_escaping_through_pattern(run_cli, campaign: Path) -> None:
    proto = json.loads((campaign / "protocol.json").read_text())
    proto["files"]["predictions"] = "../elsewhere/{experiment_id}/{variant_id}/{phase}-{run_index}.csv"
    (campaign / "protocol.json").write_text(json.dumps(proto))
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    # once, on the protocol's field (the template is at fault), not on each of the 36 grid rows
    assert first_line_for(r.out, "path-outside-campaign") == (
        "protocol.json: /files/predictions: the prediction file template "
        "'../elsewhere/{experiment_id}/{variant_id}/{phase}-{run_index}.csv' (a run's file would be "
        "'../elsewhere/experiment/variant/cold-1.csv') leaves the campaign folder [error path-outside-campaign]")
    assert r.out.count("path-outside-campaign") == 1


def test_prediction_symlink_out_of_folder_is_refused(run_cli, campaign: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.csv"
    outside.write_text("id,label\n")
    target = campaign / "predictions" / "rtx4090-batch" / "b1" / "cold-1.csv"
    target.unlink()
    target.symlink_to(outside)
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    assert "'predictions/rtx4090-batch/b1/cold-1.csv', would leave the campaign folder" in r.out


def test_missing_prediction_file(run_cli, campaign: Path) -> None:
    (campaign / "predictions" / "b200-batch" / "b4" / "warm-2.csv").unlink()
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    assert first_line_for(r.out, "missing-prediction-file") == (
        "predictions/b200-batch/b4/warm-2.csv: the prediction file of this run attempt is missing "
        "[error missing-prediction-file]")


def test_malformed_measurement_json(run_cli, campaign: Path) -> None:
    path = campaign / "measurements" / "b200-batch-b4.json"
    text = path.read_text()
    path.write_text(text.replace('"batch": 4,', '"batch": 4', 1))
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    line = text[: text.index('"batch": 4,')].count("\n") + 2
    assert first_line_for(r.out, "malformed-json") == (
        f"measurements/b200-batch-b4.json:{line}: malformed JSON: Expecting ',' delimiter "
        f"(line {line}, column 5) [error malformed-json]")


def test_measurement_schema_violation_names_the_path(run_cli, campaign: Path) -> None:
    path = campaign / "measurements" / "b200-batch-b4.json"
    doc = json.loads(path.read_text())
    doc["phases"][2]["peak_allocated_bytes"] = -5
    path.write_text(json.dumps(doc))
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    assert first_line_for(r.out, "schema-violation") == (
        "measurements/b200-batch-b4.json: /phases/2/peak_allocated_bytes: -5 is less than the minimum of 0 "
        "[error schema-violation]")


def test_duplicate_json_key(run_cli, campaign: Path) -> None:
    path = campaign / "protocol.json"
    text = path.read_text()
    path.write_text(text.replace('"scenario": "offline-corpus",', '"scenario": "offline-corpus", "scenario": "x",'))
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    assert first_line_for(r.out, "duplicate-key") == (
        "protocol.json: key 'scenario' appears twice in one object [error duplicate-key]")


def test_tariff_with_non_integer_price(run_cli, campaign: Path) -> None:
    path = campaign / "tarifs-forfaits.csv"
    path.write_text(path.read_text().replace(",11000,", ",110.00,"))
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    assert first_line_for(r.out, "not-integer") == (
        "tarifs-forfaits.csv:2: price_per_lot_usd_minor: '110.00' is not a whole number [error not-integer]")


def test_bom_and_crlf_are_accepted(run_cli, campaign: Path) -> None:
    path = campaign / GRID
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))
    assert run_cli("validate", str(campaign)).code == 0


def test_invalid_utf8(run_cli, campaign: Path) -> None:
    path = campaign / GRID
    data = path.read_bytes()
    cut = data.index(b"\n", data.index(b"\n") + 1) + 1  # start of line 3
    path.write_bytes(data[:cut] + b"\xff" + data[cut:])
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    assert first_line_for(r.out, "invalid-encoding") == (
        f"resultats-bruts.csv:3: invalid UTF-8 at byte {cut} [error invalid-encoding]")


def test_json_output_lists_findings(run_cli, campaign: Path) -> None:
    set_cell(campaign, 4, "ids_match", "yes")
    r = run_cli("validate", "--json", str(campaign))
    assert r.code == 1
    data = json.loads(r.out)
    assert data["counts"] == {"error": 1, "warning": 0, "info": 0}
    f = data["findings"][0]
    assert (f["code"], f["file"], f["line"], f["field"], f["value"]) == ("not-boolean", GRID, 5, "ids_match", "yes")


def test_findings_are_capped_with_a_count(run_cli, campaign: Path) -> None:
    rows = read_grid(campaign)
    col = rows[0].index("ids_match")
    for row in rows[1:]:
        row[col] = "maybe"
    write_grid(campaign, rows)
    r = run_cli("validate", "--max-findings", "3", str(campaign))
    assert r.code == 1
    assert r.out.count("[error not-boolean]") == 3
    assert f"... and {len(rows) - 1 - 3} more findings not listed (raise --max-findings to list them)" in r.out
    assert r.out.rstrip().endswith(f"{len(rows) - 1} errors, 0 warnings, 0 info")


def test_label_outside_classes_in_predictions_is_a_warning(run_cli, campaign: Path) -> None:
    path = campaign / "predictions" / "b200-batch" / "b1" / "warm-1.csv"
    lines = path.read_text().splitlines()
    lines[10] = lines[10].split(",")[0] + ",kernel"
    path.write_text("\n".join(lines) + "\n")
    r = run_cli("validate", str(campaign))
    assert r.code == 0  # an honest format failure is an observation for `check`, not a broken input
    assert first_line_for(r.out, "unknown-label") == (
        "predictions/b200-batch/b1/warm-1.csv:11: 1 labels outside the declared classes "
        "(first: line 11: 'kernel') [warning unknown-label]")


@pytest.mark.parametrize("name", schema_names())
def test_schema_is_valid_against_metaschema(name: str) -> None:
    schema = load_schema(name)
    check_schema(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].startswith("urn:gpu-audit:schema:")
    assert schema["title"] and schema["description"]


def test_grid_schema_has_the_seed_columns() -> None:
    columns = load_schema("raw-results-row")["x-csv-columns"]
    assert len(columns) == 38
    assert columns[0] == "experiment_id" and columns[-1] == "notes"


@pytest.mark.parametrize(("delimiter", "named"), [(";", "semicolons (';')"), ("\t", "tabs")])
@pytest.mark.parametrize("name", [GRID, "reference.csv"])
def test_a_semicolon_or_tab_delimited_file_is_one_finding(run_cli, campaign: Path, name: str, delimiter: str,
                                                          named: str) -> None:
    path = campaign / name
    path.write_text(path.read_text(encoding="utf-8").replace(",", delimiter), encoding="utf-8")
    if name == GRID:  # the notes' own commas were quoted: a spreadsheet unquotes them
        path.write_text(path.read_text(encoding="utf-8").replace('"', ""), encoding="utf-8")
    r = run_cli("validate", str(campaign))
    assert r.code == 1
    about = [ln for ln in r.out.splitlines() if ln.startswith(f"{name}")]
    assert about == [f"{name}:1: the file's fields are separated by {named}, not commas (as a spreadsheet set to a "
                     "French or German locale saves it); it was not read further [error csv-delimiter]"], r.out
    assert "fix: save it as comma-separated CSV in UTF-8" in r.out


def test_a_semicolon_delimited_prediction_file_is_one_finding(run_cli, campaign: Path) -> None:
    path = sorted((campaign / "predictions").rglob("*.csv"))[0]
    path.write_text(path.read_text(encoding="utf-8").replace(",", ";"), encoding="utf-8")
    r = run_cli("validate", str(campaign))
    shown = path.relative_to(campaign).as_posix()
    about = [ln for ln in r.out.splitlines() if ln.startswith(shown)]
    assert about == [f"{shown}:1: the file's fields are separated by semicolons (';'), not commas (as a spreadsheet "
                     "set to a French or German locale saves it); it was not read further [warning csv-delimiter]"]


def test_an_empty_notes_cell_means_not_recorded(run_cli, campaign: Path) -> None:
    rows = read_grid(campaign)
    notes = rows[0].index("notes")
    for row in rows[1:]:
        if "outcome=" not in row[notes]:  # a failed attempt's notes say so: those stay
            row[notes] = ""
    write_grid(campaign, rows)
    r = run_cli("validate", str(campaign))
    assert "missing-value" not in r.out
    assert r.code == 0, r.out


def test_counts_are_singular_for_one(run_cli, campaign: Path) -> None:
    set_cell(campaign, 4, "ids_match", "yes")
    r = run_cli("validate", str(campaign))
    assert r.out.strip().endswith(f"{campaign}: 1 error, 0 warnings, 0 info"), r.out


def test_every_loaded_input_has_its_rules_and_no_rule_waits_for_an_input_never_loaded() -> None:
    """validate walks load.SECTIONS and runs RULES[section] after each input's findings of loading: a section
    without an entry would stop validate, and an entry of no section would be rules that never run."""
    from generator.audit.load.load import SECTIONS
    from generator.audit.validate.rules import RULES

    assert list(RULES) == list(SECTIONS)
