"""Issue 51 item 2, the decision's own verdicts: the registration on the window's start, the window ending on the
deadline, and each reason a configuration is not admissible at its count's edge (no campaign run)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE, set_cell
from test_edges_gate import config

from generator.audit.check import check_campaign
from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.inputs.rows import GridRow
from generator.audit.recompute.decision import decision
from generator.audit.recompute.decision.model import Configuration, Package, Window
from generator.audit.recompute.decision.runcells import SubgroupSummary
from generator.audit.recompute.decision.tally import Tally
from generator.audit.recompute.quality.acceptance import Acceptance
from generator.core.jsonvalue import JsonScalar


def _window(**change: Any) -> tuple[Window, list[str]]:
    data = json.loads((EXAMPLE / "protocol.json").read_text("utf-8"))
    window = change.pop("window", {})
    data["window"].update(window)
    data.update(change)
    ctx = decision._Context(Protocol.of(data), "resultats-bruts.csv", [], [], {}, {}, {}, "tarifs-forfaits.csv")
    return decision._window(ctx), [f.code for f in ctx.findings]


# the example's window opens 2026-10-05T09:00 in Paris, 07:00Z
@pytest.mark.parametrize("registered,late", [
    ("2026-10-05T07:00:00Z", True), ("2026-10-05T06:59:59.999999Z", False), ("2026-10-05T06:59:59.5Z", False),
    ("2026-10-05T09:00:00+02:00", True)])
def test_a_protocol_registered_on_the_window_s_start_is_late(registered: str, late: bool) -> None:
    _, codes = _window(registered_at=registered)
    assert ("registered-after-start" in codes) is late


@pytest.mark.parametrize("deadline,ends_before", [
    ("2026-10-09T09:00", True), ("2026-10-09T08:59:59.999999", False), ("2026-10-09T08:59:59.5", False),
    ("2026-10-09", True), ("2026-10-08", False)])
def test_a_window_ending_on_the_deadline_ends_before_it(deadline: str, ends_before: bool) -> None:
    window, _ = _window(deadline=deadline)
    assert window.ends_before_deadline is ends_before


@cache
def _example() -> tuple[Package, Window]:
    document = check_campaign(EXAMPLE).document
    assert document.window is not None
    return document.experiments[0].package, document.window


def _group(completed: int, accepted: int) -> SubgroupSummary:
    return SubgroupSummary(id="g", edges="", expected_ids=10, threshold=0.8, tolerance=0.1, reference_value=0.9,
                           completed_runs=completed, accepted_runs=accepted, worst_value=None, worst_degradation=None,
                           failed_runs=0, unfinished=0)


@pytest.mark.parametrize("completed,accepted,reason", [
    (0, 0, "not accepted: no completed run"),
    (1, 1, None),
    (1, 0, "not accepted: 1 of 1 completed runs not accepted"),
    (5, 3, "not accepted: 2 of 5 completed runs not accepted"),
    (5, 5, None),
])
def test_a_configuration_is_accepted_when_every_completed_run_is(completed: int, accepted: int,
                                                                 reason: str | None) -> None:
    package, window = _example()
    reasons = decision._reasons(Tally(completed=completed, accepted_runs=accepted), package, window, (), ())
    assert reasons == (() if reason is None else (reason,))


@pytest.mark.parametrize("completed,accepted,reason", [
    (3, 3, None), (3, 2, "subgroup g fails its rule in 1 of 3 completed runs"), (0, 0, None)])
def test_a_subgroup_fails_when_one_completed_run_breaks_its_rule(completed: int, accepted: int,
                                                                 reason: str | None) -> None:
    package, window = _example()
    groups = (_group(completed, accepted),)
    reasons = decision._reasons(Tally(completed=5, accepted_runs=5), package, window, groups, ())
    assert reasons == (() if reason is None else (reason,))


def test_each_other_reason_is_given_once_in_order() -> None:
    package, window = _example()
    t = Tally(completed=2, accepted_runs=2, oom=1, failed=["oom", "failed"])
    reasons = decision._reasons(t, replace(package, covers_window=False), replace(window, ends_before_deadline=False),
                                (), (None, "corpus c not accepted"))
    assert reasons == (
        "corpus c not accepted", "not memory-feasible: 1 out-of-memory failure(s) kept as failure observations",
        "failed attempts: 1 failed, kept as failure observations (only an exclusion registered in the protocol sets "
        "an attempt aside)", "the package does not cover the campaign window", "the campaign window ends after the "
        "deadline")
    assert decision._reasons(Tally(completed=2, accepted_runs=2), package, window, (), (None, None)) == ()


# ------------------------------------------------------------------------------------ the row against its measurement

DOC = json.loads((EXAMPLE / "measurements" / "rtx4090-batch-b1.json").read_text("utf-8"))
ENV_ROW: dict[str, JsonScalar] = {
    "experiment_id": "rtx4090-batch", "variant_id": "b1", "phase": "warm", "run_index": 1,
    "gpu_model": "NVIDIA GeForce RTX 4090", "gpu_count": 1, "driver_version": "570.86.15", "python_version": "3.12.3",
    "torch_version": "2.11.0+cu128", "runtime_version": "12.8"}


def _context() -> decision._Context:
    data = json.loads((EXAMPLE / "protocol.json").read_text("utf-8"))
    return decision._Context(Protocol.of(data), "g.csv", [], [], {}, {}, {}, "t.csv")


def _environment(row: dict[str, JsonScalar], **env: JsonScalar) -> list[tuple[str, str | None, object, object]]:
    ctx = _context()
    doc = MeasurementDoc.of({**DOC, "environment": {**DOC["environment"], **env}})
    decision._environment_findings(ctx, GridRow.of({**ENV_ROW, **row}), 7, doc, "m.json")
    assert all(f.file == "g.csv" and f.line == 7 for f in ctx.findings)
    return [(f.code, f.field, f.claimed, f.recomputed) for f in ctx.findings]


@pytest.mark.parametrize("count,env,found", [
    (1, {}, []),
    (2, {}, [("gpu-count-not-seen", "gpu_count", 2, 1)]),
    (1, {"devices_used": 1, "visible_device_count": 2}, []),
    (2, {"devices_used": 1, "visible_device_count": 2}, [("gpu-count-not-seen", "gpu_count", 2, 1)]),
    (2, {"devices_used": None, "visible_device_count": 2}, []),
    (1, {"devices_used": None, "visible_device_count": 2}, [("gpu-count-not-seen", "gpu_count", 1, 2)]),
    (3, {"devices_used": None, "visible_device_count": None}, []),
    (None, {}, [("gpu-count-not-seen", "gpu_count", "", 1)]),
    (None, {"devices_used": None, "visible_device_count": None}, []),
])
def test_the_gpu_count_is_the_number_the_program_used(count: JsonScalar, env: dict[str, JsonScalar],
                                                       found: list[tuple[str, str, object, object]]) -> None:
    assert _environment({"gpu_count": count}, **env) == found


def test_a_used_count_differing_from_the_visible_one_is_named_with_both() -> None:
    ctx = _context()
    doc = MeasurementDoc.of({**DOC, "environment": {**DOC["environment"], "visible_device_count": 2}})
    decision._environment_findings(ctx, GridRow.of({**ENV_ROW, "gpu_count": 2}), 7, doc, "m.json")
    assert [f.message for f in ctx.findings] == ["gpu_count claims 2 GPUs, m.json saw the program use 1 (2 visible)"]


@pytest.mark.parametrize("column", ["driver_version", "python_version", "torch_version", "runtime_version"])
def test_each_software_cell_is_what_the_measurement_observed(column: str) -> None:
    seen = DOC["environment"][column]
    assert _environment({column: seen + "1"}) == [("environment-not-seen", column, seen + "1", seen)]
    blank = _environment({column: None})
    # a blank driver is driver-not-recorded (provenance), not this finding
    assert blank == ([] if column == "driver_version" else [("environment-not-seen", column, "", seen)])
    if column != "python_version":  # the one the measurement's schema requires
        assert _environment({column: seen + "1"}, **{column: None}) == []
        assert _environment({column: None}, **{column: None}) == []


@pytest.mark.parametrize("model,gpu_name,found", [
    ("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090", []),
    ("nvidia geforce rtx 4090", "NVIDIA GeForce RTX 4090",
     [("gpu-model-not-seen", "gpu_model", "nvidia geforce rtx 4090", "NVIDIA GeForce RTX 4090")]),
    ("NVIDIA H200", None, []),
    (None, "NVIDIA GeForce RTX 4090", [("gpu-model-not-seen", "gpu_model", "", "NVIDIA GeForce RTX 4090")]),
    (None, None, []),
])
def test_the_gpu_model_is_the_name_the_runtime_reported_in_its_case(
        model: str | None, gpu_name: str | None, found: list[tuple[str, str, object, object]]) -> None:
    assert _environment({"gpu_model": model}, gpu_name=gpu_name) == found


def test_a_measurement_s_own_findings_are_made_the_first_time_it_is_met() -> None:
    ctx = _context()
    assert [decision._measurement_checked_once(ctx, f) for f in ("a.json", "a.json", "b.json")] == [True, False, True]


def _measured(variants: list[dict[str, Any]], docs: dict[str, dict[str, Any]], row: dict[str, JsonScalar]) -> list[str]:
    data = json.loads((EXAMPLE / "protocol.json").read_text("utf-8"))
    data["experiments"][0]["variants"] = variants
    protocol = Protocol.of(data)
    ctx = decision._Context(protocol, "g.csv", [], [], {}, {k: MeasurementDoc.of(d) for k, d in docs.items()}, {},
                            "t.csv")
    decision._measurement_findings(ctx, GridRow.of({**ENV_ROW, **row}), 7, protocol.experiments[0])
    return [f.code for f in ctx.findings]


TWO_USED = {**DOC, "environment": {**DOC["environment"], "devices_used": 2, "visible_device_count": 2}}


def test_a_row_is_held_to_its_own_variant_s_measurement() -> None:
    variants = [{"id": "B1", "value": 1, "measurement": "two.json"},
                {"id": "b1", "value": 1, "measurement": "one.json"}]
    docs = {"two.json": TWO_USED, "one.json": DOC}
    assert "gpu-count-not-seen" not in _measured(variants, docs, {})
    assert "gpu-count-not-seen" in _measured(variants, docs, {"variant_id": "B1"})


@pytest.mark.parametrize("variants,docs,checked", [
    ([{"id": "b1", "value": 1, "measurement": "two.json"}], {"two.json": TWO_USED}, True),
    ([{"id": "b1", "value": 1}], {"two.json": TWO_USED}, False),                              # none linked
    ([{"id": "b1", "value": 1, "measurement": "lost.json"}], {"two.json": TWO_USED}, False),   # linked, unread
    ([{"id": "b4", "value": 4, "measurement": "two.json"}], {"two.json": TWO_USED}, False),    # another variant's
])
def test_a_row_is_held_to_a_measurement_only_when_its_variant_links_one_that_was_read(
        variants: list[dict[str, Any]], docs: dict[str, dict[str, Any]], checked: bool) -> None:
    assert ("gpu-count-not-seen" in _measured(variants, docs, {})) is checked


def test_a_row_without_its_measured_phase_is_held_to_the_file_s_environment_only() -> None:
    codes = _measured([{"id": "b1", "value": 1, "measurement": "two.json"}], {"two.json": TWO_USED},
                      {"run_index": 9})
    assert "gpu-count-not-seen" in codes


def _checked(notes: str | None, acc: Acceptance | None, row: dict[str, JsonScalar] | None = None
             ) -> tuple[Acceptance | None, list[str]]:
    ctx = _context()
    if acc is not None:
        ctx.acceptances[0] = acc
    decision._row_checks(ctx, 0, GridRow.of({**ENV_ROW, "notes": notes, **(row or {})}), 7, None)
    return ctx.acceptances.get(0), [f.code for f in ctx.findings]


ACCEPTED = Acceptance(expected_ids=1000, observed_ids=1000, rows=1000, ids_match=True, format_valid=True,
                      quality_value=0.9, quality_ok=True, corpus_accepted=True, file_present=True)


@pytest.mark.parametrize("notes,accepted", [(None, True), ("outcome=failed", False), ("outcome=oom", False),
                                            ("outcome=ok", True)])
def test_a_failed_run_is_never_accepted_whatever_its_file_holds(notes: str | None, accepted: bool) -> None:
    acc, _ = _checked(notes, ACCEPTED)
    assert acc is not None and acc.corpus_accepted is accepted
    assert _checked(notes, None)[0] is None


def test_a_row_s_claims_are_held_to_its_recomputed_acceptance_when_there_is_one() -> None:
    row: dict[str, JsonScalar] = {"corpus_accepted": True, "ids_match": True, "format_valid": True,
                                  "expected_ids": 1000, "observed_ids": 1000, "quality_value": 0.9}
    _, clean = _checked(None, ACCEPTED, row)
    _, claims = _checked(None, replace(ACCEPTED, ids_match=False, observed_ids=999, missing=1, corpus_accepted=False),
                         row)
    assert set(claims) - set(clean)
    # without a recomputed acceptance (no truth to judge against) the claims are not compared
    assert set(_checked(None, None, row)[1]) <= set(clean)


# ------------------------------------------------------------------------------------ one configuration's verdicts

Spec = tuple[str, int, str | None, bool | None]  # phase, run_index, notes, corpus accepted (None: no acceptance)


def _configuration(*spec: Spec, package: Package | None = None, window: Window | None = None,
                   doc: dict[str, Any] | None = None, first: dict[str, JsonScalar] | None = None,
                   variant: int = 0) -> tuple[Configuration, list[str]]:
    ctx = _context()
    ctx.measurements["measurements/rtx4090-batch-b1.json"] = MeasurementDoc.of(DOC if doc is None else doc)
    exp = ctx.protocol.experiments[0]
    rows = []
    for i, (phase, run, notes, accepted) in enumerate(spec):
        cells: dict[str, JsonScalar] = {**ENV_ROW, "phase": phase, "run_index": run, "notes": notes,
                                        "corpus_revision": "c1", "elapsed_seconds": 10.0 + i,
                                        "accepted_unique_corpora": 1, **(first if first and i == 0 else {})}
        rows.append((i, GridRow.of(cells), i + 2))
        if accepted is not None:
            ctx.acceptances[i] = replace(ACCEPTED, corpus_accepted=accepted)
    example_package, example_window = _example()
    c = decision._configuration(ctx, exp, exp.variants[variant], rows, package or example_package,
                                window or example_window)
    return c, [f.code for f in ctx.findings]


OK_RUNS: tuple[Spec, ...] = (("cold", 1, None, True), ("warm", 1, None, True), ("warm", 2, None, True))


def test_a_configuration_whose_every_completed_run_is_accepted_is_admissible() -> None:
    c, codes = _configuration(*OK_RUNS)
    assert (c.accepted, c.admissible, c.completed, c.accepted_runs, c.failures, c.memory_feasible) == (
        True, True, 3, 3, 0, True)
    assert c.id == "rtx4090-batch/b1" and c.reasons == () and c.resume is None and c.test_run is None
    assert c.subgroups is None  # no subgroup was judged: none shown, not an empty table
    assert c.cost_per_accepted_result.usd_minor == "11000.00" and codes == []


@pytest.mark.parametrize("spec,accepted,admissible,failures,oom", [
    # one completed run, accepted, beside failed attempts: accepted, yet the failures exclude it
    ((("cold", 1, "outcome=failed", None), ("warm", 1, None, True), ("warm", 2, "outcome=failed", None),
      ("warm", 3, "outcome=oom", None)), True, False, 3, 1),
    # no completed run at all
    ((("cold", 1, "outcome=failed", None), ("warm", 1, "outcome=failed", None)), False, False, 2, 0),
    # one run not accepted
    ((("cold", 1, None, True), ("warm", 1, None, False), ("warm", 2, None, True)), False, False, 0, 0),
])
def test_accepted_and_admissible_at_their_counts_edges(spec: tuple[Spec, ...], accepted: bool, admissible: bool,
                                                       failures: int, oom: int) -> None:
    c, _ = _configuration(*spec)
    assert (c.accepted, c.admissible, c.failures, c.out_of_memory, c.memory_feasible) == (
        accepted, admissible, failures, oom, oom == 0)


def test_a_package_or_a_window_that_does_not_fit_makes_it_inadmissible() -> None:
    package, window = _example()
    assert _configuration(*OK_RUNS, package=replace(package, covers_window=False))[0].admissible is False
    assert _configuration(*OK_RUNS, window=replace(window, ends_before_deadline=False))[0].admissible is False
    unpriced = _configuration(*OK_RUNS, package=replace(package, total_usd_minor=None))[0]
    assert unpriced.cost_per_accepted_result.usd_minor is None
    assert unpriced.cost_per_accepted_result.undefined_reason == "no tariff for this GPU and duration"


def test_the_environment_shown_is_the_first_row_s() -> None:
    c, _ = _configuration(*OK_RUNS, first={"gpu_model": "NVIDIA H200"})
    assert c.environment.gpu_model == "NVIDIA H200"
    (one, _) = _configuration(OK_RUNS[0])
    assert one.completed == 1


def test_a_claimed_count_of_corpora_is_checked_on_the_variant_s_own_rows() -> None:
    _, codes = _configuration(*OK_RUNS, first={"accepted_unique_corpora": 2})
    assert codes == ["accepted-corpora-mismatch"]


def test_only_the_variant_s_own_rows_have_their_claimed_count_checked() -> None:
    # a resume variant's rows include those of the variant it resumes, whose claims are that variant's to answer
    ctx = _context()
    exp = ctx.protocol.experiments[0]
    rows = [(i, GridRow.of({**ENV_ROW, "variant_id": v, "phase": "warm", "run_index": i + 1, "corpus_revision": "c1",
                            "elapsed_seconds": 10.0, "accepted_unique_corpora": n}), i + 2)
            for i, (v, n) in enumerate([("b1", 1), ("B1", 2)])]
    for i, _, _ in rows:
        ctx.acceptances[i] = ACCEPTED
    package, window = _example()
    decision._configuration(ctx, exp, exp.variants[0], rows, package, window)
    assert [f.code for f in ctx.findings] == []


def test_a_test_run_is_marked() -> None:
    c, _ = _configuration(*OK_RUNS, doc={**DOC, "test_run": True})
    assert c.test_run is True


def test_each_pair_of_configurations_of_an_experiment_is_compared_once() -> None:
    configs = [config(f"e/{v}") for v in ("a", "b", "c", "d")]
    assert [c.configurations for c in decision._comparisons(configs)] == [
        ("e/a", "e/b"), ("e/a", "e/c"), ("e/a", "e/d"), ("e/b", "e/c"), ("e/b", "e/d"), ("e/c", "e/d")]


@pytest.mark.parametrize("cells,kept", [
    ({}, True), ({"experiment_id": None}, False), ({"variant_id": None}, False), ({"phase": "other"}, False),
    ({"run_index": None}, False), ({"phase": "cold"}, True)])
def test_a_row_without_its_whole_key_belongs_to_no_experiment(cells: dict[str, JsonScalar], kept: bool) -> None:
    rows = [GridRow.of({**ENV_ROW, **cells}), GridRow.of(ENV_ROW)]
    by_exp = decision._rows_by_experiment(rows, [2, 3])
    assert [line for _, _, line in by_exp["rtx4090-batch"]] == ([2, 3] if kept else [3])


def test_a_variant_s_measurement_is_copied_when_it_was_read() -> None:
    ctx = _context()
    ctx.measurements["m.json"] = MeasurementDoc.of(DOC)
    variant = ctx.protocol.experiments[0].variants[0]
    assert decision._measurement(ctx, replace(variant, measurement="lost.json")) is None
    assert decision._measurement(ctx, replace(variant, measurement=None)) is None
    copied = decision._measurement(ctx, replace(variant, measurement="m.json"))
    assert copied is not None and copied.file == "m.json" and len(copied.phases) == len(DOC["phases"])


# ------------------------------------------------------------------------------------ a rental shared by experiments

MINILM = EXAMPLE.parent / "minilm-campaign"


def _shared_minilm(tmp_path: Path, second: str) -> Path:
    """inputs/minilm-campaign with its second experiment renamed, both run in one 3-day H200 rental (no price)."""
    folder = tmp_path / "campaign"
    shutil.copytree(MINILM, folder)
    for path in sorted(folder.rglob("*"), reverse=True):  # files before their folders
        if path.is_file() and path.suffix in (".json", ".csv"):
            text = path.read_text("utf-8")
            if "minilm-precision" in text:
                path.write_text(text.replace("minilm-precision", second), "utf-8")
        if "minilm-precision" in path.name:
            path.rename(path.with_name(path.name.replace("minilm-precision", second)))
    protocol = json.loads((folder / "protocol.json").read_text("utf-8"))
    protocol["rentals"] = [{"id": "h200-3d", "gpu": "h200", "duration_days": 3, "lots": 1}]
    for exp in protocol["experiments"]:
        exp["rental"] = "h200-3d"
    (folder / "protocol.json").write_text(json.dumps(protocol, indent=2), "utf-8")
    return folder


@pytest.mark.parametrize("second", ["minilm-precision", "minilm-bits"])
def test_a_shared_rental_s_package_is_said_once_whatever_its_experiments_are_called(tmp_path: Path,
                                                                                     second: str) -> None:
    # "minilm-bits" begins as "minilm-batch" does: the experiments are told apart by their whole id
    result = check_campaign(_shared_minilm(tmp_path, second))
    unpriced = [f for f in result.findings if f.code == "no-tariff"]
    assert len(unpriced) == 1 and len(unpriced[0].configurations) == 7


def test_a_package_total_mistyped_on_one_row_gates_that_row_s_configuration_only(campaign: Path) -> None:
    set_cell(campaign, 1, "package_total_usd_minor", "11001")  # rtx4090-batch/b1, cold run 1
    result = check_campaign(campaign)
    (found,) = [f for f in result.findings if f.code == "package-total-mismatch"]
    assert found.configurations == ("rtx4090-batch/b1",)
    assert result.decision["decision"]["answer"] == "rtx4090-batch/b4"
