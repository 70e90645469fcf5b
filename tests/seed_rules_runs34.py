"""Issue 34's seed rules on runs (input order, set-up time, resumes), in the form of tests/seed_rules.py."""

from __future__ import annotations

import copy
import json
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

from conftest import GRID, read_grid, write_grid
from seed_rules import (
    B4,
    OK_NOTE,
    PROTOCOL,
    RTX,
    STAMP,
    A,
    SeedRule,
    Where,
    _parse,
    edit_json,
    edit_protocol,
    meas,
    pred,
    set_row,
)
from seed_rules_protocol import _register, _relabel_ten, _second_seed
from seed_rules_subgroups import _ids, _labels, _write_labels

from generator.audit.recompute.decision.model import DecisionDocument
from generator.core.metrics import compute_metric
from generator.render.view import finance

# ------------------------------------------------------------------------- input order as a declared variable

ORDER = "rtx4090-order"
BY_IDS, BY_LENGTH = f"{ORDER}/ids", f"{ORDER}/by-length"
ID_ORDER, LENGTH_ORDER = "expected-ids.csv order", "grouped by length, shortest first"
FASTER_S = 5.0  # how much faster the grouped runs are made, so that the grouped variant answers


def _shift(stamp: str, delta: timedelta) -> str:
    return (_parse(stamp) + delta).strftime(STAMP)


def _copy_variant(c: Path, variant: str, value: str, later: timedelta, faster: float) -> None:
    """rtx4090-batch/b4's rows, predictions and measurement copied as variant `variant` of rtx4090-order: its
    measurement records the input order `value` (none when empty), its phases `later`, its warm runs `faster`."""
    rows = read_grid(c)
    h = rows[0]
    for r in [r for r in rows[1:] if r[h.index("experiment_id")] == RTX and r[h.index("variant_id")] == "b4"]:
        new = list(r)
        new[h.index("experiment_id")], new[h.index("variant_id")] = ORDER, variant
        if new[h.index("phase")] == "warm":
            new[h.index("elapsed_seconds")] = f"{float(new[h.index('elapsed_seconds')]) - faster:.3f}"
        rows.append(new)
    write_grid(c, rows)
    shutil.copytree(c / "predictions" / RTX / "b4", c / "predictions" / ORDER / variant)
    shutil.copyfile(c / meas(RTX, "b4"), c / meas(ORDER, variant))

    def describe(doc: Any) -> None:
        doc["run"] = {"experiment_id": ORDER, "variant_id": variant}
        if value:
            doc["configuration"]["input_order"] = value
        for p in doc["phases"]:
            p["started_at"], p["ended_at"] = _shift(p["started_at"], later), _shift(p["ended_at"], later)
            if p["phase"] == "warm_forward":
                p["elapsed_seconds"] = round(p["elapsed_seconds"] - faster, 3)

    edit_json(c, meas(ORDER, variant), describe)


def _order_experiment(c: Path, grouped_records: str = LENGTH_ORDER) -> None:
    """A third experiment on one more rtx-4090 lot declares input_order: the expected-IDs order, and the texts
    grouped by length (003 'Beispiel'), both at batch 4. The grouped runs are the faster ones, so it answers."""
    def add(p: Any) -> None:
        exp = copy.deepcopy(p["experiments"][0])
        exp.update(id=ORDER, variable="input_order", description="Input order series on one rtx-4090 lot.",
                   variants=[{"id": "ids", "value": ID_ORDER, "measurement": meas(ORDER, "ids")},
                             {"id": "by-length", "value": LENGTH_ORDER, "measurement": meas(ORDER, "by-length")}])
        exp["fixed"].update(batch=4, input_order=None)
        # two copies of one series, a day apart: the order followed is every ids run, then every by-length run
        runs = exp["runs_per_variant"]
        exp.update(order="drawn", drawn_sequence=["ids"] * runs + ["by-length"] * runs)
        p["experiments"].append(exp)

    edit_protocol(c, add)
    _copy_variant(c, "ids", ID_ORDER, timedelta(days=1), 0.0)
    _copy_variant(c, "by-length", grouped_records, timedelta(days=2), FASTER_S)


