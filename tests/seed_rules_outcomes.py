"""Issue 31's seed rules (outcomes), in the form of tests/seed_rules.py; tests/test_seed_rules.py runs them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import GRID, read_grid, write_grid
from seed_rules import (
    OK_NOTE,
    PROTOCOL,
    RTX,
    A,
    L,
    P,
    SeedRule,
    Where,
    cell,
    edit_json,
    edit_protocol,
    index_of,
    meas,
    pred,
    set_row,
    set_rows,
)

# Literal here: names imported from seed_rules are typed only once its table is read (it imports this module).
B1, B4, B8 = "rtx4090-batch/b1", "rtx4090-batch/b4", "rtx4090-batch/b8"
CRASH = "process killed by the scheduler (synthetic incident)"
MLP = {"architecture": "Linear(1024, 4096) -> GELU -> Linear(4096, 1024)", "parameter_count": 8393728,
       "input_shape": [8, 512, 1024]}
PREEMPTION = {"cause": "preemption", "description": "the provider's scheduler killed the process (an outside cause)"}


# ----------------------------------------------------------------------------------- item 5: failures count


def m_four_of_five_crashed(c: Path) -> list[Where]:
    # b8's warm runs 1, 2, 4 and 5 crashed (not out of memory), honestly reported: b8 is no answer on one run
    for run in (1, 2, 4, 5):
        set_row(c, RTX, "b8", "warm", run, elapsed_seconds="", quality_value="", corpus_accepted="false",
                notes=f"{OK_NOTE}; outcome=failed; error={CRASH}")

    def crash(doc: Any) -> None:
        for phase in doc["phases"]:
            if phase["phase"] == "warm_forward" and phase["repeat"] in (1, 2, 4, 5):
                phase.update(status="failed", error=CRASH, elapsed_seconds=None)

    edit_json(c, meas(RTX, "b8"), crash)
    return []


def m_excluded_unregistered(c: Path) -> list[Where]:
    # the failed run 3 relabelled excluded, with no exclusion in the protocol: read as a completed run until now
    notes = cell(c, RTX, "b8", "warm", 3, "notes").replace("outcome=failed", "outcome=excluded")
    return [Where(GRID, set_row(c, RTX, "b8", "warm", 3, notes=notes), "notes")]


def m_excluded_other_cause(c: Path) -> list[Where]:
    # an exclusion is registered, the row names another cause
    edit_protocol(c, lambda p: p.update(exclusions=[{"cause": "provider-maintenance", "description": "the "
                                                     "provider's announced maintenance stopped the machine"}]))
    notes = cell(c, RTX, "b8", "warm", 3, "notes").replace("outcome=failed", "outcome=excluded; cause=slow")
    return [Where(GRID, set_row(c, RTX, "b8", "warm", 3, notes=notes), "notes")]


def m_registered_exclusion(c: Path) -> list[Where]:
    # the scheduler's kill of run 3, an outside cause registered before the runs: the attempt is set aside
    edit_protocol(c, lambda p: p.update(exclusions=[PREEMPTION]))
    notes = cell(c, RTX, "b8", "warm", 3, "notes").replace("outcome=failed", "outcome=excluded; cause=preemption")
    set_row(c, RTX, "b8", "warm", 3, notes=notes)
    return []


def v_exclusion_listed(decision: dict[str, Any], findings: list[Any]) -> None:
    d = decision["decision"]
    assert d["answer"] == B8, d
    assert [(e["configuration"], e["phase"], e["run_index"], e["cause"]) for e in d.get("exclusions", [])] == \
        [(B8, "warm", 3, "preemption")], d["exclusions"]
    b8 = next(c for c in decision["configurations"] if c["id"] == B8)
    assert b8["failures"] == 0 and b8["timing"]["warm"]["successes"] == 4, b8["timing"]["warm"]


def m_excluded_oom(c: Path) -> list[Where]:
    # the out-of-memory run 3 "excluded" under a registered cause: running out of memory is the batch's own doing
    edit_protocol(c, lambda p: p.update(exclusions=[PREEMPTION]))
    notes = cell(c, RTX, "b8", "warm", 3, "notes").replace("outcome=oom", "outcome=excluded; cause=preemption")
    return [Where(GRID, set_row(c, RTX, "b8", "warm", 3, notes=notes), "notes")]


def m_unknown_outcome(c: Path) -> list[Where]:
    return [Where(GRID, set_row(c, RTX, "b4", "warm", 2, notes=f"{OK_NOTE}; outcome=skipped"), "notes")]


def m_outcome_capitalised(c: Path) -> list[Where]:
    # `outcome=Failed`: read as no outcome at all until now, so a failure passed for a completed run
    line = set_row(c, RTX, "b4", "warm", 2, notes=f"{OK_NOTE}; outcome=Failed; completed=1000")
    return [Where(GRID, line, "notes")]


# ------------------------------------------------------------------------ item 6: synthetic never passes for real


def m_protocol_claims_measured(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: p.update(synthetic_data=False))
    return [Where(PROTOCOL, None, "/synthetic_data")]


def m_one_generated_measurement(c: Path) -> list[Where]:
    # a campaign declared measured, every file measured except b4's, whose figures were generated
    edit_protocol(c, lambda p: p.update(synthetic_data=False))
    for path in sorted((c / "measurements").iterdir()):
        if path.name != Path(meas(RTX, "b4")).name:
            edit_json(c, path.relative_to(c).as_posix(), lambda d: d.update(synthetic_data=False))
    return [Where(meas(RTX, "b4"), None, "/synthetic_data")]


def m_lab_mlp_as_memory_evidence(c: Path) -> list[Where]:
    def mlp(doc: Any) -> None:
        doc.pop("model")
        doc["synthetic_model"] = dict(MLP)

    edit_json(c, meas(RTX, "b4"), mlp)
    return [Where(meas(RTX, "b4"), None, "/synthetic_model")]


# ------------------------------------------------------------------------------- item 7: fewer than five runs


def _keep_first_warm(c: Path, variant: str, keep: int) -> None:
    """Keep one warm attempt of a variant (`keep`, renumbered 1): its row, its prediction file, its phase."""
    rows = read_grid(c)
    drop = {index_of(c, RTX, variant, "warm", r) for r in range(1, 6) if r != keep}
    rows[index_of(c, RTX, variant, "warm", keep)][rows[0].index("run_index")] = "1"
    write_grid(c, [r for i, r in enumerate(rows) if i not in drop])
    kept = (c / pred(RTX, variant, "warm", keep)).read_bytes()
    for r in range(1, 6):
        (c / pred(RTX, variant, "warm", r)).unlink()
    (c / pred(RTX, variant, "warm", 1)).write_bytes(kept)

    def one(doc: Any) -> None:
        doc["configuration"]["repeats"] = 1
        doc["phases"] = [{**p, "repeat": 1} if p.get("repeat") == keep else p for p in doc["phases"]
                         if p["phase"] != "warm_forward" or p.get("repeat") == keep]

    edit_json(c, meas(RTX, variant), one)


def m_one_run_each(c: Path) -> list[Where]:
    # runs_per_variant 1: one warm run per variant (b8's the out-of-memory one)
    edit_protocol(c, lambda p: p["experiments"][0].update(runs_per_variant=1))
    for variant, keep in (("b1", 1), ("b4", 1), ("b8", 3)):
        _keep_first_warm(c, variant, keep)
    return [Where(PROTOCOL, None, "/experiments/0/runs_per_variant")]


def v_no_separation_without_spread(decision: dict[str, Any], findings: list[Any]) -> None:
    d = decision["decision"]
    assert "separates" not in d["reason"], d["reason"]
    assert d["series_decides"] is False, d
    assert all(not t["timing_decides"] for t in d["ties"] if B1 in t["configurations"]), d["ties"]
    experiment = next(e for e in decision["experiments"] if e["id"] == RTX)
    assert all(not k["decides"] for k in experiment["comparisons"]), experiment["comparisons"]


# --------------------------------------------------------------------- item 8: the driver and the OOM variant


def m_driver_empty(c: Path) -> list[Where]:
    return [Where(GRID, set_rows(c, RTX, "b8", driver_version="")[0], "driver_version")]


def m_driver_is_runtime(c: Path) -> list[Where]:
    # the CUDA runtime PyTorch reports copied into driver_version, in the grid and the measurement
    lines = set_rows(c, RTX, "b8", driver_version="12.8")
    edit_json(c, meas(RTX, "b8"), lambda d: d["environment"].update(driver_version="12.8"))
    return [Where(GRID, lines[0], "driver_version"), Where(meas(RTX, "b8"), None, "/environment/driver_version")]


def m_oom_measurement_last_repeat_dropped(c: Path) -> list[Where]:
    # b8 failed at repeat 3 and went on; its repeat 5 dropped from the measurement, its grid row kept
    edit_json(c, meas(RTX, "b8"), lambda d: d["phases"].pop())
    return [Where(meas(RTX, "b8"), None, "/phases")]


FAIL = f"{P} §3; {A} 'Wiederholen und Fehlschläge beibehalten'"
RULES: list[SeedRule] = [
    SeedRule("failed-attempt-not-admissible", "a configuration with a failed attempt is not admissible (a failure "
             "is kept, never set aside)", FAIL, None, lambda c: [], "b8-failed", targets=(B8,),
             reason="failed attempts"),
    SeedRule("four-of-five-crashed", "four of five runs crashed: not the answer on the one that completed", FAIL,
             None, m_four_of_five_crashed, "b8-wins", targets=(B8,), reason="failed attempts"),
    SeedRule("excluded-needs-rule", "an attempt is excluded only under an exclusion registered before the runs",
             FAIL, "exclusion-not-registered", m_excluded_unregistered, "b8-failed", targets=(B8,)),
    SeedRule("excluded-registered-cause", "an exclusion names a cause the protocol registered", FAIL,
             "exclusion-not-registered", m_excluded_other_cause, "b8-failed", targets=(B8,)),
    SeedRule("exclusion-listed", "a registered exclusion with an outside cause sets the attempt aside, and the "
             "decision lists it", FAIL, None, m_registered_exclusion, "b8-failed", protect="decision",
             verify=v_exclusion_listed),
    SeedRule("oom-not-excluded", "running out of memory is no outside cause: it stays a failure observation",
             f"{P} §5; {A} 'Speicher als Machbarkeitskriterium nutzen'", "outcome-disagrees-measurement",
             m_excluded_oom, targets=(B8,)),
    SeedRule("outcome-known", "an unknown outcome is an error, never a completed run", FAIL, "unknown-outcome",
             m_unknown_outcome, targets=(B4,)),
    SeedRule("outcome-spelling", "outcome=Failed is no completed run", FAIL, "unknown-outcome",
             m_outcome_capitalised, targets=(B4,)),
    SeedRule("synthetic-declared", "the protocol's synthetic_data agrees with every measurement", f"{L} §3; {P} "
             "Einleitung", "synthetic-data-mismatch", m_protocol_claims_measured, protect="withheld"),
    SeedRule("synthetic-measurement", "generated figures never pass for measured ones", f"{L} §3",
             "synthetic-data-mismatch", m_one_generated_measurement, targets=(B4,)),
    SeedRule("lab-mlp-not-evidence", "the Lab's synthetic MLP is not the memory evidence of a classifier",
             f"{L} Inhalt, §3; {P} §3", "synthetic-model-measurement", m_lab_mlp_as_memory_evidence,
             targets=(B4,)),
    SeedRule("five-runs", "five measured runs per variant; fewer is a warning", f"{P} §3; {A} 'Dauern lesen, "
             "ohne fünf Versuche zu überinterpretieren'", "fewer-than-five-runs", m_one_run_each,
             protect="warning", severity="warning", verify=v_no_separation_without_spread),
    SeedRule("driver-recorded", "the driver is recorded", f"{P} §2, §4 driver_version; {L} §2",
             "driver-not-recorded", m_driver_empty, "b8-wins", targets=(B8,)),
    SeedRule("driver-not-runtime", "the runtime version built into PyTorch is not the driver version",
             f"{L} §2; {P} §2", "driver-is-runtime-version", m_driver_is_runtime, "b8-wins", targets=(B8,)),
    SeedRule("oom-measurement-repeats-kept", "the OOM variant keeps a warm_forward row per attempted repeat",
             f"{L} §3; {P} §3", "warm-rows-mismatch", m_oom_measurement_last_repeat_dropped, targets=(B8,)),
]
