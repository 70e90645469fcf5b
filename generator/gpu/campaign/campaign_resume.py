"""Resumptions (003 'Wiederholen'): a resume variant resumes each interrupted attempt of its variant once, after the
experiment's registered runs, from the texts that attempt did not complete; its time and attempts are its own."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from generator.gpu.campaign.campaign_cold import Cold, cold_run, read_predictions
from generator.gpu.campaign.campaign_inputs import CorpusData, Settings, corpus_revision
from generator.gpu.campaign.campaign_rows import grid_row, prediction_path, truncation_note, write_csv
from generator.gpu.campaign.campaign_session import Loaded, Session
from generator.gpu.measure.phases import run_phase

Row = dict[str, Any]


def _how(resume: dict[str, Any], target: str, before: int, corpus: CorpusData, where: str) -> str:
    """The resumption's reason= item: what it resumed, from where, and how (no `;`: notes items end there)."""
    setting = str(resume["resume"].get("setting", "")).replace(";", ",").replace("\n", " ")
    return (f"resumes {target}, interrupted after {before} of {len(corpus.ids)} texts, with the remaining "
            f"{len(corpus.ids) - before} in {where} (resume setting: {setting})")


def _extra(loaded: Loaded, where: str) -> list[str]:
    return [f"resumption after the experiment's registered runs, {where}", truncation_note(loaded.truncation),
            f"precision {getattr(loaded.model, 'precision', 'not reported by the model')}"]


def _finish(s: Session, exp: dict[str, Any], resume: dict[str, Any], st: Settings, corpus: CorpusData,
            loaded: Loaded, phase: str, k: int, row: Row, before: list[tuple[str, str]],
            new: list[tuple[str, str]], where: str) -> Row:
    """The resumption's prediction file (the interrupted attempt's labels, then its own: the whole corpus once it
    completed) and grid row."""
    done = before + new
    write_csv(prediction_path(s.plan, s.tmp, exp["id"], resume["id"], phase, k), ["id", "label"],
              [list(r) for r in done])
    target = f"{resume['resume']['of']}/{phase}/{k}"
    return grid_row(s.plan, s.config, s.environment(st), loaded.model, exp, resume, st, corpus, phase, k, row, done,
                    _extra(loaded, where), resumed=(target, _how(resume, target, len(before), corpus, where)))


def _cold(s: Session, exp: dict[str, Any], resume: dict[str, Any], k: int, scratch: Path) -> tuple[Row, Cold]:
    """A cold run resumed as it ran: in a fresh process of its own (model_load, inputs, cold_forward repeat k)."""
    of = resume["resume"]["of"]
    interrupted = prediction_path(s.plan, s.tmp, exp["id"], of, "cold", k)
    part = scratch / f"resumed-cold-{k}.csv"
    head, completed = cold_run(s.config, exp["id"], resume["id"], k, part, scratch, skip=interrupted)
    st, corpus = s.plan.run(exp, resume, "cold", k)
    loaded = s.loaded(s.plan.settings(exp, resume))
    row = _finish(s, exp, resume, st, corpus, loaded, "cold", k, head[-1], read_predictions(interrupted),
                  read_predictions(part), "a fresh process, as the cold run it resumes")
    return row, (head, completed)


def _warm(s: Session, exp: dict[str, Any], resume: dict[str, Any], runs: list[int]) -> tuple[list[Row], list[Row]]:
    """Warm runs resumed in the campaign process: the model loaded anew, the inputs, the registered warm-up, then
    each resumption (warm_forward repeat k) in run order."""
    of, where = resume["resume"]["of"], "the campaign process after a new model load and the registered warm-up"
    base = s.plan.settings(exp, resume)
    loaded = s.loaded(base, fresh=True)
    first = s.plan.run(exp, resume, "warm", runs[0])[1]
    inputs, _ = run_phase(s.torch, s.counters, "inputs", lambda: corpus_revision(first.path))
    s.torch.manual_seed(base.seed)
    phases = [loaded.load_row, inputs, s.warmup(loaded, base, exp["warmup"]["iterations"])]
    rows = []
    for k in runs:
        st, corpus = s.plan.run(exp, resume, "warm", k)
        before = read_predictions(prediction_path(s.plan, s.tmp, exp["id"], of, "warm", k))
        s.torch.manual_seed(st.seed)
        row, new = s.timed_pass(loaded, st, corpus.path, "warm_forward", k, skip=frozenset(i for i, _ in before))
        phases.append(row)
        rows.append(_finish(s, exp, resume, st, corpus, loaded, "warm", k, row, before, new, where))
    return rows, phases


def resume_variant(s: Session, exp: dict[str, Any], resume: dict[str, Any],
                   base_rows: list[Row]) -> tuple[list[Row], list[Row]]:
    """The resume variant's attempts: one resumption of each interrupted (failed or out-of-memory) attempt of the
    variant it resumes, cold ones first, each on that attempt's corpus and seed. A resumption that fails in turn
    keeps its failure and is not resumed again. Returns its grid rows and its measurement's phases (none when
    nothing was interrupted)."""
    interrupted = [r for r in base_rows if r["_outcome"] != "ok"]
    rows: list[Row] = []
    phases: list[Row] = []
    scratch = Path(tempfile.mkdtemp(prefix="gpu-audit-resume-"))
    try:
        for r in (r for r in interrupted if r["phase"] == "cold"):
            row, (head, _) = _cold(s, exp, resume, int(r["run_index"]), scratch)
            rows.append(row)
            phases.extend(head)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    warm = sorted(int(r["run_index"]) for r in interrupted if r["phase"] == "warm")
    if warm:
        more, process = _warm(s, exp, resume, warm)
        rows.extend(more)
        phases.extend(process)
    return rows, phases
