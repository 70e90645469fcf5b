"""`campaign run`: execute a registered protocol on one GPU, or a lot's GPUs, and write the folder it audits.

At run time this imports only the standard library, torch and numpy (and transformers for a model directory), so
it runs on a bare GPU machine.
What it reads is in `campaign_inputs` (with the model interface), what each attempt leaves in `campaign_rows`, the
process's models and timed attempts in `campaign_session`, a run over several GPUs in `lot`.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.core.errors import EnvironmentProblemError, OutputExistsError, UsageError
from generator.core.resources import load_schema, published_tariffs
from generator.core.safefiles import write_new_file
from generator.gpu.campaign_inputs import (
    BatchModel,
    CampaignConfig,
    Plan,
    Settings,
    campaign_environment,
    corpus_revision,
    load_model,
    make_plan,
)
from generator.gpu.campaign_registered import Mistake, refuse, registration_mistakes
from generator.gpu.campaign_registered import filled as fill_placeholders
from generator.gpu.campaign_rows import (
    MAX_ERROR,
    csv_bytes,
    csv_cell,
    grid_row,
    measurement_document,
    neutralise,
    rotation,
    run_sequence,
    truncation_note,
    write_csv,
)
from generator.gpu.campaign_session import Loaded, Session, timed_run
from generator.gpu.corpus_folder import read_folder
from generator.gpu.environment import parse_device
from generator.gpu.lot import Lot, sharded_phase
from generator.gpu.phases import counters_for, phase_row, run_phase, utc_now
from generator.gpu.sealed_source import SealedSource, carry_seal

__all__ = ["CampaignConfig", "CampaignResult", "cold_run_child", "corpus_revision", "neutralise", "prepare_campaign",
           "rotation", "run_campaign", "run_sequence", "write_csv"]

# The grid's columns and the published prices have one source each: the schema and the packaged tariffs.
GRID_COLUMNS: list[str] = load_schema("raw-results-row")["x-csv-columns"]
COLD_TIMEOUT_S = 600
# Seals the campaign's temporary folder once its registered files are written, before the first phase (the CLI's,
# given --key: it needs pyHanko, which this module never imports).
Sealer = Callable[[Path], None]


@dataclass
class CampaignResult:
    """What was written: the folder, the grid rows (with a private `_outcome`), the environment and when (UTC)."""

    out: Path
    rows: list[dict[str, Any]]
    environment: dict[str, Any]
    failed_attempts: int = 0
    started_at: str | None = None
    ended_at: str | None = None


def _write_json(path: Path, document: dict[str, Any]) -> None:
    write_new_file(path, (json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8"),
                   what="campaign file")


def _described(loaded: Loaded, exp: dict[str, Any]) -> dict[str, Any]:
    """What the measurement's model record adds: truncation, padding, precision and the run order followed."""
    model = loaded.model
    order = exp.get("order", "rotated")
    return {"truncation": loaded.truncation, "padding": str(getattr(model, "padding", "not reported by the model")),
            "precision": str(getattr(model, "precision", "not reported by the model")),
            "run_order": order + (f" (drawn_sequence of {len(exp['drawn_sequence'])} warm runs)" if order == "drawn"
                                  else f" ({exp['runs_per_variant']} rounds, the first variant rotating)")}


# --------------------------------------------------------------------------- cold run in a fresh process


def cold_run_child(config: CampaignConfig, experiment: str, variant: str, predictions: Path, result: Path) -> None:
    """Inside the fresh process: model_load, inputs (corpus fingerprint), cold_forward; write the result JSON."""
    plan = make_plan(config)
    torch, _ = campaign_environment(config)
    exp = next(e for e in plan.experiments if e["id"] == experiment)
    st = plan.settings(exp, next(v for v in exp["variants"] if v["id"] == variant))
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
            row, _ = run_phase(torch, counters, "inputs", lambda: corpus_revision(plan.corpus_path))
            phases.append(row)
            torch.manual_seed(st.seed)
            row, done = sharded_phase(torch, counters, lot, "cold_forward", model, plan.corpus_path, st) \
                if lot is not None else timed_run(torch, counters, model, plan.corpus_path, st.batch, "cold_forward",
                                                   None)
            phases.append(row)
    finally:
        if lot is not None:
            lot.close()
    write_csv(predictions, ["id", "label"], [list(r) for r in done])
    write_new_file(result, json.dumps({"phases": phases, "completed": len(done)}).encode("utf-8"),
                   what="cold-run result")


