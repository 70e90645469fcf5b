"""`campaign run`: execute a registered protocol on one GPU, or a lot's GPUs, and write the folder it audits.

At run time this imports only the standard library, torch and numpy (and transformers for a model directory), so
it runs on a bare GPU machine.
What it reads is in `campaign_inputs` (with the model interface), what each attempt leaves in `campaign_rows`, the
process's models and timed attempts in `campaign_session`, the cold runs' fresh processes in `campaign_cold`, the
resumptions in `campaign_resume`, a run over several GPUs in `lot`.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.core.errors import EnvironmentProblemError, OutputExistsError, UsageError
from generator.core.system.resources import load_schema, published_tariffs
from generator.core.system.safefiles import write_new_file
from generator.gpu.campaign.campaign_cold import Cold, cold_run, cold_run_child, read_predictions
from generator.gpu.campaign.campaign_inputs import (
    CampaignConfig,
    Plan,
    attempts,
    campaign_environment,
    corpus_revision,
    make_plan,
    registered_variants,
)
from generator.gpu.campaign.campaign_registered import Mistake, refuse, registration_mistakes
from generator.gpu.campaign.campaign_registered import filled as fill_placeholders
from generator.gpu.campaign.campaign_resume import resume_variant
from generator.gpu.campaign.campaign_rows import (
    csv_bytes,
    csv_cell,
    grid_row,
    measurement_document,
    neutralise,
    prediction_path,
    rotation,
    run_sequence,
    truncation_note,
    write_csv,
)
from generator.gpu.campaign.campaign_session import Loaded, Session
from generator.gpu.campaign.corpus_folder import read_folder
from generator.gpu.campaign.lot import Lot
from generator.gpu.campaign.sealed_source import SealedSource, carry_seal
from generator.gpu.measure.environment import parse_device
from generator.gpu.measure.phases import counters_for, run_phase, utc_now

__all__ = ["CampaignConfig", "CampaignResult", "cold_run_child", "corpus_revision", "neutralise", "prepare_campaign",
           "rotation", "run_campaign", "run_sequence", "write_csv"]

# The grid's columns and the published prices have one source each: the schema and the packaged tariffs.
GRID_COLUMNS: list[str] = load_schema("raw-results-row")["x-csv-columns"]
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


def _described(loaded: Loaded, exp: dict[str, Any], corpora: int) -> dict[str, Any]:
    """What the measurement's model record adds: truncation, padding, precision and the run order followed (one
    round per warm run of a variant: every seed's, on every one of the `corpora`)."""
    model = loaded.model
    order = exp.get("order", "rotated")
    return {"truncation": loaded.truncation, "padding": str(getattr(model, "padding", "not reported by the model")),
            "precision": str(getattr(model, "precision", "not reported by the model")),
            "run_order": order + (f" (drawn_sequence of {len(exp['drawn_sequence'])} warm runs)" if order == "drawn"
                                  else f" ({attempts(exp, 'warm', corpora)} rounds, the first variant rotating)")}


# --------------------------------------------------------------------------- the campaign


def _new_output(out: Path) -> Path:
    """A temporary folder beside `out`, renamed to it at the end; `out` itself must not exist yet."""
    if out.exists() or out.is_symlink():
        raise OutputExistsError(f"{out} already exists; nothing is overwritten: choose a new folder")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"the folder of {out} does not exist; create it first")
    return Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent))


def lot_size(plan: Plan) -> int:
    """The most GPUs any variant of the protocol uses: the ranks of the data-parallel run, 1 when none shards."""
    return max(plan.settings(exp, v).gpu_count for exp in plan.experiments for v in exp["variants"])


def registered_files(plan: Plan, config: CampaignConfig) -> dict[str, bytes]:
    """The files fixed before the runs, as `campaign run` writes them (path in the campaign: bytes): the protocol
    byte for byte, the expected IDs and reference of each corpus, the published tariffs, the subgroups' ID files."""
    out = {"protocol.json": plan.protocol_bytes, plan.protocol["files"]["tariffs"]: published_tariffs().read_bytes()}
    for corpus in plan.corpora:  # each corpus's expected IDs and reference, where the protocol names them
        out[corpus.expected_ids_file] = csv_bytes(["id"], [[i] for i in corpus.ids])
        out[corpus.reference_file] = csv_bytes(["id", "label"], [[i, corpus.reference[i]] for i in corpus.ids])
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


_ColdRuns = dict[tuple[str, str, int], Cold]  # (experiment, variant, run index) -> its fresh process


