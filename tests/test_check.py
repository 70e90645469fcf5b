"""`gpu-audit check`: the example passes; a mutated copy for each trap exits 1 naming the finding."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from conftest import read_grid, set_cell, write_grid

from generator.audit.check import check_campaign
from generator.core.system.resources import load_schema


def rows_where(folder: Path, **match: str) -> list[int]:
    rows = read_grid(folder)
    header = rows[0]
    return [i for i, r in enumerate(rows) if i and all(r[header.index(k)] == v for k, v in match.items())]


def finding(out: str, code: str) -> str:
    lines = [ln for ln in out.splitlines() if f" {code}]" in ln]
    assert lines, f"no finding {code} in:\n{out}"
    return lines[0]


def prediction(folder: Path, exp: str, variant: str, name: str) -> Path:
    return folder / "predictions" / exp / variant / name


def test_example_checks_clean_and_decides(run_cli, campaign: Path) -> None:
    r = run_cli("check", str(campaign))
    assert r.code == 0, r.out
    assert "Answer: rtx4090-batch/b4 (lowest committed budget among admissible configurations; tied on budget " \
           "with rtx4090-batch/b1, ordered by median warm time; the timing series separates it from " \
           "rtx4090-batch/b1)" in r.out
    assert "Series decides: yes" in r.out
    assert "Committed budget: 110.00 USD; cost per accepted result: 110.00 USD" in r.out
    assert "rtx4090-batch/b8: warm 4 ok / 1 failed" in r.out
    assert "not memory-feasible: 1 out-of-memory failure(s) kept as failure observations" in r.out
    assert "= 96 h; smallest covering package: 7 days" in r.out


def test_decision_json_validates_and_is_written_once(run_cli, campaign: Path, tmp_path: Path) -> None:
    out = tmp_path / "decision.json"
    assert run_cli("check", str(campaign), "--out", str(out)).code == 0
    decision = json.loads(out.read_text())
    jsonschema.Draft202012Validator(load_schema("decision")).validate(decision)
    before = out.read_bytes()
    r = run_cli("check", str(campaign), "--out", str(out))
    assert r.code == 2 and "already exists" in r.err
    assert out.read_bytes() == before


def test_same_row_count_different_id_sets(run_cli, campaign: Path) -> None:
    path = prediction(campaign, "b200-batch", "b4", "warm-3.csv")
    lines = path.read_text().splitlines()
    lines[7] = lines[8]  # 1000 rows still, one ID twice and one missing
    path.write_text("\n".join(lines) + "\n")
    line = rows_where(campaign, experiment_id="b200-batch", variant_id="b4", phase="warm", run_index="3")[0] + 1
    r = run_cli("check", str(campaign))
    assert r.code == 1
    assert finding(r.out, "ids-match-mismatch") == (
        f"resultats-bruts.csv:{line}: ids_match: ids_match claims true, the evidence gives false (1 duplicates, "
        "1 missing, 0 extra IDs; equal row counts prove nothing: the sets were compared) [error ids-match-mismatch]")
    assert finding(r.out, "observed-ids-mismatch").endswith("observed_ids claims 1000, the evidence gives 999 "
                                                            "[error observed-ids-mismatch]")
    assert "corpus-accepted-mismatch" in r.out


def test_label_outside_classes_claimed_valid(run_cli, campaign: Path) -> None:
    path = prediction(campaign, "rtx4090-batch", "b1", "warm-2.csv")
    lines = path.read_text().splitlines()
    lines[3] = lines[3].split(",")[0] + ",Utils"
    path.write_text("\n".join(lines) + "\n")
    r = run_cli("check", str(campaign))
    assert r.code == 1
    assert "format_valid claims true, the evidence gives false [error format-valid-mismatch]" in r.out


def test_quality_value_and_acceptance_claims(run_cli, campaign: Path) -> None:
    # the predictions of one run are degraded far below the threshold, the row still claims acceptance
    path = prediction(campaign, "b200-batch", "b8", "warm-1.csv")
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0]] + [ln.split(",")[0] + ",utils" for ln in lines[1:]]) + "\n")
    r = run_cli("check", str(campaign))
    assert r.code == 1
    assert "quality_value claims 0." in finding(r.out, "quality-value-mismatch")
    assert "corpus_accepted claims true, the evidence gives false" in finding(r.out, "corpus-accepted-mismatch")


def test_threshold_lowered_after_the_fact(run_cli, campaign: Path) -> None:
    row = rows_where(campaign, variant_id="b4", phase="cold")[0]
    set_cell(campaign, row, "quality_threshold", "0.7")
    r = run_cli("check", str(campaign))
    assert r.code == 1
    assert finding(r.out, "rule-not-registered") == (
        f"resultats-bruts.csv:{row + 1}: quality_threshold: quality_threshold 0.7 differs from the pre-registered "
        "0.8 [error rule-not-registered]")


def test_batch8_run_silently_replaced_by_batch4(run_cli, campaign: Path) -> None:
    row = rows_where(campaign, experiment_id="rtx4090-batch", variant_id="b8", phase="warm", run_index="3")[0]
    set_cell(campaign, row, "batch", "4")
    r = run_cli("check", str(campaign))
    assert r.code == 1
    assert finding(r.out, "variant-value-mismatch") == (
        f"resultats-bruts.csv:{row + 1}: batch: variant 'b8' is registered with batch 8, this row ran batch 4 "
        "[error variant-value-mismatch]")


def test_deleted_failure_row_is_a_missing_attempt(run_cli, campaign: Path) -> None:
    rows = read_grid(campaign)
    write_grid(campaign, [r for r in rows if "outcome=oom" not in r[-1]])
    r = run_cli("check", str(campaign))
    assert r.code == 1
    assert finding(r.out, "missing-attempt") == (
        "resultats-bruts.csv: run_index: no row for rtx4090-batch/b8 warm run 3 (5 warm runs registered) "
        "[error missing-attempt]")
    # without the failure, the batch-8 variant would look feasible: the missing row is what the audit flags
    assert "rtx4090-batch/b8: warm 4 ok / 0 failed" in r.out


def test_changed_model_revision_breaks_comparability(run_cli, campaign: Path) -> None:
    row = rows_where(campaign, experiment_id="b200-batch", variant_id="b1", phase="warm", run_index="4")[0]
    set_cell(campaign, row, "model_revision", "synthetic-classifier-r2")
    r = run_cli("check", str(campaign))
    assert r.code == 1
    assert finding(r.out, "not-comparable") == (
        f"resultats-bruts.csv:{row + 1}: model_revision: model_revision 'synthetic-classifier-r2' differs from the "
        "rest of experiment 'b200-batch' ('synthetic-classifier-r1') [error not-comparable]")
    assert "fixed-value-mismatch" in r.out


def test_allocated_added_to_reserved(run_cli, campaign: Path) -> None:
    row = rows_where(campaign, experiment_id="b200-batch", variant_id="b4", phase="warm", run_index="2")[0]
    rows = read_grid(campaign)
    h = rows[0]
    summed = int(rows[row][h.index("peak_allocated_bytes")]) + int(rows[row][h.index("peak_reserved_bytes")])
    set_cell(campaign, row, "peak_reserved_bytes", str(summed))
    r = run_cli("check", str(campaign))
    assert r.code == 1
    assert "(allocated was added to reserved: allocated is part of reserved, never add them)" in \
        finding(r.out, "memory-disagrees")


def test_allocated_above_reserved(run_cli, campaign: Path) -> None:
    row = rows_where(campaign, experiment_id="b200-batch", variant_id="b1", phase="cold")[0]
    set_cell(campaign, row, "peak_allocated_bytes", "999999999999")
    r = run_cli("check", str(campaign))
    assert r.code == 1
    assert "allocated is part of reserved" in finding(r.out, "allocated-exceeds-reserved")


def test_two_gpu_lot_does_not_mean_two_gpus_used(run_cli, campaign: Path) -> None:
    row = rows_where(campaign, experiment_id="b200-batch", variant_id="b8", phase="warm", run_index="1")[0]
    set_cell(campaign, row, "gpu_count", "2")
    r = run_cli("check", str(campaign))
    assert r.code == 1
    assert finding(r.out, "gpu-count-not-seen") == (
        f"resultats-bruts.csv:{row + 1}: gpu_count: gpu_count claims 2 GPUs, measurements/b200-batch-b8.json saw the "
        "program use 1 (2 visible) [error gpu-count-not-seen]")


def test_b200_lot_multiplied_by_its_gpus(run_cli, campaign: Path) -> None:
    row = rows_where(campaign, experiment_id="b200-batch", variant_id="b1", phase="cold")[0]
    set_cell(campaign, row, "package_total_usd_minor", "414200")
    r = run_cli("check", str(campaign))
    assert r.code == 1
    assert finding(r.out, "package-total-mismatch") == (
        f"resultats-bruts.csv:{row + 1}: package_total_usd_minor: package_total_usd_minor claims 414200, the tariff "
        "gives 207100 (207100 x 1 lots): a b200 lot already holds 2 GPUs and its price covers them; multiplying by "
        "the GPU count again counts them twice [error package-total-mismatch]")


def test_package_summed_over_repeats(run_cli, campaign: Path) -> None:
    row = rows_where(campaign, experiment_id="rtx4090-batch", variant_id="b1", phase="warm", run_index="5")[0]
    set_cell(campaign, row, "package_total_usd_minor", "55000")
    r = run_cli("check", str(campaign))
    assert r.code == 1
    assert ": 5 x the package; a package is one expense, never summed over repeated rows" in \
        finding(r.out, "package-total-mismatch")


def test_five_repeats_are_not_five_results(run_cli, campaign: Path) -> None:
    row = rows_where(campaign, experiment_id="rtx4090-batch", variant_id="b4", phase="warm", run_index="5")[0]
    set_cell(campaign, row, "accepted_unique_corpora", "6")
    r = run_cli("check", str(campaign))
    assert r.code == 1
    assert finding(r.out, "accepted-corpora-mismatch") == (
        f"resultats-bruts.csv:{row + 1}: accepted_unique_corpora: accepted_unique_corpora claims 6, the evidence gives "
        "1 distinct accepted corpora (repeats of the same corpus were counted: five repeats are not five results) "
        "[error accepted-corpora-mismatch]")


def test_package_too_short_for_the_window(run_cli, campaign: Path) -> None:
    row = rows_where(campaign, experiment_id="rtx4090-batch", variant_id="b1", phase="cold")[0]
    set_cell(campaign, row, "duration_days", "3")
    r = run_cli("check", str(campaign))
    assert r.code == 1
    assert finding(r.out, "duration-does-not-cover-window") == (
        f"resultats-bruts.csv:{row + 1}: duration_days: a 3-day package does not cover the 96 h window "
        "[error duration-does-not-cover-window]")


def test_window_longer_than_the_registered_package(run_cli, campaign: Path) -> None:
    proto = json.loads((campaign / "protocol.json").read_text())
    proto["window"]["end"] = "2026-10-14T09:00"
    proto["deadline"] = "2026-10-20T09:00"
    (campaign / "protocol.json").write_text(json.dumps(proto))
    r = run_cli("check", str(campaign))
    assert r.code == 1
    cover = finding(r.out, "package-does-not-cover-window")
    assert "the 7-day package (168 h) does not cover the 216 h window" in cover
    assert "Answer: none (no admissible configuration" in r.out


def test_gpu_missing_from_tariffs_leaves_cost_undefined(run_cli, campaign: Path) -> None:
    path = campaign / "tarifs-forfaits.csv"
    path.write_text("\n".join(ln for ln in path.read_text().splitlines() if not ln.startswith("b200")) + "\n")
    # Without a tariff a claimed total cannot be checked (package-total-unverifiable): the rows leave it empty.
    for row in rows_where(campaign, experiment_id="b200-batch"):
        set_cell(campaign, row, "package_total_usd_minor", "")
    result = check_campaign(campaign)
    assert not result.errors
    assert [f.code for f in result.findings] == ["registration-not-sealed", "no-tariff"]  # the example is unsealed
    b200 = [c for c in result.decision["configurations"] if c["gpu"] == "b200"]
    assert all(c["committed_budget_usd_minor"] is None for c in b200)
    undefined = {"usd_minor": None, "undefined_reason": "no tariff for this GPU and duration"}
    assert all(c["cost_per_accepted_result"] == undefined for c in b200)
    assert run_cli("check", str(campaign)).code == 0


def test_protocol_registered_after_the_runs(run_cli, campaign: Path) -> None:
    proto = json.loads((campaign / "protocol.json").read_text())
    proto["registered_at"] = "2026-10-06T10:00:00+02:00"
    (campaign / "protocol.json").write_text(json.dumps(proto))
    r = run_cli("check", str(campaign))
    assert r.code == 1
    assert "registered-after-start" in r.out


def test_measurement_with_missing_warm_rows(run_cli, campaign: Path) -> None:
    path = campaign / "measurements" / "b200-batch-b1.json"
    doc = json.loads(path.read_text())
    doc["phases"] = doc["phases"][:-1]
    path.write_text(json.dumps(doc))
    r = run_cli("check", str(campaign))
    assert r.code == 1
    assert finding(r.out, "warm-rows-mismatch") == (
        "measurements/b200-batch-b1.json: /phases: 4 warm_forward rows (repeats [1, 2, 3, 4]) where "
        "configuration.repeats is 5 [error warm-rows-mismatch]")


def test_faster_configuration_not_accepted_never_wins(run_cli, campaign: Path) -> None:
    # batch 4 on the RTX 4090 honestly fails the quality rule: claims say so, no error, and batch 1 wins
    for row in rows_where(campaign, experiment_id="rtx4090-batch", variant_id="b4"):
        rows = read_grid(campaign)
        h = rows[0]
        name = f"{rows[row][h.index('phase')]}-{rows[row][h.index('run_index')]}.csv"
        path = prediction(campaign, "rtx4090-batch", "b4", name)
        lines = path.read_text().splitlines()
        path.write_text("\n".join([lines[0]] + [ln.split(",")[0] + ",utils" for ln in lines[1:]]) + "\n")
        set_cell(campaign, row, "quality_value", "")
        set_cell(campaign, row, "corpus_accepted", "false")
        set_cell(campaign, row, "accepted_unique_corpora", "0")
    r = run_cli("check", str(campaign))
    assert r.code == 0, r.out
    assert "Answer: rtx4090-batch/b1 (lowest committed budget among admissible configurations)" in r.out
    assert "rtx4090-batch/b4: warm 5 ok / 0 failed" in r.out
    assert "not admissible: not accepted: 6 of 6 completed runs not accepted" in r.out


def test_nothing_accepted_means_no_answer_and_undefined_cost(campaign: Path) -> None:
    proto = json.loads((campaign / "protocol.json").read_text())
    proto["quality"]["threshold"] = 0.99
    (campaign / "protocol.json").write_text(json.dumps(proto))
    result = check_campaign(campaign)
    d = result.decision
    assert d["decision"]["answer"] is None
    assert d["decision"]["reason"].startswith("no admissible configuration: ")
    assert "not accepted" in d["decision"]["reason"] and d["decision"]["status"] == "no-admissible"
    assert all(c["cost_per_accepted_result"]["usd_minor"] is None for c in d["configurations"])
    assert {f.code for f in result.errors} >= {"rule-not-registered", "corpus-accepted-mismatch"}


def test_timing_reports_no_p95(campaign: Path) -> None:
    d = check_campaign(campaign).decision
    warm = d["configurations"][0]["timing"]["warm"]
    assert warm["p95"] is None and "too few" in warm["tail_note"]
    assert len(warm["durations"]) == 5


def test_unsound_truth_is_reported_not_recomputed(run_cli, campaign: Path) -> None:
    # found by the fuzzer: a repeated expected ID or a reference that misses one must not crash the recomputation
    path = campaign / "expected-ids.csv"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines + [lines[416]]) + "\n")
    r = run_cli("check", str(campaign))
    assert r.code == 1
    assert f"expected-ids.csv:{len(lines) + 1}: 1 repeated IDs (first: line {len(lines) + 1}: {lines[416]!r}) " \
           "[error duplicate-expected-id]" in r.out
    assert "Answer: none (no answer: 1 error finding(s) in shared inputs (expected_ids): duplicate-expected-id at " \
           f"expected-ids.csv:{len(lines) + 1}" in r.out


def test_reference_missing_a_label(run_cli, campaign: Path) -> None:
    path = campaign / "reference.csv"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:5] + lines[6:]) + "\n")
    r = run_cli("check", str(campaign))
    assert r.code == 1
    assert f"reference.csv: 1 expected IDs have no reference label (first: {lines[5].split(',')[0]!r}) " \
           "[error reference-missing-id]" in r.out
