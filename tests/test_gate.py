"""The gate: no answer from evidence with error findings, and only to the question as registered."""

from __future__ import annotations

import csv
import html
import json
import re
from pathlib import Path

import jsonschema
from conftest import GRID, REPO, read_grid, set_cell, write_grid

from generator.audit.check import check_campaign
from generator.core.system.resources import schemas_dir
from generator.render.page.note import render_html

H200 = REPO / "inputs" / "h200-campaign"


def _rows(folder: Path, **match: str) -> list[int]:
    rows = read_grid(folder)
    head = rows[0]
    return [i for i, r in enumerate(rows) if i and all(r[head.index(k)] == v for k, v in match.items())]


def _config(decision: dict, cid: str) -> dict:
    return next(c for c in decision["configurations"] if c["id"] == cid)


def _ranked(decision: dict) -> list[str]:
    return [r["configuration"] for r in decision["decision"]["ranking"]]


def _page_text(decision: dict) -> str:
    body = render_html(decision)
    page = body.split("<h2>The pre-registered rule</h2>")[0].split("<body>")[1]
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_deleting_the_oom_row_does_not_make_b8_the_answer(campaign: Path) -> None:
    # The reproduction: the failure row of rtx4090-batch/b8 (warm 3) and its partial file deleted.
    rows = read_grid(campaign)
    (oom,) = [i for i in _rows(campaign, variant_id="b8", phase="warm") if "outcome=oom" in rows[i][-1]]
    index = rows[oom][rows[0].index("run_index")]
    write_grid(campaign, [r for i, r in enumerate(rows) if i != oom])
    (campaign / "predictions" / "rtx4090-batch" / "b8" / f"warm-{index}.csv").unlink()
    d = check_campaign(campaign).decision
    b8 = _config(d, "rtx4090-batch/b8")
    assert d["decision"]["answer"] != "rtx4090-batch/b8"
    assert "rtx4090-batch/b8" not in _ranked(d)
    assert not b8["admissible"]
    assert any(r.startswith("evidence has 1 error finding(s): missing-attempt at resultats-bruts.csv")
               for r in b8["reasons"])
    assert {"configuration": "rtx4090-batch/b8", "reasons": b8["reasons"]} in d["decision"]["excluded"]
    assert [e["code"] for e in b8["evidence"]["errors"]] == ["missing-attempt"]
    # The grid's other configurations are untouched by b8's defect.
    assert d["decision"]["answer"] == "rtx4090-batch/b4"


def test_an_error_in_one_row_gates_only_its_configuration(campaign: Path) -> None:
    # b4 is the answer; a batch-8 value in one of its rows is an error of b4's own evidence.
    row = _rows(campaign, variant_id="b4", phase="warm", run_index="2")[0]
    set_cell(campaign, row, "batch", "8")
    result = check_campaign(campaign)
    d = result.decision
    mismatch = next(f for f in result.findings if f.code == "variant-value-mismatch")
    assert mismatch.line == row + 1 and mismatch.configurations == ("rtx4090-batch/b4",)
    assert d["decision"]["answer"] == "rtx4090-batch/b1"
    assert "rtx4090-batch/b4" not in _ranked(d)


def test_a_shared_input_error_withholds_the_answer(campaign: Path) -> None:
    path = campaign / "reference.csv"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n")  # one expected ID left without its checked label
    d = check_campaign(campaign).decision["decision"]
    assert d["answer"] is None and d["status"] == "withheld"
    assert d["ranking"] == [] and d["shared_errors"][0]["code"] == "reference-missing-id"
    assert d["reason"].startswith("no answer: 1 error finding(s) in shared inputs (reference): reference-missing-id")
    assert d["fix"]


def test_a_grid_row_of_no_registered_configuration_withholds_the_answer(campaign: Path) -> None:
    rows = read_grid(campaign)
    extra = list(rows[1])
    extra[rows[0].index("variant_id")] = "b16"
    write_grid(campaign, rows + [extra])
    result = check_campaign(campaign)
    unknown = next(f for f in result.findings if f.code == "unknown-variant")
    assert unknown.shared_input == "grid" and unknown.configurations == ()
    assert result.decision["decision"]["answer"] is None


def test_every_finding_is_attributed(campaign: Path) -> None:
    set_cell(campaign, 3, "peak_reserved_bytes", "1")
    set_cell(campaign, 20, "package_total_usd_minor", "414200")
    result = check_campaign(campaign)
    assert result.findings
    for f in result.findings:
        assert bool(f.configurations) != bool(f.shared_input), f
    for f in result.decision["findings"]:
        assert "configurations" in f and "shared_input" in f
    schema = json.loads((schemas_dir() / "decision.schema.json").read_text())
    jsonschema.validate(result.decision, schema)


def test_warnings_never_gate_but_are_listed_on_the_configuration() -> None:
    d = check_campaign(H200).decision
    for c in d["configurations"]:
        assert c["admissible"]
        assert "no-tariff" in [w["code"] for w in c["evidence"]["warnings"]]


def test_h200_without_a_published_price_has_no_answer() -> None:
    d = check_campaign(H200).decision
    verdict = d["decision"]
    assert verdict["answer"] is None and verdict["status"] == "unanswerable"
    assert verdict["reason"].startswith("cannot be answered: no published price for h200")
    assert verdict["ranking"] == []
    assert [e["configuration"] for e in verdict["time_ordering"]] == ["h200-batch/b8", "h200-batch/b4", "h200-batch/b1"]
    # One definition of "series decides": the pairs of the order by time are judged as page 2 judges them.
    comparisons = {tuple(sorted(c["configurations"])): c["decides"] for e in d["experiments"] for c in e["comparisons"]}
    for pair in verdict["ties"]:
        assert comparisons[tuple(sorted(pair["configurations"]))] == pair["timing_decides"]
    assert verdict["series_decides"] == all(p["timing_decides"] for p in verdict["ties"])
    page = _page_text(d)
    assert "No answer" in page and "Answer: h200" not in page
    assert "there is no published price for NVIDIA H200: the question cannot be answered" in page
    assert "Order by median warm time (not the answer to the registered question)" in page
    assert "Campaign total committed: undefined, because no price is known for h200-batch." in page
    assert verdict["series_decides"] is not None


def test_an_illustrative_price_cannot_answer_the_question(campaign: Path) -> None:
    path = campaign / "tarifs-forfaits.csv"
    with path.open(newline="") as fh:
        rows = list(csv.reader(fh))
    status = rows[0].index("price_status")
    for r in rows[1:]:
        if r[0] == "rtx-4090":
            r[status] = "illustrative"
    with path.open("w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    d = check_campaign(campaign).decision["decision"]
    assert d["answer"] is not None and d["answer"].startswith("b200-batch/")
    assert all(not r.startswith("rtx4090") for r in _ranked({"decision": d}))
    assert {u["configuration"] for u in d["unpriced"]} == {"rtx4090-batch/b1", "rtx4090-batch/b4"}


def test_the_page_names_the_excluded_configurations(campaign: Path) -> None:
    row = _rows(campaign, variant_id="b4", phase="warm", run_index="2")[0]
    set_cell(campaign, row, "batch", "8")
    page = _page_text(check_campaign(campaign).decision)
    assert "Answer: GeForce RTX 4090, batch 1 configuration rtx4090-batch/b1" in page
    assert "GeForce RTX 4090, batch 4 (rtx4090-batch/b4) : its evidence has 2 error findings " \
           f"(measurement-config-mismatch ({GRID}:{row + 1}), " \
           f"variant-value-mismatch ({GRID}:{row + 1}))." in page
