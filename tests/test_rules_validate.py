"""Rules of the seeds that `check` enforces on its inputs' form (issue 15, item 4 h-k).

Each test plants one defect in a copy of inputs/example and asserts the finding's code, file, line and field:
another module attributes findings to configurations from exactly these.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLE, GRID, set_cell

from generator.audit.check import check_campaign
from generator.audit.load.findings import Finding, Severity
from generator.audit.validate.validate import validate_campaign
from generator.core import instants
from generator.core.metrics import METRICS

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: shows what follows reversed
ZWSP = "\u200b"  # ZERO WIDTH SPACE


def _protocol(campaign: Path) -> dict:
    return json.loads((campaign / "protocol.json").read_text(encoding="utf-8"))


def _write_protocol(campaign: Path, proto: dict) -> None:
    (campaign / "protocol.json").write_text(json.dumps(proto, ensure_ascii=False), encoding="utf-8")


def _with(findings: list[Finding], code: str) -> list[Finding]:
    return [f for f in findings if f.code == code]


def _where(findings: list[Finding], code: str) -> list[tuple[str, str, int | None, str | None]]:
    return sorted(((f.severity.value, f.file, f.line, f.field) for f in _with(findings, code)),
                  key=lambda t: (t[1], t[2] or 0, t[3] or ""))


def _replace_line(path: Path, line: int, text: str) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[line - 1] = text
    path.write_text("\n".join(lines), encoding="utf-8")


# ------------------------------------------------------------------------------ h. paths of protocol.json

@pytest.mark.parametrize("template", ["../x/{experiment_id}/{variant_id}/{phase}-{run_index}.csv",
                                      "/tmp/{experiment_id}/{variant_id}/{phase}-{run_index}.csv",
                                      "predictions/../../{experiment_id}/{variant_id}/{phase}-{run_index}.csv"])
def test_a_prediction_template_leaving_the_folder_is_one_finding_on_the_protocol(campaign: Path,
                                                                                 template: str) -> None:
    proto = _protocol(campaign)
    proto["files"]["predictions"] = template
    _write_protocol(campaign, proto)
    findings = check_campaign(campaign).findings
    assert _where(findings, "path-outside-campaign") == [("error", "protocol.json", None, "/files/predictions")]
    (only,) = _with(findings, "path-outside-campaign")
    assert only.value == template and "files.predictions" in (only.fix or "")
    # no missing-prediction-file either: the files were never looked for outside
    assert not _with(findings, "missing-prediction-file")


def test_a_prediction_folder_linked_out_is_one_finding_on_the_template(campaign: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    (campaign / "predictions").rename(outside)
    (campaign / "predictions").symlink_to(outside)
    findings = validate_campaign(campaign).findings
    assert _where(findings, "path-outside-campaign") == [("error", "protocol.json", None, "/files/predictions")]


def test_a_row_whose_own_identifier_leaves_a_safe_template_keeps_its_row_finding(campaign: Path) -> None:
    set_cell(campaign, 1, "variant_id", "../../../../../../etc")
    findings = check_campaign(campaign).findings
    assert _where(findings, "path-outside-campaign") == [("error", GRID, 2, "variant_id")]


@pytest.mark.parametrize("key", ["expected_ids", "reference", "raw_results", "tariffs"])
def test_a_file_path_leaving_the_folder_is_reported_at_its_protocol_field(campaign: Path, key: str) -> None:
    proto = _protocol(campaign)
    proto["files"][key] = "../outside/secret.csv"
    _write_protocol(campaign, proto)
    findings = check_campaign(campaign).findings
    assert _where(findings, "path-outside-campaign") == [("error", "protocol.json", None, f"/files/{key}")]
    assert f"files.{key}" in (_with(findings, "path-outside-campaign")[0].fix or "")


def test_a_measurement_path_leaving_the_folder_is_reported_at_its_variant(campaign: Path) -> None:
    proto = _protocol(campaign)
    proto["experiments"][1]["variants"][2]["measurement"] = "../b200-batch-b8.json"
    _write_protocol(campaign, proto)
    findings = check_campaign(campaign).findings
    assert _where(findings, "path-outside-campaign") == [
        ("error", "protocol.json", None, "/experiments/1/variants/2/measurement")]


# ------------------------------------------------------------------------------ i. window times and DST

@pytest.mark.parametrize(("where", "start", "end", "deadline", "code"), [
    ("/window/start", "2027-03-28T02:30", "2027-03-30T09:00", "2027-03-30T18:00", "window-time-nonexistent"),
    ("/window/end", "2026-10-23T09:00", "2026-10-25T02:30", "2026-10-26T18:00", "window-time-ambiguous"),
    ("/deadline", "2026-10-21T09:00", "2026-10-24T09:00", "2026-10-25T02:00", "window-time-ambiguous"),
    ("/deadline", "2027-03-24T09:00", "2027-03-27T09:00", "2027-03-28T02:00", "window-time-nonexistent"),
])
def test_window_times_in_a_daylight_saving_gap_or_overlap_are_findings(campaign: Path, where: str, start: str,
                                                                       end: str, deadline: str, code: str) -> None:
    proto = _protocol(campaign)
    proto["window"].update(start=start, end=end)
    proto["deadline"] = deadline
    _write_protocol(campaign, proto)
    findings = check_campaign(campaign).findings
    dst = _with(findings, "window-time-nonexistent") + _with(findings, "window-time-ambiguous")
    assert [(f.code, f.severity, f.file, f.field) for f in dst] == [(code, Severity.ERROR, "protocol.json", where)]
    assert "Europe/Paris" in dst[0].message and dst[0].fix


def _kind(value: str, tz: str) -> str | None:
    found = instants.local_time_issue(value, tz)
    return None if found is None else found.kind


def test_local_time_issues_across_zones() -> None:
    issue = instants.local_time_issue
    assert _kind("2027-03-28T02:30", "Europe/Paris") == "nonexistent"
    gap = issue("2027-03-28T02:30", "Europe/Paris")
    assert gap is not None and gap.read_as == "2027-03-28T03:30"
    assert _kind("2026-10-25T02:30", "Europe/Paris") == "ambiguous"
    assert _kind("2026-11-01T01:30", "America/New_York") == "ambiguous"
    assert _kind("2026-10-04T02:15", "Australia/Sydney") == "nonexistent"
    assert _kind("2026-10-04T02:15", "Australia/Lord_Howe") == "nonexistent"  # half-hour change
    assert issue("2026-10-04T02:45", "Australia/Lord_Howe") is None
    for fine in (("2026-10-05T09:00", "Europe/Paris"), ("2026-10-25T02:30", "UTC"),
                 ("2026-10-25T03:00", "Europe/Paris"), ("2027-03-28T03:00", "Europe/Paris"),
                 ("0001-01-01T00:00", "Europe/Paris")):
        assert issue(*fine) is None, fine


def test_the_cost_command_refuses_a_window_time_in_a_gap_or_overlap(run_cli) -> None:
    r = run_cli("cost", "--window-start", "2027-03-28T02:30", "--window-end", "2027-03-30T09:00",
                "--timezone", "Europe/Paris")
    assert r.code == 2 and "2027-03-28T02:30 does not exist in Europe/Paris" in r.err and "2027-03-28T03:30" in r.err
    r = run_cli("cost", "--window-start", "2026-10-23T09:00", "--window-end", "2026-10-25T02:30",
                "--timezone", "Europe/Paris")
    assert r.code == 2 and "2026-10-25T02:30 occurs twice in Europe/Paris" in r.err


# ------------------------------------------------------------------------------ j. formula-like cells

def test_formula_like_cells_in_the_grid_and_tariffs_are_warnings_at_their_cell(campaign: Path) -> None:
    set_cell(campaign, 1, "notes", "=HYPERLINK(\"http://x\",\"ok\")")
    set_cell(campaign, 3, "gpu_model", "@SUM(1+1)")
    set_cell(campaign, 4, "driver_version", "-5")  # a number: no formula
    set_cell(campaign, 5, "notes", "\tleading tab")
    tariffs = campaign / "tarifs-forfaits.csv"
    _replace_line(tariffs, 3, "b200,+B200 cmd,7,207100,2,2026-09-24,published")
    before = {p: p.read_bytes() for p in (campaign / GRID, tariffs)}
    findings = check_campaign(campaign).findings
    assert _where(findings, "formula-like-cell") == [
        ("warning", GRID, 2, "notes"), ("warning", GRID, 4, "gpu_model"), ("warning", GRID, 6, "notes"),
        ("warning", "tarifs-forfaits.csv", 3, "model_name")]
    assert {p: p.read_bytes() for p in before} == before  # inputs are only read, never rewritten


@pytest.mark.parametrize("fast", [True, False])
def test_formula_like_cells_in_id_files_are_aggregated_per_file_and_column(campaign: Path, fast: bool) -> None:
    pred = campaign / "predictions" / "rtx4090-batch" / "b1" / "warm-2.csv"
    lines = pred.read_text(encoding="utf-8").split("\n")
    for n in (5, 9, 12):
        lines[n - 1] = lines[n - 1].split(",")[0] + ",=1+1"
    pred.write_text("\n".join(lines), encoding="utf-8")
    expected = campaign / "expected-ids.csv"
    _replace_line(expected, 7, "@cmd")
    findings = check_campaign(campaign, fast=fast).findings
    got = [(f.file, f.line, f.field, f.value) for f in _with(findings, "formula-like-cell")]
    assert got == [("expected-ids.csv", 7, "id", 1),
                   ("predictions/rtx4090-batch/b1/warm-2.csv", 5, "label", 3)]
    assert "line 5: '=1+1', line 9: '=1+1', line 12: '=1+1'" in _with(findings, "formula-like-cell")[1].message
    assert all(f.severity is Severity.WARNING for f in _with(findings, "formula-like-cell"))


def test_ids_of_the_schemas_already_refuse_a_leading_tab_and_identifiers_every_formula_start(campaign: Path) -> None:
    # The ID pattern ^\S refuses a leading tab or CR (invalid-id); grid identifiers are [A-Za-z0-9][A-Za-z0-9._-]*
    _replace_line(campaign / "expected-ids.csv", 3, "\tx")
    set_cell(campaign, 1, "experiment_id", "=cmd")
    findings = validate_campaign(campaign).findings
    assert [(f.file, f.line) for f in _with(findings, "invalid-id")] == [("expected-ids.csv", 3)]
    assert not _with(findings, "formula-like-cell")  # each is named once, by the schema's own finding


def test_a_formula_like_class_is_one_warning_on_the_protocol(campaign: Path) -> None:
    proto = _protocol(campaign)
    proto["classes"][0] = "=admin"
    _write_protocol(campaign, proto)
    findings = validate_campaign(campaign).findings
    assert [(f.file, f.field) for f in _with(findings, "formula-like-cell")] == [("protocol.json", "/classes/0")]


# ------------------------------------------------------------------------------ k. invisible characters

def test_invisible_characters_in_grid_cells(campaign: Path) -> None:
    set_cell(campaign, 1, "notes", f"price 50.00 USD{RLO}00.005")
    set_cell(campaign, 2, "gpu_model", f"NVIDIA{ZWSP} GeForce RTX 4090")
    _replace_line(campaign / "tarifs-forfaits.csv", 2, f"rtx-4090,GeForce RTX{RLO} 4090,7,11000,1,2026-09-24,published")
    findings = check_campaign(campaign).findings
    assert _where(findings, "invisible-character") == [
        ("warning", GRID, 2, "notes"),  # free text: the note shows it visibly
        ("error", GRID, 3, "gpu_model"),  # a value that is compared and shown as evidence
        ("error", "tarifs-forfaits.csv", 2, "model_name")]
    notes = next(f for f in findings if f.code == "invisible-character" and f.field == "notes")
    assert "U+202E (RIGHT-TO-LEFT OVERRIDE)" in notes.message and RLO not in notes.message


def test_invisible_characters_in_the_protocol_keep_it_readable(campaign: Path) -> None:
    proto = _protocol(campaign)
    proto["corpus"]["name"] = f"debian{RLO}-descriptions"
    proto["notes"] = f"see {ZWSP}here"
    _write_protocol(campaign, proto)
    result = check_campaign(campaign)
    assert _where(result.findings, "invisible-character") == [
        ("error", "protocol.json", None, "/corpus/name"), ("warning", "protocol.json", None, "/notes")]
    assert result.decision["configurations"]  # the protocol is still read: the rest is still checked


def test_invisible_characters_in_a_measurement_and_in_a_class(campaign: Path) -> None:
    path = campaign / "measurements" / "b200-batch-b4.json"
    path.write_text(path.read_text(encoding="utf-8").replace('"NVIDIA B200"', f'"NVIDIA {RLO}B200"'), encoding="utf-8")
    proto = _protocol(campaign)
    proto["classes"][3] = f"net{ZWSP}"
    _write_protocol(campaign, proto)
    findings = validate_campaign(campaign).findings
    assert _where(findings, "invisible-character") == [
        ("error", "measurements/b200-batch-b4.json", None, "/environment/gpu_name"),
        ("error", "protocol.json", None, "/classes/3")]


@pytest.mark.parametrize("fast", [True, False])
def test_an_invisible_character_in_an_id_everywhere_is_named_in_each_file(campaign: Path, fast: bool) -> None:
    old = "7kaa"
    for path in [campaign / "expected-ids.csv", campaign / "reference.csv",
                 *sorted((campaign / "predictions").rglob("*.csv"))]:
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(f"\n{old}\n", f"\n7{ZWSP}kaa\n").replace(f"\n{old},", f"\n7{ZWSP}kaa,"),
                        encoding="utf-8")
    result = check_campaign(campaign, fast=fast)
    got = _where(result.findings, "invisible-character")
    assert ("error", "expected-ids.csv", 3, "id") in got and ("error", "reference.csv", 3, "id") in got
    preds = [g for g in got if g[1].startswith("predictions/")]
    assert preds and all(g[0] == "warning" and g[3] == "id" for g in preds)
    # the same ID in every file: the sets still match, so acceptance is recomputed as before
    runs = [r for c in result.decision["configurations"] for r in c["runs"]]
    assert any(r["recomputed"]["ids_match"] for r in runs)


def test_invisible_characters_are_shown_not_applied_in_the_note(campaign: Path) -> None:
    from generator.render.page.note import render_html

    set_cell(campaign, 1, "notes", f"total 50.00 USD{RLO}00.005 outcome=ok")
    proto = _protocol(campaign)
    proto["question"] = proto["question"] + f" {RLO}tsaf"
    _write_protocol(campaign, proto)
    html = render_html(check_campaign(campaign).decision)
    assert RLO not in html
    assert "50.00 USD&lt;U+202E&gt;00.005" in html  # shown to the reader as <U+202E>
    assert "&lt;U+202E&gt;tsaf" in html


def test_visible_filter_and_finalize() -> None:
    from markupsafe import Markup

    from generator.render.page.note import environment
    from generator.render.view.filters import shown, visible

    assert visible(f"a{RLO}b{ZWSP}c") == "a<U+202E>b<U+200B>c"
    assert visible(None) == "\u2014"
    assert shown(Markup(f"<b>{RLO}</b>")) == Markup("<b>&lt;U+202E&gt;</b>")
    assert shown(5) == 5
    assert environment().from_string("{{ x }}|{{ x | visible }}").render(x=f"<{RLO}>") == (
        "&lt;&lt;U+202E&gt;&gt;|&lt;&lt;U+202E&gt;&gt;")


def test_findings_show_invisible_characters_escaped_on_the_terminal(run_cli, campaign: Path) -> None:
    set_cell(campaign, 1, "gpu_model", f"RTX{RLO}0904\x1b[2J")
    text = run_cli("check", str(campaign))
    assert RLO not in text.out and "\x1b" not in text.out and "<U+202E>" in text.out
    for cmd in ("validate", "check"):
        out = run_cli(cmd, "--json", str(campaign)).out
        assert RLO not in out and "\x1b" not in out
        data = json.loads(out)
        listed = data["findings"]
        assert any(f["code"] == "invisible-character" and RLO in f["value"] for f in listed)  # the data is intact


def test_the_clean_examples_have_no_text_findings() -> None:
    from conftest import REPO

    for name in ("example", "h200-campaign"):
        findings = check_campaign(REPO / "inputs" / name).findings
        assert not [f for f in findings if f.code in {"formula-like-cell", "invisible-character",
                                                       "window-time-nonexistent", "window-time-ambiguous",
                                                       "path-outside-campaign"}]



# ------------------------------------------------------------------- issue 47: the quality direction


@pytest.mark.parametrize("metric", list(METRICS))
@pytest.mark.parametrize("direction", ["higher_is_better", "lower_is_better"])
def test_a_direction_contradicting_the_metric_is_a_protocol_error(metric: str, direction: str) -> None:
    from generator.audit.load.inputs.protocol import Protocol
    from generator.audit.validate.protocol_rules import check_direction
    from generator.core.metrics import DIRECTIONS

    proto = json.loads((EXAMPLE / "protocol.json").read_text(encoding="utf-8"))
    proto["quality"].update(metric=metric, direction=direction)
    out: list[Finding] = []
    check_direction(Protocol.of(proto), "protocol.json", out)
    assert set(DIRECTIONS) == set(METRICS)  # each registered metric has its direction
    if direction == "higher_is_better":
        assert out == []
        return
    (only,) = out
    assert (only.code, only.severity, only.file, only.field) == (
        "quality-direction-contradicts-metric", Severity.ERROR, "protocol.json", "/quality/direction")
    assert (only.claimed, only.recomputed) == ("lower_is_better", "higher_is_better")
    assert metric in only.message and "lower_is_better" in only.message and "higher_is_better" in (only.fix or "")
    assert METRICS[metric].name in only.message  # as a reader says it, beside the slug


def test_a_lower_is_better_protocol_is_refused_not_every_run_rejected(campaign: Path) -> None:
    proto = _protocol(campaign)
    proto["quality"]["direction"] = "lower_is_better"
    _write_protocol(campaign, proto)
    findings = validate_campaign(campaign).findings
    assert _where(findings, "quality-direction-contradicts-metric") == [
        ("error", "protocol.json", None, "/quality/direction")]