def m_order_declared(c: Path) -> list[Where]:
    _order_experiment(c)
    return []


def v_order_declared(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == BY_LENGTH, decision["decision"]
    grouped = next(x for x in decision["configurations"] if x["id"] == BY_LENGTH)
    assert (grouped["variable"], grouped["value"]) == ("input_order", LENGTH_ORDER)
    assert grouped["measurement"]["configuration"]["input_order"] == LENGTH_ORDER


def m_order_not_recorded(c: Path) -> list[Where]:
    _order_experiment(c, grouped_records="")
    return [Where(PROTOCOL, None, "/experiments/2/variants/1")]


def m_order_other(c: Path) -> list[Where]:
    # the grouped variant's measurement ran the texts in the expected-IDs order: nothing was grouped
    _order_experiment(c, grouped_records=ID_ORDER)
    return [Where(meas(ORDER, "by-length"), None, "/configuration/input_order")]


def m_order_not_declared(c: Path) -> list[Where]:
    # b4 grouped its texts by length while the batch series holds the expected-IDs order fixed
    edit_json(c, meas(RTX, "b4"), lambda d: d["configuration"].update(input_order=LENGTH_ORDER))
    return [Where(meas(RTX, "b4"), None, "/configuration/input_order")]


_EXAMPLE = f"{A} 'Beispiel: dieselben 1.000 Texte klassifizieren'"
RULES: list[SeedRule] = [
    SeedRule("input-order-declared", "grouping the inputs by length is a variant declared with its own input "
             "order, and ranked like any other", _EXAMPLE, None, m_order_declared, protect="decision",
             verify=v_order_declared),
    SeedRule("input-order-recorded", "each variant of an input-order series records the order it ran in its "
             "measurement", _EXAMPLE, "input-order-unrecorded", m_order_not_recorded, targets=(BY_LENGTH,)),
    SeedRule("input-order-variant", "a variant's runs apply its registered input order", _EXAMPLE,
             "measurement-config-mismatch", m_order_other, targets=(BY_LENGTH,)),
    SeedRule("input-order-held", "an input order held fixed is the order every variant ran: grouping by length "
             "is a new variant to declare", _EXAMPLE, "measurement-config-mismatch", m_order_not_declared,
             targets=(B4,)),
]




# ------------------------------------------------------------ set-up time: outside the timer, inside the rental

COMPILE_S = 540.0
IN_WINDOW = "2026-10-05T07:05:00.000000Z"  # 09:05 in Paris, five minutes into the window


def _phase(name: str, start: str, seconds: float) -> dict[str, Any]:
    """A set-up phase row of the measurement schema: ok, dated, its memory not counted (null, never 0)."""
    row: dict[str, Any] = {"phase": name, "repeat": None, "iterations": 1, "status": "ok", "error": None,
                           "elapsed_seconds": seconds}
    row.update({f"{k}_{c}_bytes": None for k in ("baseline", "final", "peak") for c in ("allocated", "reserved")})
    row.update(started_at=start, ended_at=_shift(start, timedelta(seconds=seconds)))
    return row


def _setup(c: Path, download_at: str = IN_WINDOW) -> None:
    """b4's measurement records its set-up on the rental before its runs (003 'Start'): the download and the
    install, the model load (moved earlier) and a compilation of 540 s, each dated, none inside a timed run."""
    def add(doc: Any) -> None:
        phases = doc["phases"]
        load = phases[0]
        assert load["phase"] == "model_load"
        load["started_at"] = "2026-10-05T07:20:00.000000Z"
        load["ended_at"] = _shift(load["started_at"], timedelta(seconds=load["elapsed_seconds"]))
        phases[0:1] = [_phase("download", download_at, 240.0),
                       _phase("install", "2026-10-05T07:10:00.000000Z", 150.0), load,
                       _phase("compile", "2026-10-05T07:20:05.000000Z", COMPILE_S)]

    edit_json(c, meas(RTX, "b4"), add)


def m_setup_recorded(c: Path) -> list[Where]:
    _setup(c)
    return []


def v_setup_recorded(decision: dict[str, Any], findings: list[Any]) -> None:
    from generator.render.view.view import ReadDecision, build_view  # noqa: PLC0415 - the note's side, only here

    assert decision["decision"]["answer"] == B4, decision["decision"]
    b4 = next(x for x in decision["configurations"] if x["id"] == B4)
    assert b4["timing"]["warm"]["median"] == 40.01 and b4["timing"]["cold"]["durations"] == [48.649], b4["timing"]
    schedule = {row.configuration: row for row in build_view(ReadDecision.of(decision)).schedule}
    assert [name for name, _ in schedule[B4].setup] == ["download", "install", "model_load", "compile"]
    assert schedule[B4].setup_start == IN_WINDOW and schedule[B4].runs_start == "2026-10-05T07:31:46.866000Z"


def m_setup_before_window(c: Path) -> list[Where]:
    # the model was downloaded the evening before the rental's window began
    _setup(c, download_at="2026-10-04T18:00:00.000000Z")
    return [Where(meas(RTX, "b4"), None, "/phases/0/started_at")]


def m_setup_timed(c: Path) -> list[Where]:
    # the compilation counted inside the cold run's duration
    _setup(c)
    rows = read_grid(c)
    h = rows[0]
    line = next(i for i, r in enumerate(rows) if r[h.index("experiment_id")] == RTX
                and r[h.index("variant_id")] == "b4" and r[h.index("phase")] == "cold") + 1
    cold = rows[line - 1][h.index("elapsed_seconds")]
    rows[line - 1][h.index("elapsed_seconds")] = f"{float(cold) + COMPILE_S:.3f}"
    write_grid(c, rows)
    return [Where(GRID, line, "elapsed_seconds")]


_START = f"{A} 'Start, Aufwärmphase und gemessenen Durchlauf trennen'"
_SCHEDULE = f"{A} 'Die Dauer mit dem vollständigen Zeitplan wählen'"
RULES += [
    SeedRule("setup-recorded", "download, install, load and compile are recorded apart from the timed runs and "
             "shown in the note's schedule; the timings and the answer stay as they are", _START, None,
             m_setup_recorded, protect="decision", verify=v_setup_recorded),
    SeedRule("setup-inside-rental", "the set-up lies inside the rental: each set-up phase is dated inside the "
             "campaign window", f"{_START}; {_SCHEDULE}", "run-outside-window", m_setup_before_window,
             targets=(B4,)),
    SeedRule("setup-outside-timer", "the set-up is outside the timer: no run's elapsed_seconds counts it",
             _START, "duration-beyond-bracket", m_setup_timed, targets=(B4,)),
]


# ----------------------------------------------------------------- resumes: a resume setting is its own variant

RESUME = f"{RTX}/b8-resume"
B8 = f"{RTX}/b8"
RESUMED_S = 18.5  # the resumption's own timer: the texts after the 408 completed before the out-of-memory stop
INTERRUPTED_S = 9.629  # b8's warm run 3, from its start to the out-of-memory stop (its measurement's bracket)
SETTING = "after an out-of-memory stop, restart the process and resume after the last completed input, batch 8"


def _resumption_row(c: Path, variant: str, run_index: int, notes: str, replace: bool = False) -> int:
    """b8's completed warm run 2 copied as `variant`'s warm run `run_index` (a new row, or in place of that
    attempt's row), with its elapsed_seconds and notes; its prediction file is the whole corpus. Returns its line."""
    rows = read_grid(c)
    h = rows[0]
    key = (RTX, "b8", "warm", "2")
    source = next(r for r in rows if (r[h.index("experiment_id")], r[h.index("variant_id")], r[h.index("phase")],
                                      r[h.index("run_index")]) == key)
    new = list(source)
    new[h.index("variant_id")], new[h.index("run_index")] = variant, str(run_index)
    new[h.index("elapsed_seconds")] = f"{RESUMED_S:.3f}"
    new[h.index("notes")] = f"{source[h.index('notes')]}; {notes}"
    if replace:
        line = next(i for i, r in enumerate(rows) if (r[h.index("experiment_id")], r[h.index("variant_id")],
                                                      r[h.index("phase")], r[h.index("run_index")])
                    == (RTX, variant, "warm", str(run_index)))
        rows[line] = new
    else:
        rows.append(new)
        line = len(rows) - 1
    write_grid(c, rows)
    target = c / pred(RTX, variant, "warm", run_index)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(c / pred(RTX, "b8", "warm", 2), target)
    return line + 1


def _resume(c: Path, resumed: str = "b8/warm/3", of: str = "b8") -> int:
    """rtx4090-batch registers b8 with its resume setting as a variant of its own, b8-resume (003 'Wiederholen'):
    b8's out-of-memory warm run 3 (408 texts done) is resumed in a new process at 09:00 and completes the corpus.
    Its measurement holds that process (model_load, inputs, warm_forward repeat 3). Returns the resumption's line."""
    rel = meas(RTX, "b8-resume")

    def declare(p: Any) -> None:
        p["experiments"][0]["variants"].append({"id": "b8-resume", "value": 8, "measurement": rel,
                                                "resume": {"of": of, "setting": SETTING}})

    edit_protocol(c, declare)
    line = _resumption_row(c, "b8-resume", 3, f"outcome=resumed; resumed={resumed}")
    doc = json.loads((c / meas(RTX, "b8")).read_text(encoding="utf-8"))
    doc["run"]["variant_id"] = "b8-resume"
    load, inputs = doc["phases"][0], doc["phases"][1]
    warm = {**next(p for p in doc["phases"] if p["phase"] == "warm_forward" and p["repeat"] == 2), "repeat": 3,
            "elapsed_seconds": 14.0}
    start = _parse("2026-10-05T08:00:00.000000Z")
    for p, offset in ((load, 0.0), (inputs, 4.0), (warm, 5.0)):
        p["started_at"] = (start + timedelta(seconds=offset)).strftime(STAMP)
        p["ended_at"] = _shift(p["started_at"], timedelta(seconds=p["elapsed_seconds"]))
    doc["phases"] = [load, inputs, warm]
    (c / rel).write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return line


def m_resume_variant(c: Path) -> list[Where]:
    _resume(c)
    return []


def v_resume_variant(decision: dict[str, Any], findings: list[Any]) -> None:
    configs = {x["id"]: x for x in decision["configurations"]}
    resumed, b8 = configs[RESUME], configs[B8]
    assert decision["decision"]["answer"] == RESUME, decision["decision"]
    # its balance: b8's six attempts and the resumption; the interruption is a failure, resumed, not an exclusion
    assert (resumed["attempts"], resumed["failures"], resumed["out_of_memory"]) == (7, 1, 0), resumed
    assert resumed["admissible"] and resumed["resume"] == {"of": "b8", "setting": SETTING, "resumed": 1,
                                                           "interrupted_seconds": INTERRUPTED_S}
    warm = resumed["timing"]["warm"]
    assert (warm["successes"], warm["failures"]) == (5, 1)
    assert round(RESUMED_S + INTERRUPTED_S, 3) in warm["durations"], warm  # the interrupted time counted
    # never mixed into b8: its out-of-memory run stays a failure, and the resumption is not one of its runs
    assert (b8["attempts"], b8["timing"]["warm"]["successes"], b8["admissible"]) == (6, 4, False)
    assert all(r["outcome"] != "resumed" for r in b8["runs"])


def m_resume_in_base(c: Path) -> list[Where]:
    # b8's out-of-memory run 3 resumed and written in its place, as if b8 had completed five runs
    return [Where(GRID, _resumption_row(c, "b8", 3, "outcome=resumed", replace=True), "notes")]


def v_resume_in_base(decision: dict[str, Any], findings: list[Any]) -> None:
    b8 = next(x for x in decision["configurations"] if x["id"] == B8)
    assert b8["timing"]["warm"]["successes"] == 4 and b8["accepted_runs"] == 5, b8["timing"]  # not counted


def m_resume_not_interrupted(c: Path) -> list[Where]:
    # the resumption names b8's warm run 2, which completed: nothing was interrupted there
    return [Where(GRID, _resume(c, resumed="b8/warm/2"), "notes")]


def m_resume_of_unknown(c: Path) -> list[Where]:
    _resume(c, resumed="b16/warm/3", of="b16")
    return [Where(PROTOCOL, None, "/experiments/0/variants/3/resume/of")]


_RESUME = f"{A} 'Wiederholen und Fehlschläge beibehalten'"
RULES += [
    SeedRule("resume-variant", "a resume setting is its own variant: its resumed attempts, their time and the "
             "attempts they resume count in its balance, never in the variant it resumes", _RESUME, None,
             m_resume_variant, protect="decision", verify=v_resume_variant),
    SeedRule("resume-declared", "a resumed attempt belongs to a declared resume variant, never in place of the "
             "failed run", _RESUME, "resume-not-declared", m_resume_in_base, targets=(B8,), verify=v_resume_in_base),
    SeedRule("resume-names-interrupted", "a resumed attempt names the interrupted attempt it resumes", _RESUME,
             "resume-target-invalid", m_resume_not_interrupted, targets=(RESUME,)),
    SeedRule("resume-of-registered", "a resume variant resumes another variant of its experiment", _RESUME,
             "resume-of-invalid", m_resume_of_unknown, targets=(RESUME,)),
]


# ---------------------------------------- resumes: what a resumption may name, under which seed, value and outcome


def _failed_resumption(c: Path, run_index: int, notes: str) -> int:
    """b8-resume's warm attempt `run_index`, interrupted in turn by an out-of-memory stop (nothing done, no file),
    with `notes` after its outcome. Returns its line."""
    line = _resumption_row(c, "b8-resume", run_index, f"outcome=oom; completed=0; {notes}")
    set_row(c, RTX, "b8-resume", "warm", run_index, elapsed_seconds="", corpus_accepted="false", observed_ids="0",
            ids_match="false", quality_value="", format_valid="false")
    (c / pred(RTX, "b8-resume", "warm", run_index)).unlink()
    return line


def m_resume_itself(c: Path) -> list[Where]:
    # a failed resumption names itself as the attempt it resumes: its own failure excused
    _resume(c)
    return [Where(GRID, _failed_resumption(c, 4, "resumed=b8-resume/warm/4"), "notes")]


def v_resume_itself(decision: dict[str, Any], findings: list[Any]) -> None:
    resumed = next(x for x in decision["configurations"] if x["id"] == RESUME)
    assert (resumed["failures"], resumed["out_of_memory"], resumed["resume"]["resumed"]) == (2, 1, 1), resumed


def m_resume_cycle(c: Path) -> list[Where]:
    # two failed resumptions name each other: each would excuse the other's failure
    _resume(c)
    return [Where(GRID, _failed_resumption(c, 4, "resumed=b8-resume/warm/5"), "notes"),
            Where(GRID, _failed_resumption(c, 5, "resumed=b8-resume/warm/4"), "notes")]


def m_resume_not_resumed(c: Path) -> list[Where]:
    # the resumption is written as a completed run of its own (no outcome=resumed), yet names b8's warm run 3
    line = _resume(c)
    set_row(c, RTX, "b8-resume", "warm", 3, notes=f"{OK_NOTE}; resumed=b8/warm/3")
    return [Where(GRID, line, "notes")]


def m_resume_other_value(c: Path) -> list[Where]:
    # the resume variant of b8 runs batch 4: another configuration than the one it resumes
    _resume(c)
    edit_protocol(c, lambda p: p["experiments"][0]["variants"][3].update(value=4))
    set_row(c, RTX, "b8-resume", "warm", 3, batch="4")
    edit_json(c, meas(RTX, "b8-resume"), lambda d: d["configuration"].update(batch=4))
    return [Where(PROTOCOL, None, "/experiments/0/variants/3/value")]


def _seeded_resume(c: Path, seeds: tuple[int, int, int] = (1234, 4321, 4321)) -> list[int]:
    """Both experiments run the common seeds 1234 and 4321 (b8's out-of-memory warm run 3, and its repeats 6 and 9
    under 4321); b8-resume resumes the three, under `seeds`, in a process of 2026-10-07. Returns their lines."""
    _second_seed(c)
    rel = meas(RTX, "b8-resume")
    edit_protocol(c, lambda p: p["experiments"][0]["variants"].append(
        {"id": "b8-resume", "value": 8, "measurement": rel, "resume": {"of": "b8", "setting": SETTING}}))
    lines = []
    for run, seed in zip((3, 6, 9), seeds, strict=True):
        lines.append(_resumption_row(c, "b8-resume", run, f"outcome=resumed; resumed=b8/warm/{run}"))
        set_row(c, RTX, "b8-resume", "warm", run, seed=str(seed))
    doc = json.loads((c / meas(RTX, "b8")).read_text(encoding="utf-8"))
    doc["run"]["variant_id"] = "b8-resume"
    source = next(p for p in doc["phases"] if p["phase"] == "warm_forward" and p["repeat"] == 2)
    phases = [doc["phases"][0], doc["phases"][1]]
    phases += [dict(source, repeat=run, elapsed_seconds=14.0) for run in (3, 6, 9)]
    start = _parse("2026-10-07T08:00:00.000000Z")
    for p, offset in zip(phases, (0.0, 4.0, 10.0, 40.0, 70.0), strict=True):
        p["started_at"] = (start + timedelta(seconds=offset)).strftime(STAMP)
        p["ended_at"] = _shift(p["started_at"], timedelta(seconds=p["elapsed_seconds"]))
    doc["phases"] = phases
    (c / rel).write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return lines


def m_resume_seeds(c: Path) -> list[Where]:
    _seeded_resume(c)
    return []


def v_resume_seeds(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == RESUME, decision["decision"]
    resumed = next(x for x in decision["configurations"] if x["id"] == RESUME)
    warm = resumed["timing"]["warm"]["durations"]
    # each seed's record counts its resumptions as completed runs, timed like the configuration's
    for s in resumed["seeds"]:
        assert (s["attempts"], s["completed"], s["accepted_runs"], s["accepted"]) == \
               ((7, 6, 6, True) if s["seed"] == 1234 else (8, 6, 6, True)), s
        assert set(s["timing"]["warm"]["durations"]) <= set(warm), (s, warm)
    assert round(RESUMED_S + INTERRUPTED_S, 3) in resumed["seeds"][0]["timing"]["warm"]["durations"]


def m_resume_other_seed(c: Path) -> list[Where]:
    # b8's warm run 6 ran under seed 4321; its resumption runs seed 1234
    return [Where(GRID, _seeded_resume(c, (1234, 1234, 4321))[1], "notes")]


def m_resume_not_reproduced(c: Path) -> list[Where]:
    # identical outputs registered: the resumption's predictions give ten texts another label than b8's warm runs
    line = _resume(c)
    _register(c, target="identical")
    _relabel_ten(c, 3, "b8-resume")
    set_row(c, RTX, "b8-resume", "warm", 3, quality_value="")
    return [Where(GRID, line, "run_index")]


def m_resume_long_fails(c: Path) -> list[Where]:
    # the resumption labels 30 long texts wrongly: the whole corpus passes, the long subgroup does not
    _resume(c)
    rel = pred(RTX, "b8-resume", "warm", 3)
    reference, labels = _labels(c, "reference.csv"), _labels(c, rel)
    classes = sorted(set(reference.values()))
    for i in [i for i in _ids(c, "subgroups/long.csv") if labels[i] == reference[i]][:30]:
        labels[i] = classes[(classes.index(reference[i]) + 1) % len(classes)]
    _write_labels(c, rel, labels)
    whole = compute_metric("macro_f1", list(reference.values()), [labels[i] for i in reference])
    set_row(c, RTX, "b8-resume", "warm", 3, quality_value=f"{whole:.6f}", corpus_accepted="false",
            accepted_unique_corpora="1")
    return []


def v_resume_long_fails(decision: dict[str, Any], findings: list[Any]) -> None:
    resumed = next(x for x in decision["configurations"] if x["id"] == RESUME)
    long = next(g for g in resumed["subgroups"] if g["id"] == "long")
    assert (long["completed_runs"], long["accepted_runs"]) == (6, 5), long
    assert not resumed["admissible"] and any("subgroup long" in r for r in resumed["reasons"]), resumed["reasons"]


def v_resume_note_reasons(decision: dict[str, Any], findings: list[Any]) -> None:
    # the note's reasons are decision.json's: the resumed interruption is no failure that excludes
    resumed = next(x for x in decision["configurations"] if x["id"] == RESUME)
    assert not any(r.startswith(("failed attempts", "not memory-feasible")) for r in resumed["reasons"]), resumed
    doc = DecisionDocument.from_json_dict(decision)
    note = next(e for e in finance.exclusions(doc.configurations) if e.configuration == RESUME)
    assert "failed" not in [r.code for r in note.reasons] and note.reasons[0].code == "not-accepted", note


_PRECISION = f"{A} 'Qualität nach einem Wechsel der Präzision prüfen'"
RULES += [
    SeedRule("resume-not-itself", "a resumption never names itself: a failed resumption is a failure of the resume "
             "variant", _RESUME, "resume-target-invalid", m_resume_itself, targets=(RESUME,),
             verify=v_resume_itself),
    SeedRule("resume-chain-acyclic", "a resumption names an earlier attempt: two failed resumptions do not excuse "
             "each other", _RESUME, "resume-target-invalid", m_resume_cycle, targets=(RESUME,)),
    SeedRule("resume-outcome", "a resumption that completed is written outcome=resumed, never as a run of its own",
             _RESUME, "resume-target-invalid", m_resume_not_resumed, targets=(RESUME,)),
    SeedRule("resume-same-value", "a resume variant is the variant it resumes, with its setting: the same value",
             _RESUME, "resume-of-invalid", m_resume_other_value, targets=(RESUME,)),
    SeedRule("resume-seeds", "under common seeds, each seed's record counts the resumptions of its runs",
             _RESUME, None, m_resume_seeds, protect="decision", verify=v_resume_seeds),
    SeedRule("resume-same-seed", "a resumption continues the attempt it resumes under its seed", _RESUME,
             "resume-target-invalid", m_resume_other_seed, targets=(RESUME,)),
    SeedRule("resume-reproduced", "a completed resumption is a warm run of its configuration for the reproduction "
             "target", _PRECISION, "reproduction-not-identical", m_resume_not_reproduced, targets=(RESUME,)),
    SeedRule("resume-subgroups", "a completed resumption is judged on every subgroup like any completed run",
             _RESUME, None, m_resume_long_fails, protect="decision", verify=v_resume_long_fails),
    SeedRule("resume-note-reasons", "the note excludes a resume variant for decision.json's reasons: the interruption "
             "it resumed is no failure that excludes it", _RESUME, None, m_resume_long_fails, protect="decision",
             verify=v_resume_note_reasons),
]
