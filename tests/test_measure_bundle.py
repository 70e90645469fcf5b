"""Measurement JSON written by `gpu-audit measure run` (the committed H200 runs) is read cleanly by check and build,
and a measurement of another workload never vouches for a variant it does not describe."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import REPO, read_grid, write_grid

from generator.audit.check import check_campaign

H200 = REPO / "inputs" / "measurements-h200" / "h200-large-fp32.json"
MEMORY = ("baseline_allocated_bytes", "baseline_reserved_bytes", "peak_allocated_bytes", "peak_reserved_bytes")


def _campaign_on_h200_measurements(campaign: Path) -> None:
    """Point every variant of one experiment at the real H200 file and copy its figures into the grid rows."""
    doc = json.loads(H200.read_text())
    phases = {("cold", 1): next(p for p in doc["phases"] if p["phase"] == "cold_forward")}
    phases.update({("warm", p["repeat"]): p for p in doc["phases"] if p["phase"] == "warm_forward"})
    protocol = json.loads((campaign / "protocol.json").read_text())
    exp = next(e for e in protocol["experiments"] if e["id"] == "rtx4090-batch")
    for variant in exp["variants"]:
        shutil.copyfile(H200, campaign / variant["measurement"])  # byte for byte, as measured
    rows = read_grid(campaign)
    header = rows[0]
    for row in rows[1:]:
        if row[header.index("experiment_id")] != "rtx4090-batch":
            continue
        phase = phases[(row[header.index("phase")], int(row[header.index("run_index")]))]
        for column in MEMORY:
            row[header.index(column)] = str(phase[column])
        row[header.index("gpu_model")] = doc["environment"]["gpu_name"]
        row[header.index("gpu_count")] = str(doc["environment"]["devices_used"])
    write_grid(campaign, rows)


# What a measurement of the synthetic MLP (batch 2, width 1024, another GPU, no run times) says against the
# classifier's batch-1/4/8 rows: every finding is a cross-check, none is about the file's format.
# The H200 files measured the Lab's MLP on real hardware: in the example's synthetic classifier campaign they
# are neither synthetic (issue 31: synthetic-data-mismatch) nor the classifier (synthetic-model-measurement).
CROSS_CHECKS = {"measurement-config-mismatch", "environment-not-seen", "gpu-not-rented", "run-times-missing",
                "outcome-disagrees-measurement", "synthetic-data-mismatch", "synthetic-model-measurement"}


def test_measure_output_is_read_and_cross_checked(campaign: Path) -> None:
    _campaign_on_h200_measurements(campaign)
    result = check_campaign(campaign)
    assert {f.code for f in result.findings} - {"registration-not-sealed"} == CROSS_CHECKS  # the example is unsealed
    measured = [c["measurement"] for c in result.decision["configurations"] if c["experiment_id"] == "rtx4090-batch"]
    assert all(m["environment"]["gpu_name"] == "NVIDIA H200" and not m["synthetic_data"] for m in measured)
    # The RTX 4090 variants rest on a file that does not describe them: none of them can be the answer.
    assert result.decision["decision"]["answer"] == "b200-batch/b8"
    assert all(not c["admissible"] for c in result.decision["configurations"] if c["experiment_id"] == "rtx4090-batch")


def test_bundle_from_measure_output_verifies(run_cli, campaign: Path, tmp_path: Path) -> None:
    _campaign_on_h200_measurements(campaign)
    out = tmp_path / "bundle"
    r = run_cli("build", str(campaign), "-o", str(out), "--unsigned", "--quiet")
    assert r.code == 1, r.out  # built, with its error findings shown in the note
    assert run_cli("verify", str(out), "--allow-unsigned").code == 0
    assert (out / "data/inputs/measurements/rtx4090-batch-b1.json").read_bytes() == H200.read_bytes()