def _cold_command(config: CampaignConfig, exp_id: str, variant_id: str, predictions: Path, result: Path) -> list[str]:
    """The command line of the fresh process that runs one variant's cold run."""
    cmd = [sys.executable, "-m", "generator", "campaign", "_cold-run", str(config.protocol.resolve()),
           "--model", config.model if not Path(config.model).is_file() else str(Path(config.model).resolve()),
           "--corpus", str(config.corpus.resolve()), "--device", config.device, "--out", str(config.out),
           "--experiment", exp_id, "--variant", variant_id, "--predictions", str(predictions),
           "--result", str(result)]
    if config.allow_cpu_for_tests:
        cmd.append("--allow-cpu-for-tests")
    return cmd


def _cold_run(config: CampaignConfig, exp_id: str, variant_id: str, predictions: Path,
              scratch: Path) -> tuple[list[dict[str, Any]], int]:
    """Run one variant's cold run in a fresh process: its phases and how many texts it completed."""
    result = scratch / f"cold-{exp_id}-{variant_id}.json"
    cmd = _cold_command(config, exp_id, variant_id, predictions, result)
    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[2])
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
        row = phase_row(name, None, 1)
        row.update(status="failed", error=error, started_at=started_at, ended_at=ended_at)
        failed.append(row)
    if not predictions.exists():
        write_csv(predictions, ["id", "label"], [])
    return failed, 0


# --------------------------------------------------------------------------- the campaign


def _new_output(out: Path) -> Path:
    """A temporary folder beside `out`, renamed to it at the end; `out` itself must not exist yet."""
    if out.exists() or out.is_symlink():
        raise OutputExistsError(f"{out} already exists; nothing is overwritten: choose a new folder")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"the folder of {out} does not exist; create it first")
    return Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent))


def _prediction_path(plan: Plan, tmp: Path, exp_id: str, variant_id: str, phase: str, run_index: int) -> Path:
    pattern = plan.protocol["files"]["predictions"]
    rel = (pattern.replace("{experiment_id}", exp_id).replace("{variant_id}", variant_id)
           .replace("{phase}", phase).replace("{run_index}", str(run_index)))
    return tmp / rel


def lot_size(plan: Plan) -> int:
    """The most GPUs any variant of the protocol uses: the ranks of the data-parallel run, 1 when none shards."""
    return max(plan.settings(exp, v).gpu_count for exp in plan.experiments for v in exp["variants"])


def registered_files(plan: Plan, config: CampaignConfig) -> dict[str, bytes]:
    """The files fixed before the runs, as `campaign run` writes them (path in the campaign: bytes): the protocol
    byte for byte, the expected IDs and reference from the corpus, the published tariffs, the subgroups' ID files."""
    files = plan.protocol["files"]
    out = {"protocol.json": plan.protocol_bytes,
           files["expected_ids"]: csv_bytes(["id"], [[i] for i in plan.ids]),
           files["reference"]: csv_bytes(["id", "label"], [[i, plan.reference[i]] for i in plan.ids]),
           files["tariffs"]: published_tariffs().read_bytes()}
    for group in plan.subgroups:  # the planned subgroups' ID files, as registered
        out[group.ids_file] = (config.corpus / group.ids_file).read_bytes()
    return out


