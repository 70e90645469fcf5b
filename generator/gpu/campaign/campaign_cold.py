"""Cold runs of `campaign run`: each in a fresh process (model_load, inputs, cold_forward), one per common seed and
corpus, and a cold run's resumption alike."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from generator.core.system.safefiles import write_new_file
from generator.gpu.campaign.campaign_inputs import CampaignConfig, campaign_environment, corpus_revision, make_plan
from generator.gpu.campaign.campaign_rows import MAX_ERROR, write_csv
from generator.gpu.campaign.campaign_session import timed_run
from generator.gpu.campaign.lot import Lot, sharded_phase
from generator.gpu.measure.phases import counters_for, phase_row, run_phase, utc_now
from generator.gpu.models.loading import BatchModel, load_model

COLD_TIMEOUT_S = 600
Cold = tuple[list[dict[str, Any]], int]  # a cold process's phases, and how many texts it completed


def read_predictions(path: Path) -> list[tuple[str, str]]:
    """A prediction file's (id, label) pairs in file order; none when it does not exist."""
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        next(reader, None)
        return [(r[0], r[1]) for r in reader if len(r) == 2]


def cold_run_child(config: CampaignConfig, experiment: str, variant: str, run_index: int, predictions: Path,
                   result: Path, skip: Path | None = None) -> None:
    """Inside the fresh process: model_load, inputs (the corpus fingerprint), cold_forward repeat `run_index` on the
    corpus and under the seed of that cold run (the texts of the prediction file `skip` left out, for a resumption);
    write the result JSON."""
    plan = make_plan(config)
    torch, _ = campaign_environment(config)
    exp = next(e for e in plan.experiments if e["id"] == experiment)
    v = next(v for v in exp["variants"] if v["id"] == variant)
    st, corpus = plan.run(exp, v, "cold", run_index)
    done_before = frozenset(i for i, _ in read_predictions(skip)) if skip is not None else frozenset()
    counters = counters_for(torch, config.device)
    phases: list[dict[str, Any]] = []
    done: list[tuple[str, str]] = []
    lot = Lot(torch, config.model, config.device, st.gpu_count) if st.gpu_count > 1 else None
    try:
        def load() -> BatchModel:
            model = load_model(config.model, config.device, st.precision, st.context)
            if lot is not None:
                lot.load(st)
            return model

        torch.manual_seed(st.seed)
        row, model = run_phase(torch, counters, "model_load", load)
        phases.append(row)
        if model is not None:
            row, _ = run_phase(torch, counters, "inputs", lambda: corpus_revision(corpus.path))
            phases.append(row)
            torch.manual_seed(st.seed)
            row, done = sharded_phase(torch, counters, lot, "cold_forward", model, corpus.path, st, repeat=run_index) \
                if lot is not None else timed_run(torch, counters, model, corpus.path, st.batch, "cold_forward",
                                                  run_index, done_before)
            phases.append(row)
    finally:
        if lot is not None:
            lot.close()
    write_csv(predictions, ["id", "label"], [list(r) for r in done])
    write_new_file(result, json.dumps({"phases": phases, "completed": len(done)}).encode("utf-8"),
                   what="cold-run result")


def _cold_command(config: CampaignConfig, exp_id: str, variant_id: str, run_index: int, predictions: Path,
                  result: Path, skip: Path | None) -> list[str]:
    """The command line of the fresh process that runs one cold run."""
    cmd = [sys.executable, "-m", "generator", "campaign", "_cold-run", str(config.protocol.resolve()),
           "--model", config.model if not Path(config.model).is_file() else str(Path(config.model).resolve())]
    for folder in (config.corpus, *config.further_corpora):
        cmd += ["--corpus", str(folder.resolve())]
    cmd += ["--device", config.device, "--out", str(config.out), "--experiment", exp_id, "--variant", variant_id,
            "--run-index", str(run_index), "--predictions", str(predictions), "--result", str(result)]
    if skip is not None:
        cmd += ["--skip", str(skip)]
    if config.allow_cpu_for_tests:
        cmd.append("--allow-cpu-for-tests")
    return cmd


def cold_run(config: CampaignConfig, exp_id: str, variant_id: str, run_index: int, predictions: Path,
             scratch: Path, skip: Path | None = None) -> Cold:
    """Run one cold run in a fresh process: its phases and how many texts it completed."""
    result = scratch / f"cold-{exp_id}-{variant_id}-{run_index}.json"
    cmd = _cold_command(config, exp_id, variant_id, run_index, predictions, result, skip)
    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = package_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    started_at = utc_now()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=COLD_TIMEOUT_S, env=env, check=False)
        error = None if proc.returncode == 0 and result.is_file() else \
            f"cold process exited {proc.returncode}: {(proc.stderr or proc.stdout)[-MAX_ERROR:]}"
    except subprocess.TimeoutExpired:
        error = f"cold process exceeded {COLD_TIMEOUT_S} s and was stopped"
    if error is None:
        data = json.loads(result.read_text(encoding="utf-8"))
        return data["phases"], int(data["completed"])
    # The failed process's own bounds: a cold run that failed still happened, and when matters.
    ended_at = utc_now()
    failed = []
    for name in ("model_load", "inputs", "cold_forward"):
        row = phase_row(name, run_index if name == "cold_forward" else None, 1)
        row.update(status="failed", error=error, started_at=started_at, ended_at=ended_at)
        failed.append(row)
    if not predictions.exists():
        write_csv(predictions, ["id", "label"], [])
    return failed, 0