def _cold_runs(plan: Plan, config: CampaignConfig, tmp: Path) -> _ColdRuns:
    """Cold runs first, each in its own fresh process, before this process touches the GPU: each variant's under
    every common seed on every corpus (run_index 1, 2, ...: `Plan.run`)."""
    scratch = Path(tempfile.mkdtemp(prefix="gpu-audit-cold-"))
    cold: _ColdRuns = {}
    try:
        for exp in plan.experiments:
            for v in registered_variants(exp):
                for k in range(1, attempts(exp, "cold", len(plan.corpora)) + 1):
                    pred = prediction_path(plan, tmp, exp["id"], v["id"], "cold", k)
                    cold[(exp["id"], v["id"], k)] = cold_run(config, exp["id"], v["id"], k, pred, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return cold


def _run_experiment(s: Session, exp: dict[str, Any], cold: _ColdRuns) -> list[dict[str, Any]]:
    """One experiment: each variant's cold phases and warm-up, the warm runs in the registered order, then the
    resumptions of its interrupted attempts; its rows, and its measurements written."""
    variants = registered_variants(exp)
    phases: dict[str, list[dict[str, Any]]] = {}
    by_key: dict[tuple[str, int, int], dict[str, Any]] = {}  # (variant, 0 cold / 1 warm, run index) -> grid row
    for v in variants:
        st = s.plan.settings(exp, v)
        loaded = s.loaded(st)
        phases[v["id"]] = _cold_phases(s, exp, v, cold, by_key)
        s.torch.manual_seed(st.seed)
        phases[v["id"]].append(s.warmup(loaded, st, exp["warmup"]["iterations"]))
    sequence = run_sequence(exp, len(s.plan.corpora))
    for position, (v, run_index) in enumerate(sequence, start=1):
        st, corpus = s.plan.run(exp, v, "warm", run_index)
        loaded = s.loaded(st)
        s.torch.manual_seed(st.seed)
        row, done = s.timed_pass(loaded, st, corpus.path, "warm_forward", run_index)
        phases[v["id"]].append(row)
        write_csv(prediction_path(s.plan, s.tmp, exp["id"], v["id"], "warm", run_index), ["id", "label"],
                  [list(r) for r in done])
        order = f"order {exp.get('order', 'rotated')}: warm run {position} of {len(sequence)} of the experiment"
        by_key[(v["id"], 1, run_index)] = grid_row(s.plan, s.config, s.environment(st), loaded.model, exp, v, st,
                                                   corpus, "warm", run_index, row, done, _extra(loaded, [order]))
    rows: list[dict[str, Any]] = []
    mine = {v["id"]: [r for key, r in sorted(by_key.items()) if key[0] == v["id"]] for v in variants}
    for resume in (v for v in exp["variants"] if "resume" in v):
        mine[resume["id"]], phases[resume["id"]] = resume_variant(s, exp, resume, mine[resume["resume"]["of"]])
    for v in exp["variants"]:
        base = mine[v["resume"]["of"]] if "resume" in v else []
        accepted = {r["corpus_revision"] for r in base + mine[v["id"]]
                    if r["corpus_accepted"] and r["_outcome"] == "ok"}
        for r in mine[v["id"]]:
            r["accepted_unique_corpora"] = len(accepted)
        rows.extend(mine[v["id"]])
        rel = v.get("measurement") or f"measurements/{exp['id']}-{v['id']}.json"
        if not phases[v["id"]]:
            continue  # a resume variant with nothing to resume: no attempt, no process, no measurement
        st = s.plan.settings(exp, v)
        loaded = s.loaded(st)
        _write_json(s.tmp / rel, measurement_document(s.plan, s.config, s.environment(st), loaded.model, exp, v, st,
                                                      phases[v["id"]], _described(loaded, exp, len(s.plan.corpora))))
    return rows


def _extra(loaded: Loaded, head: list[str]) -> list[str]:
    """A row's own notes: the order it ran in, then its truncation and precision."""
    return [*head, truncation_note(loaded.truncation),
            f"precision {getattr(loaded.model, 'precision', 'not reported by the model')}"]


def _cold_phases(s: Session, exp: dict[str, Any], v: dict[str, Any], cold: _ColdRuns,
                 by_key: dict[tuple[str, int, int], dict[str, Any]]) -> list[dict[str, Any]]:
    """A variant's first phases: each cold run's fresh process's (and their grid rows), or its own model_load,
    inputs and cold_forward in this process when it registers no cold run."""
    st = s.plan.settings(exp, v)
    count = attempts(exp, "cold", len(s.plan.corpora))
    if count == 0:
        loaded = s.loaded(st, fresh=True)
        inputs, _ = run_phase(s.torch, s.counters, "inputs", lambda: corpus_revision(s.plan.corpus_path))
        s.torch.manual_seed(st.seed)
        row, _ = s.timed_pass(loaded, st, s.plan.corpus_path, "cold_forward", None)
        return [loaded.load_row, inputs, row]
    loaded = s.loaded(st)  # for the warm runs; its load belongs to no measurement
    out: list[dict[str, Any]] = []
    for k in range(1, count + 1):
        run_st, corpus = s.plan.run(exp, v, "cold", k)
        head, _completed = cold[(exp["id"], v["id"], k)]
        done = read_predictions(prediction_path(s.plan, s.tmp, exp["id"], v["id"], "cold", k))
        by_key[(v["id"], 0, k)] = grid_row(s.plan, s.config, s.environment(run_st), loaded.model, exp, v, run_st,
                                           corpus, "cold", k, head[-1], done,
                                           _extra(loaded, ["cold run before the warm runs"]))
        out.extend(head)
    return out