def _write_files(folder: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        write_new_file(folder / rel, data, what="campaign file")


def prepare_campaign(config: CampaignConfig) -> tuple[list[str], list[Mistake]]:
    """Write a new campaign folder at config.out holding only the registered files (no GPU): the folder
    `gpu-audit register` seals on a workstation before `campaign run` runs its protocol on the GPU machine. The
    protocol's placeholders are set to the corpus's fingerprint and size and, given config.model, the model's
    revisions (`campaign_registered.filled`); the files and what was set."""
    raw, filled = fill_placeholders(config.protocol.read_bytes() if config.protocol.is_file() else b"",
                                    read_folder(config.corpus), config.corpus, config.model)
    plan = make_plan(config, raw or None)
    files = registered_files(plan, config)
    tmp = _new_output(config.out)
    try:
        _write_files(tmp, files)
        os.rename(tmp, config.out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return list(files), filled


def run_campaign(config: CampaignConfig, source: SealedSource | None = None,
                 seal: Sealer | None = None) -> CampaignResult:
    """Run every experiment of the protocol and write the campaign folder at config.out (renamed at the end).

    `source` is the sealed folder the protocol lies in (its seal carried into the campaign), `seal` seals the
    campaign's registered files before the first phase; at most one of them."""
    if source is not None and seal is not None:
        raise UsageError(f"{source.root} is sealed already: run it without --key (sealing it again now would "
                         "replace the registration by a later one)")
    if config.protocol.is_file():  # before anything runs, every registered value the files contradict at once
        refuse(registration_mistakes(config.protocol.read_bytes(), read_folder(config.corpus), config.corpus,
                                     config.model)[1])
    plan = make_plan(config)
    world = lot_size(plan)
    first = parse_device(config.device) if config.device != "cpu" else 0
    torch, env = campaign_environment(config)
    if config.device != "cpu" and first + world > (env["visible_device_count"] or 0):
        visible = env["visible_device_count"] or 0
        raise EnvironmentProblemError(f"a variant uses {world} GPUs from {config.device}, but {visible} "
                                      f"{'is' if visible == 1 else 'are'} visible; nothing was run (rent a lot "
                                      f"with {world} GPUs, or register fewer in gpu_count)")
    registered = registered_files(plan, config)
    carried = carry_seal(source, registered) if source is not None else {}
    tmp = _new_output(config.out)
    try:
        _write_files(tmp, registered | carried)
        if seal is not None:
            seal(tmp)  # before the first phase: the seal dates the registration before any run
        started_at = utc_now()
        rows = _execute(plan, config, torch, env, tmp, world)
        ended_at = utc_now()
        try:
            os.rename(tmp, config.out)  # refuses a non-empty folder that appeared meanwhile
        except OSError:
            raise OutputExistsError(f"{config.out} appeared while the campaign ran; the results stay in {tmp}"
                                    ) from None
    except BaseException:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    return CampaignResult(out=config.out, rows=rows, environment=env,
                          failed_attempts=sum(r["_outcome"] != "ok" for r in rows), started_at=started_at,
                          ended_at=ended_at)


def _execute(plan: Plan, config: CampaignConfig, torch: Any, env: dict[str, Any], tmp: Path,
             world: int) -> list[dict[str, Any]]:
    """The cold runs, then each experiment's warm-up and warm runs; the grid last."""
    files = plan.protocol["files"]
    cold = _cold_runs(plan, config, tmp)
    counters = counters_for(torch, config.device)
    session = Session(plan=plan, config=config, torch=torch, counters=counters, env=env, tmp=tmp,
                       lot=Lot(torch, config.model, config.device, world) if world > 1 else None)
    rows: list[dict[str, Any]] = []
    try:
        for exp in plan.experiments:
            rows.extend(_run_experiment(session, exp, cold))
    finally:
        if session.lot is not None:
            session.lot.close()
    write_csv(tmp / files["raw_results"], GRID_COLUMNS, [[csv_cell(r[c]) for c in GRID_COLUMNS] for r in rows])
    return rows


_Cold = dict[tuple[str, str], tuple[list[dict[str, Any]], int]]


def _cold_runs(plan: Plan, config: CampaignConfig, tmp: Path) -> _Cold:
    """Cold runs first, each in its own fresh process, before this process touches the GPU."""
    scratch = Path(tempfile.mkdtemp(prefix="gpu-audit-cold-"))
    cold: _Cold = {}
    try:
        for exp in plan.experiments:
            if exp["cold_runs_per_variant"] == 1:
                for v in exp["variants"]:
                    pred = _prediction_path(plan, tmp, exp["id"], v["id"], "cold", 1)
                    cold[(exp["id"], v["id"])] = _cold_run(config, exp["id"], v["id"], pred, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return cold


def _run_experiment(s: Session, exp: dict[str, Any], cold: _Cold) -> list[dict[str, Any]]:
    """One experiment: each variant's cold phases and warm-up, the warm runs in the registered order; its rows."""
    variants = exp["variants"]
    phases: dict[str, list[dict[str, Any]]] = {}
    by_key: dict[tuple[str, int], dict[str, Any]] = {}
    sequence = run_sequence(exp)
    for v in variants:
        st = s.plan.settings(exp, v)
        loaded = s.loaded(st)
        phases[v["id"]] = _cold_phases(s, exp, v, st, cold, by_key)
        s.torch.manual_seed(st.seed)
        phases[v["id"]].append(s.warmup(loaded, st, exp["warmup"]["iterations"]))
    for position, (v, run_index) in enumerate(sequence, start=1):
        st = s.plan.settings(exp, v)
        loaded = s.loaded(st)
        s.torch.manual_seed(st.seed)
        row, done = s.timed_pass(loaded, st, "warm_forward", run_index)
        phases[v["id"]].append(row)
        write_csv(_prediction_path(s.plan, s.tmp, exp["id"], v["id"], "warm", run_index), ["id", "label"],
                  [list(r) for r in done])
        order = f"order {exp.get('order', 'rotated')}: warm run {position} of {len(sequence)} of the experiment"
        by_key[(v["id"], run_index)] = grid_row(s.plan, s.config, s.environment(st), loaded.model, exp, v, st, "warm",
                                                run_index, row, done, _extra(loaded, [order]))
    rows: list[dict[str, Any]] = []
    for v in variants:
        mine = [r for (vid, _), r in sorted(by_key.items(), key=lambda kv: kv[0][1]) if vid == v["id"]]
        accepted = int(any(r["corpus_accepted"] and r["_outcome"] == "ok" for r in mine))
        for r in mine:
            r["accepted_unique_corpora"] = accepted
        rows.extend(mine)
        rel = v.get("measurement") or f"measurements/{exp['id']}-{v['id']}.json"
        st = s.plan.settings(exp, v)
        loaded = s.loaded(st)
        _write_json(s.tmp / rel, measurement_document(s.plan, s.config, s.environment(st), loaded.model, exp, v, st,
                                                      phases[v["id"]], _described(loaded, exp)))
    return rows


def _extra(loaded: Loaded, head: list[str]) -> list[str]:
    """A row's own notes: the order it ran in, then its truncation and precision."""
    return [*head, truncation_note(loaded.truncation),
            f"precision {getattr(loaded.model, 'precision', 'not reported by the model')}"]


def _cold_phases(s: Session, exp: dict[str, Any], v: dict[str, Any], st: Settings, cold: _Cold,
                 by_key: dict[tuple[str, int], dict[str, Any]]) -> list[dict[str, Any]]:
    """A variant's first phases: its fresh process's (and their grid row), or its own model_load, inputs and
    cold_forward in this process."""
    if (exp["id"], v["id"]) in cold:
        loaded = s.loaded(st)  # for the warm runs; its load belongs to no measurement
        head, _completed = cold[(exp["id"], v["id"])]
        done = _read_predictions(_prediction_path(s.plan, s.tmp, exp["id"], v["id"], "cold", 1))
        by_key[(v["id"], 0)] = grid_row(s.plan, s.config, s.environment(st), loaded.model, exp, v, st, "cold", 1,
                                        head[-1], done, _extra(loaded, ["cold run before the warm runs"]))
        return list(head)
    loaded = s.loaded(st, fresh=True)
    inputs, _ = run_phase(s.torch, s.counters, "inputs", lambda: corpus_revision(s.plan.corpus_path))
    s.torch.manual_seed(st.seed)
    row, _ = s.timed_pass(loaded, st, "cold_forward", None)
    return [loaded.load_row, inputs, row]


def _read_predictions(path: Path) -> list[tuple[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        next(reader, None)
        return [(r[0], r[1]) for r in reader if len(r) == 2]
