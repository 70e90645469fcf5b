"""Rules of the seeds that `check` once let pass: each planted in a copy of a campaign, found on its file and line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE, GRID, read_grid, write_grid

from generator.audit.check import CheckResult, check_campaign
from generator.audit.load.findings import Finding, Severity
from generator.audit.validate.validate import validate_campaign

H200 = EXAMPLE.parent / "h200-campaign"
TARIFFS = "tarifs-forfaits.csv"


@pytest.fixture
def h200(tmp_path: Path) -> Path:
    """A writable copy of the real H200 campaign."""
    target = tmp_path / "h200"
    shutil.copytree(H200, target)
    return target


def grid_line(folder: Path, exp: str, variant: str, phase: str, run_index: int) -> int:
    """The file line (header is line 1) of one attempt; the example has no line break inside a cell."""
    rows = read_grid(folder)
    h = rows[0]
    for i, r in enumerate(rows[1:], start=1):
        if (r[h.index("experiment_id")], r[h.index("variant_id")], r[h.index("phase")],
                r[h.index("run_index")]) == (exp, variant, phase, str(run_index)):
            return i + 1
    raise AssertionError(f"no row {exp}/{variant} {phase} {run_index}")


def set_cells(folder: Path, line: int, **cells: str) -> None:
    rows = read_grid(folder)
    for column, value in cells.items():
        rows[line - 1][rows[0].index(column)] = value
    write_grid(folder, rows)


def cell(folder: Path, line: int, column: str) -> str:
    rows = read_grid(folder)
    return rows[line - 1][rows[0].index(column)]


def edit_json(path: Path, change: Any) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")


def found(result: CheckResult | Any, code: str, *, file: str | None = None, line: int | None = None,
          field: str | None = None) -> list[Finding]:
    hits = [f for f in result.findings if f.code == code and (file is None or f.file == file)
            and (line is None or f.line == line) and (field is None or f.field == field)]
    assert hits, f"no {code} at {file}:{line} {field}; findings: " + \
        "; ".join(f"{f.code}@{f.file}:{f.line}:{f.field}" for f in result.findings)
    return hits


def oom_line(folder: Path) -> int:
    return grid_line(folder, "rtx4090-batch", "b8", "warm", 3)


# --- the clean campaigns stay clean ------------------------------------------------------------------------------

@pytest.mark.parametrize("folder", [EXAMPLE, H200])
def test_clean_campaigns_have_no_error(folder: Path) -> None:
    assert [f for f in check_campaign(folder).findings if f.is_error] == []


# --- a. an empty cell is "not recorded", never 0; a completed run is never timed 0 --------------------------------

def test_zero_where_measurement_did_not_measure(campaign: Path) -> None:
    line = grid_line(campaign, "rtx4090-batch", "b4", "warm", 2)
    edit_json(campaign / "measurements" / "rtx4090-batch-b4.json",
              lambda d: d["phases"][5].update(baseline_allocated_bytes=None))  # warm_forward repeat 2
    set_cells(campaign, line, baseline_allocated_bytes="0")
    f = found(check_campaign(campaign), "zero-not-measured", file=GRID, line=line, field="baseline_allocated_bytes")[0]
    assert f.severity is Severity.ERROR and f.claimed == 0 and f.recomputed is None and f.fix


def test_zero_in_cold_row_where_cold_forward_not_measured(h200: Path) -> None:
    line = grid_line(h200, "h200-batch", "b8", "cold", 1)
    edit_json(h200 / "measurements" / "h200-batch-b8.json",
              lambda d: d["phases"][2].update(peak_reserved_bytes=None))  # cold_forward
    set_cells(h200, line, peak_reserved_bytes="0")
    found(check_campaign(h200), "zero-not-measured", file=GRID, line=line, field="peak_reserved_bytes")


def test_completed_run_timed_zero(campaign: Path) -> None:
    line = grid_line(campaign, "b200-batch", "b8", "warm", 2)
    set_cells(campaign, line, elapsed_seconds="0")
    f = found(check_campaign(campaign), "completed-run-timed-zero", file=GRID, line=line, field="elapsed_seconds")[0]
    assert f.is_error
    found(validate_campaign(campaign), "completed-run-timed-zero", file=GRID, line=line)


# --- b. a package total that no tariff can check ------------------------------------------------------------------

def test_package_total_without_tariff_is_unverifiable(campaign: Path) -> None:
    path = campaign / TARIFFS
    path.write_text("\n".join(ln for ln in path.read_text().splitlines() if not ln.startswith("b200")) + "\n")
    line = grid_line(campaign, "b200-batch", "b1", "cold", 1)
    result = check_campaign(campaign)
    f = found(result, "package-total-unverifiable", file=GRID, line=line, field="package_total_usd_minor")[0]
    assert f.is_error and f.claimed == 207100 and f.recomputed is None
    assert len([x for x in result.findings if x.code == "package-total-unverifiable"]) == 18  # every b200 row


def test_h200_claimed_total_without_tariff(h200: Path) -> None:
    line = grid_line(h200, "h200-batch", "b4", "warm", 3)
    set_cells(h200, line, package_total_usd_minor="5000")
    found(check_campaign(h200), "package-total-unverifiable", file=GRID, line=line, field="package_total_usd_minor")


# --- c. a "published" tariff must be the catalogue snapshot -------------------------------------------------------

@pytest.mark.parametrize(("line", "column", "value"), [
    (2, "price_per_lot_usd_minor", "9000"),
    (3, "gpus_per_lot", "4"),
    (3, "snapshot_date", "2026-11-01"),
])
def test_published_tariff_differs_from_catalogue(campaign: Path, line: int, column: str, value: str) -> None:
    path = campaign / TARIFFS
    rows = path.read_text().splitlines()
    header = rows[0].split(",")
    cells = rows[line - 1].split(",")
    cells[header.index(column)] = value
    rows[line - 1] = ",".join(cells)
    path.write_text("\n".join(rows) + "\n")
    f = found(check_campaign(campaign), "tariff-not-catalogue", file=TARIFFS, line=line, field=column)[0]
    assert f.is_error and f.claimed is not None and f.recomputed is not None
    found(validate_campaign(campaign), "tariff-not-catalogue", file=TARIFFS, line=line, field=column)


def test_published_tariff_for_gpu_the_catalogue_does_not_publish(h200: Path) -> None:
    path = h200 / TARIFFS
    path.write_text(path.read_text() + "h200,H200,7,5000,1,2026-09-24,published\n")
    f = found(check_campaign(h200), "tariff-not-catalogue", file=TARIFFS, line=4, field="source")[0]
    assert "illustrative" in (f.fix or "") and "source" in (f.fix or "")


def test_illustrative_tariff_is_not_a_catalogue_finding(h200: Path) -> None:
    path = h200 / TARIFFS
    path.write_text(path.read_text() + "h200,H200,7,5000,1,2026-09-24,illustrative\n")
    assert not [f for f in check_campaign(h200).findings if f.code == "tariff-not-catalogue"]


# --- d. completed=N of a failed run ------------------------------------------------------------------------------

def test_completed_count_disagrees_with_partial_file(campaign: Path) -> None:
    line = oom_line(campaign)
    set_cells(campaign, line, notes=cell(campaign, line, "notes").replace("completed=408", "completed=900"))
    hits = found(check_campaign(campaign), "completed-count-mismatch", file=GRID, line=line, field="notes")
    assert {(f.claimed, f.recomputed) for f in hits} == {(900, 408)}


def test_completed_count_disagrees_with_observed_ids(campaign: Path) -> None:
    line = oom_line(campaign)
    # the file and completed=N agree (408); only the claimed count of observed IDs is inflated
    set_cells(campaign, line, observed_ids="900")
    hits = found(check_campaign(campaign), "completed-count-mismatch", file=GRID, line=line, field="notes")
    assert (408, 900) in {(f.claimed, f.recomputed) for f in hits}


# --- e. a measurement JSON must describe the variant it is linked to ---------------------------------------------

@pytest.mark.parametrize(("key", "value", "column"), [
    ("batch", 4, "batch"),
    ("dtype", "float16", "precision"),
    ("context", 256, "context"),
])
def test_measurement_configuration_not_the_variant(campaign: Path, key: str, value: Any, column: str) -> None:
    edit_json(campaign / "measurements" / "rtx4090-batch-b8.json", lambda d: d["configuration"].update({key: value}))
    result = check_campaign(campaign)
    found(result, "measurement-config-mismatch", file="measurements/rtx4090-batch-b8.json",
          field=f"/configuration/{key}")
    found(result, "measurement-config-mismatch", file=GRID, line=grid_line(campaign, "rtx4090-batch", "b8", "warm", 1),
          field=column)


def test_measurement_of_fewer_repeats_than_registered(campaign: Path) -> None:
    def fewer(d: dict[str, Any]) -> None:
        d["configuration"]["repeats"] = 3
        d["phases"] = d["phases"][:-2]
    edit_json(campaign / "measurements" / "b200-batch-b4.json", fewer)
    result = check_campaign(campaign)
    found(result, "measurement-config-mismatch", file="measurements/b200-batch-b4.json", field="/configuration/repeats")
    found(result, "measurement-config-mismatch", file=GRID, line=grid_line(campaign, "b200-batch", "b4", "warm", 5),
          field="run_index")


def test_measurement_warmup_not_registered(campaign: Path) -> None:
    edit_json(campaign / "measurements" / "b200-batch-b8.json", lambda d: d["configuration"].update(warmup=10))
    result = check_campaign(campaign)
    found(result, "measurement-config-mismatch", file="measurements/b200-batch-b8.json", field="/configuration/warmup")
    found(result, "measurement-config-mismatch", file=GRID, line=grid_line(campaign, "b200-batch", "b8", "warm", 2),
          field="warmup_iterations")


def test_measurement_names_another_variant(campaign: Path) -> None:
    edit_json(campaign / "measurements" / "rtx4090-batch-b1.json", lambda d: d["run"].update(variant_id="b4"))
    result = check_campaign(campaign)
    found(result, "measurement-config-mismatch", file="measurements/rtx4090-batch-b1.json", field="/run/variant_id")


def test_h200_measurement_at_another_precision(h200: Path) -> None:
    edit_json(h200 / "measurements" / "h200-batch-b1.json", lambda d: d["configuration"].update(dtype="bfloat16"))
    result = check_campaign(h200)
    found(result, "measurement-config-mismatch", file="measurements/h200-batch-b1.json", field="/configuration/dtype")
    found(result, "measurement-config-mismatch", file=GRID, line=grid_line(h200, "h200-batch", "b1", "cold", 1),
          field="precision")


# --- f. warm rows of a measurement whose later phase failed ------------------------------------------------------

def test_warm_row_missing_before_the_failure(campaign: Path) -> None:
    path = campaign / "measurements" / "rtx4090-batch-b8.json"  # warm_forward repeat 3 failed (out of memory)
    edit_json(path, lambda d: d["phases"].pop(5))  # drop repeat 2, before the failure
    f = found(check_campaign(campaign), "warm-rows-mismatch", file="measurements/rtx4090-batch-b8.json",
              field="/phases")[0]
    assert f.is_error


def test_failed_warm_row_itself_missing(campaign: Path) -> None:
    path = campaign / "measurements" / "rtx4090-batch-b8.json"
    edit_json(path, lambda d: d["phases"].pop(4))  # drop repeat 1: the failed repeat 3 is still there
    found(check_campaign(campaign), "warm-rows-mismatch", file="measurements/rtx4090-batch-b8.json")


def test_stopped_at_failure_is_fine(campaign: Path) -> None:
    # `measure run` stops after the first failed phase: repeats 1-3 with 3 failed is a complete record
    path = campaign / "measurements" / "rtx4090-batch-b8.json"
    edit_json(path, lambda d: d.update(phases=d["phases"][:7]))
    codes = {f.code for f in check_campaign(campaign).findings if f.file == "measurements/rtx4090-batch-b8.json"}
    assert "warm-rows-mismatch" not in codes


# --- g. a failed run is never accepted ---------------------------------------------------------------------------

def test_failed_run_claimed_accepted(campaign: Path) -> None:
    line = oom_line(campaign)
    pred = campaign / "predictions" / "rtx4090-batch" / "b8"
    shutil.copyfile(pred / "warm-2.csv", pred / "warm-3.csv")  # the file now holds a complete, good corpus
    set_cells(campaign, line, observed_ids="1000", ids_match="true", quality_value="0.876153", corpus_accepted="true",
              notes=cell(campaign, line, "notes").replace("completed=408", "completed=1000"))
    result = check_campaign(campaign)
    f = found(result, "failed-run-accepted", file=GRID, line=line, field="corpus_accepted")[0]
    assert f.is_error and f.claimed is True and f.recomputed is False
    b8 = next(c for c in result.decision["configurations"] if c["id"] == "rtx4090-batch/b8")
    run = next(r for r in b8["runs"] if r["line"] == line)
    assert run["recomputed"]["corpus_accepted"] is False


# --- further rules of the seeds ----------------------------------------------------------------------------------

def test_out_of_memory_relabelled_as_plain_failure(campaign: Path) -> None:
    # outcome=failed instead of oom would make batch 8 look memory-feasible; the measurement says out of memory
    line = oom_line(campaign)
    set_cells(campaign, line, notes=cell(campaign, line, "notes").replace("outcome=oom", "outcome=failed"))
    found(check_campaign(campaign), "outcome-disagrees-measurement", file=GRID, line=line, field="notes")


def test_slow_completed_run_relabelled_as_aborted(campaign: Path) -> None:
    # the slowest warm run of b1 hidden as "aborted": its measurement phase completed and has a duration
    line = grid_line(campaign, "rtx4090-batch", "b1", "warm", 3)
    set_cells(campaign, line, elapsed_seconds="",
              notes=cell(campaign, line, "notes") + "; outcome=aborted; completed=1000")
    found(check_campaign(campaign), "outcome-disagrees-measurement", file=GRID, line=line, field="notes")


def test_completed_row_whose_measurement_phase_failed(campaign: Path) -> None:
    edit_json(campaign / "measurements" / "b200-batch-b4.json",
              lambda d: d["phases"][6].update(status="failed", error="CUDA out of memory", elapsed_seconds=None))
    line = grid_line(campaign, "b200-batch", "b4", "warm", 3)
    found(check_campaign(campaign), "outcome-disagrees-measurement", file=GRID, line=line, field="notes")


def test_gpu_model_is_not_the_rented_gpu(campaign: Path) -> None:
    # every rtx4090-batch row and measurement says B200: fast hardware billed at the cheaper RTX 4090 lot
    rows = read_grid(campaign)
    h = rows[0]
    for r in rows[1:]:
        if r[h.index("experiment_id")] == "rtx4090-batch":
            r[h.index("gpu_model")] = "NVIDIA B200"
    write_grid(campaign, rows)
    for name in ("b1", "b4", "b8"):
        edit_json(campaign / "measurements" / f"rtx4090-batch-{name}.json",
                  lambda d: d["environment"].update(gpu_name="NVIDIA B200"))
    line = grid_line(campaign, "rtx4090-batch", "b4", "warm", 1)
    f = found(check_campaign(campaign), "gpu-not-rented", file=GRID, line=line, field="gpu_model")[0]
    assert f.is_error and "rtx-4090" in f.message


def test_cold_run_with_warm_up(campaign: Path) -> None:
    # a cold run is the first pass after loading: warm-up iterations before it make it a warm run
    line = grid_line(campaign, "b200-batch", "b1", "cold", 1)
    set_cells(campaign, line, warmup_iterations="2")
    found(check_campaign(campaign), "warmup-mismatch", file=GRID, line=line, field="warmup_iterations")
