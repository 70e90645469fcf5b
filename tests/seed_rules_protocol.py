"""Issue 34's seed rules (the protocol in full), in the form of tests/seed_rules.py; test_seed_rules.py runs them."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
from conftest import read_grid, write_grid
from seed_rules import (
    ANY,
    B4,
    B200,
    B200_B8,
    GRID,
    OK_NOTE,
    PROTOCOL,
    RTX,
    STAMP,
    A,
    P,
    SeedRule,
    Where,
    edit_json,
    edit_lines,
    edit_protocol,
    index_of,
    line_of,
    meas,
    pred,
    set_phase,
    set_row,
    set_rows,
)

from generator.audit.recompute.decision.model import DecisionDocument
from generator.core.system.resources import schemas_dir

_SOURCE = f"{A} 'Qualität nach einem Wechsel der Präzision prüfen'"


def _register(c: Path, **target: Any) -> None:
    edit_protocol(c, lambda p: p["quality"].update(reproduction=target))


def _relabel_ten(c: Path, run: int = 3, variant: str = "b4") -> None:
    """A warm run (3) of rtx4090-batch/b4 (or another variant) gives its first ten texts the next one's label: the
    same IDs, other predictions (its quality moves a little, and stays above the threshold)."""
    def swap(lines: list[str]) -> list[str]:
        rows = [t.split(",") for t in lines[1:]]
        labels = [r[1] for r in rows[:11]]
        for i in range(10):
            rows[i][1] = labels[i + 1]
        return [lines[0]] + [",".join(r) for r in rows]
    edit_lines(c, pred(RTX, variant, "warm", run), swap)


def m_not_identical(c: Path) -> list[Where]:
    _register(c, target="identical")
    _relabel_ten(c)
    return [Where(GRID, line_of(c, RTX, "b4", "warm", 3), "run_index")]


def m_beyond_bound(c: Path) -> list[Where]:
    _register(c, target="bounded", bound=0.0)
    _relabel_ten(c)
    return [Where(GRID, ANY, "quality_value")]


def m_quality_only(c: Path) -> list[Where]:
    _register(c, target="quality")
    return []


def v_quality_only(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == B4, decision["decision"]
    assert decision["rule"]["reproduction"] == "quality"


RULES: list[SeedRule] = [
    SeedRule("reproduction-identical", "with identical outputs registered, every warm run writes the same "
             "predictions", _SOURCE, "reproduction-not-identical", m_not_identical, targets=(B4,)),
    SeedRule("reproduction-bounded", "with a bounded deviation registered, the metric's spread across the warm "
             "runs stays within the bound", _SOURCE, "reproduction-beyond-bound", m_beyond_bound, targets=(B4,)),
    SeedRule("reproduction-quality", "with acceptable quality registered, acceptance alone decides", _SOURCE, None,
             m_quality_only, protect="decision", verify=v_quality_only),
]


def m_other_code_revision(c: Path) -> list[Where]:
    # Each experiment states the inference code it ran; the B200 series ran another commit, with compilation.
    edit_protocol(c, lambda p: (p["experiments"][0]["fixed"].update(code_revision="abc1234", compile="eager"),
                                p["experiments"][1]["fixed"].update(code_revision="def5678", compile="eager")))
    return [Where(PROTOCOL, None, "/experiments/1/fixed/code_revision")]


def m_one_attention_backend(c: Path) -> list[Where]:
    # The same code, quantisation, attention backend and deterministic options in both series: one kind of work.
    same = {"code_revision": "abc1234", "quantisation": "none", "attention_backend": "sdpa",
            "deterministic": "torch.use_deterministic_algorithms(True)"}
    edit_protocol(c, lambda p: [e["fixed"].update(same) for e in p["experiments"]])
    return []


def v_same_fixed_fields(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == B4 and not [f for f in findings if f.code == "different-work"]


_FIXED = f"{A} 'Eingaben, Referenz und Manifest vorbereiten'; {P} §1, §2"
RULES += [
    SeedRule("fixed-code-revision", "the code revision, quantisation, compilation, attention backend and "
             "deterministic options held fixed are compared across the experiments ranked together", _FIXED,
             "different-work", m_other_code_revision, protect="withheld"),
    SeedRule("fixed-fields-same", "experiments that state the same code, quantisation, attention backend and "
             "deterministic options are ranked together", _FIXED, None, m_one_attention_backend, protect="decision",
             verify=v_same_fixed_fields),
]


# ------------------------------------------------------------------- training and tuning data kept apart

SPLIT_IDS = "splits/tuning-ids.csv"


def _tuning_split(c: Path, shared: int = 0) -> None:
    """A tuning split of 100 texts outside the corpus (and `shared` of the corpus's own expected IDs), registered
    with the reference value measured on it."""
    expected = (c / "expected-ids.csv").read_text(encoding="utf-8").split()[1:]
    ids = [f"tune-{i:04d}" for i in range(100)] + expected[:shared]
    (c / SPLIT_IDS).parent.mkdir(exist_ok=True)
    (c / SPLIT_IDS).write_text("id\n" + "\n".join(ids) + "\n", encoding="utf-8")
    edit_protocol(c, lambda p: (p.update(splits=[{"name": "tuning", "revision": "tuning@r1", "ids": SPLIT_IDS}]),
                                p["quality"]["reference"].update(split="tuning")))


def m_split_apart(c: Path) -> list[Where]:
    _tuning_split(c)
    return []


def v_split_apart(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == B4 and decision["rule"]["reference"]["split"] == "tuning"
    assert "splits/tuning-ids.csv" in {i["path"] for i in decision["inputs"]}  # the split's IDs are evidence


def m_split_overlaps(c: Path) -> list[Where]:
    _tuning_split(c, shared=3)
    return [Where(PROTOCOL, None, "/splits/0/ids")]


def m_reference_split_unknown(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: p["quality"]["reference"].update(split="training"))
    return [Where(PROTOCOL, None, "/quality/reference/split")]


def m_split_outside(c: Path) -> list[Where]:
    _tuning_split(c)
    edit_protocol(c, lambda p: p["splits"][0].update(ids="../tuning-ids.csv"))
    return [Where(PROTOCOL, None, "/splits/0/ids")]


_SPLITS = f"{P} §1; {A} 'Eingaben, Referenz und Manifest vorbereiten'"
RULES += [
    SeedRule("split-apart", "training and tuning splits registered apart from the corpus leave the decision as "
             "it is", _SPLITS, None, m_split_apart, protect="decision", verify=v_split_apart),
    SeedRule("split-overlaps-evaluation", "no ID of a training or tuning split is an expected ID of the "
             "comparison corpus", _SPLITS, "split-overlaps-evaluation", m_split_overlaps, protect="withheld"),
    SeedRule("reference-split-registered", "the reference value names the registered split it was measured on",
             _SPLITS, "reference-split-unknown", m_reference_split_unknown, protect="withheld"),
    SeedRule("split-ids-inside", "a split's ID file is in the campaign folder", f"{P} §5", "path-outside-campaign",
             m_split_outside, protect="withheld"),
]


# ----------------------------------------------------------------- several seeds of a stochastic protocol

SEEDS = (1234, 4321)  # the example's announced seed, and a second common seed
_SEED_SOURCE = f"{A} 'Qualität nach einem Wechsel der Präzision prüfen'"
_ROUND = timedelta(minutes=7)  # longer than the example's last three rounds of either experiment


def _shifted(stamp: str, by: timedelta) -> str:
    return (datetime.strptime(stamp, STAMP) + by).strftime(STAMP)


# The second seed's attempts: (phase, run) -> the first seed's attempt it repeats, and how many 7-minute steps
# later. Warm runs 6 to 10 repeat runs 3, 4, 5, 3, 4: the rotated order goes on (run r repeats a run r - 3k).
_REPEATS = {("cold", 2): ("cold", 1, 0), **{("warm", r): ("warm", r - 3 if r <= 8 else r - 6, 1 if r <= 8 else 2)
                                           for r in range(6, 11)}}


def _second_seed(c: Path, experiments: tuple[str, ...] = (RTX, B200)) -> None:
    """The experiments list the common seeds 1234 and 4321 and run every variant under each: the second seed's
    attempts repeat the first seed's (_REPEATS), each with its own row, prediction file and measured phase."""
    edit_protocol(c, lambda p: [e.update(seeds=list(SEEDS)) for e in p["experiments"] if e["id"] in experiments])
    rows = read_grid(c)
    h = rows[0]

    def more_repeats(doc: Any) -> None:
        doc["configuration"]["repeats"] = 10
        warm = {p["repeat"]: p for p in doc["phases"] if p["phase"] == "warm_forward"}
        for (phase, run), (_, source, steps) in _REPEATS.items():
            if phase == "warm":
                warm[run] = dict(warm[source], repeat=run,
                                 started_at=_shifted(warm[source]["started_at"], steps * _ROUND),
                                 ended_at=_shifted(warm[source]["ended_at"], steps * _ROUND))
                doc["phases"].append(warm[run])

    for exp in experiments:
        for variant in ("b1", "b4", "b8"):
            for (phase, run), (from_phase, source, _) in _REPEATS.items():
                new = list(rows[index_of(c, exp, variant, from_phase, source)])
                new[h.index("run_index")], new[h.index("seed")] = str(run), str(SEEDS[1])
                rows.append(new)
                shutil.copyfile(c / pred(exp, variant, from_phase, source), c / pred(exp, variant, phase, run))
            edit_json(c, meas(exp, variant), more_repeats)
    write_grid(c, rows)


def m_seeds_apart(c: Path) -> list[Where]:
    _second_seed(c)
    return []


def v_seeds_apart(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == B4, decision["decision"]
    assert [e["seeds"] for e in decision["experiments"]] == [list(SEEDS)] * 2
    b4 = next(c for c in decision["configurations"] if c["id"] == B4)
    assert [(s["seed"], s["attempts"], s["accepted_runs"], s["accepted"]) for s in b4["seeds"]] == \
        [(1234, 6, 6, True), (4321, 6, 6, True)]
    assert [s["timing"]["warm"]["successes"] for s in b4["seeds"]] == [5, 5]
    assert {r["seed"] for r in b4["runs"]} == set(SEEDS) and b4["timing"]["warm"]["successes"] == 10
    # the per-seed records are the decision schema's, and read back as they were written
    schema = json.loads((schemas_dir() / "decision.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(decision, schema)
    assert DecisionDocument.from_json_dict(decision).to_json_dict() == decision


def m_seed_not_accepted(c: Path) -> list[Where]:
    # Under the second seed, b4's warm run 8 writes poor predictions: seed 1234 alone would still be accepted.
    _second_seed(c)
    edit_lines(c, pred(RTX, "b4", "warm", 8), lambda ls: [ls[0]] + [t.split(",")[0] + ",utils" for t in ls[1:]])
    set_row(c, RTX, "b4", "warm", 8, quality_value="", corpus_accepted="false")
    return []


def set_second_series_aside(c: Path) -> None:
    """Every b4 attempt of a second series (cold run 2, warm runs 6 to 10: a second seed's or corpus's) is set
    aside under a registered outside cause: no run is a failure and every completed run is accepted, but the
    second series has no accepted run."""
    edit_protocol(c, lambda p: p.update(exclusions=[{"cause": "preemption", "description": "the provider's "
                                                     "scheduler killed the process (an outside cause)"}]))
    for phase, run in [("cold", 2), *(("warm", r) for r in range(6, 11))]:
        set_row(c, RTX, "b4", phase, run, notes=f"{OK_NOTE}; outcome=excluded; cause=preemption")
        if phase == "warm":
            set_phase(c, meas(RTX, "b4"), "warm_forward", run, status="failed", elapsed_seconds=None,
                      error="killed by the provider's scheduler (synthetic incident)")


def m_seed_set_aside(c: Path) -> list[Where]:
    _second_seed(c)
    set_second_series_aside(c)
    return []


def v_seed_apart(decision: dict[str, Any], findings: list[Any]) -> None:
    b4 = next(c for c in decision["configurations"] if c["id"] == B4)
    assert [s["accepted"] for s in b4["seeds"]] == [True, False], b4["seeds"]


def m_seed_not_listed(c: Path) -> list[Where]:
    # A b4 run of the second seed was in fact run under a third seed, never listed.
    _second_seed(c)
    return [Where(GRID, set_row(c, RTX, "b4", "warm", 7, seed="99"), "seed")]


def m_seed_runs_missing(c: Path) -> list[Where]:
    # b4's warm run 9 is filed under the first seed: the second seed keeps only four of its five runs.
    _second_seed(c)
    set_row(c, RTX, "b4", "warm", 9, seed=str(SEEDS[0]))
    return [Where(GRID, None, "seed")]


def m_fixed_seed_not_listed(c: Path) -> list[Where]:
    _second_seed(c)
    edit_protocol(c, lambda p: p["experiments"][0]["fixed"].update(seed=99))
    return [Where(PROTOCOL, None, "/experiments/0/fixed/seed")]


def m_seeds_of_one_experiment(c: Path) -> list[Where]:
    # Only the RTX 4090 series runs the second seed: the B200 series ran one seed, other work.
    _second_seed(c, (RTX,))
    return [Where(PROTOCOL, None, "/experiments/1/fixed/seed")]


def _seed_declared(c: Path) -> None:
    """The B200 series studies three seeds: its variants b1, b4 and b8 are relabelled as seeds 1, 4 and 8 (their
    runs as they are, the batch held at 8)."""
    def seeds_declared(p: Any) -> None:
        exp = p["experiments"][1]
        exp.update(variable="seed")
        exp["fixed"].update(batch=8, seed=None)
    edit_protocol(c, seeds_declared)
    rows = read_grid(c)
    h = rows[0]
    for r in rows[1:]:
        if r[h.index("experiment_id")] == B200:
            r[h.index("seed")], r[h.index("batch")] = r[h.index("batch")], "8"
    write_grid(c, rows)
    for variant in ("b1", "b4", "b8"):
        def measured_with(doc: Any, seed: int = int(variant[1:])) -> None:
            doc["configuration"].update(batch=8, seed=seed)
        edit_json(c, meas(B200, variant), measured_with)


def m_seed_variable(c: Path) -> list[Where]:
    # `variable: seed` was a schema violation: now each seed is a variant, recomputed apart.
    _seed_declared(c)
    return []


def v_seed_variable(decision: dict[str, Any], findings: list[Any]) -> None:
    configs = {c["id"]: c for c in decision["configurations"]}
    assert [configs[f"{B200}/{v}"]["value"] for v in ("b1", "b4", "b8")] == [1, 4, 8]
    assert all(configs[f"{B200}/{v}"]["admissible"] for v in ("b1", "b4", "b8"))
    assert decision["decision"]["answer"] == B200_B8, decision["decision"]


def m_lucky_seed(c: Path) -> list[Where]:
    # Seed 1 (the variant b1) fails the quality rule in one warm run: seeds 4 and 8, accepted on their own runs,
    # are no answer either, however fast.
    _seed_declared(c)
    edit_lines(c, pred(B200, "b1", "warm", 2), lambda ls: [ls[0]] + [t.split(",")[0] + ",utils" for t in ls[1:]])
    set_row(c, B200, "b1", "warm", 2, quality_value="", corpus_accepted="false")
    return []


def m_seeds_reproduced_apart(c: Path) -> list[Where]:
    # Identical outputs registered: under the second seed, b4 writes other predictions than under the first (ten
    # texts labelled otherwise), the same in each of its five warm runs.
    _second_seed(c)
    _register(c, target="identical")
    for run in range(6, 11):
        _relabel_ten(c, run)
    set_rows(c, RTX, "b4", quality_value="")  # the quality of the relabelled runs moves a little
    return []


def v_seeds_reproduced_apart(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == B4 and decision["rule"]["reproduction"] == "identical"


def m_seed_not_reproduced(c: Path) -> list[Where]:
    # Under the second seed, b4's warm run 8 alone writes other predictions.
    _second_seed(c)
    _register(c, target="identical")
    _relabel_ten(c, 8)
    return [Where(GRID, line_of(c, RTX, "b4", "warm", 8), "run_index")]


# The RTX 4090 warm runs in the order they started, the second seed's rounds 6 to 10 included (_REPEATS).
_DRAWN = ["b1", "b4", "b8", "b4", "b8", "b1", "b8", "b1", "b4", "b1", "b4", "b8", "b4", "b8", "b1",
          "b8", "b1", "b4", "b1", "b4", "b8", "b4", "b8", "b1", "b8", "b1", "b4", "b1", "b4", "b8"]


def m_seeds_drawn(c: Path) -> list[Where]:
    # A drawn order names each variant runs_per_variant times under each seed: ten times here.
    _second_seed(c)
    edit_protocol(c, lambda p: p["experiments"][0].update(order="drawn", drawn_sequence=_DRAWN))
    return []


def v_seeds_drawn(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == B4
    assert not [f for f in findings if f.code in ("drawn-sequence-missing", "run-order-not-registered")]


RULES += [
    SeedRule("seeds-apart", "a stochastic protocol lists common seeds; each seed's runs are kept apart, accepted "
             "and timed per seed", _SEED_SOURCE, None, m_seeds_apart, protect="decision", verify=v_seeds_apart),
    SeedRule("seed-quality-apart", "each seed's runs are judged apart: the configuration says which seed's run "
             "failed the quality rule", _SEED_SOURCE, None, m_seed_not_accepted, targets=(B4,), reason="seed 4321",
             verify=v_seed_apart),
    SeedRule("seed-accepted-each", "the decision needs every seed accepted: a seed without an accepted run is not "
             "made up by another seed's", _SEED_SOURCE, None, m_seed_set_aside, targets=(B4,),
             reason="not accepted under every seed (seed 4321: no completed run)", verify=v_seed_apart),
    SeedRule("seed-listed", "a run of an experiment with common seeds runs one of them", _SEED_SOURCE,
             "seed-not-listed", m_seed_not_listed, targets=(B4,)),
    SeedRule("seed-runs-each", "every variant keeps its registered runs under each common seed", _SEED_SOURCE,
             "seed-runs-missing", m_seed_runs_missing, targets=(B4,)),
    SeedRule("seed-announced-listed", "the announced seed is one of the common seeds", _SEED_SOURCE,
             "seed-not-listed", m_fixed_seed_not_listed, targets=(B4,)),
    SeedRule("seeds-common", "configurations ranked together ran the same common seeds", _SEED_SOURCE,
             "different-work", m_seeds_of_one_experiment, protect="withheld"),
    SeedRule("seeds-reproduced-apart", "the reproduction target holds under each seed, its runs kept apart: seeds "
             "are meant to differ", _SEED_SOURCE, None, m_seeds_reproduced_apart, protect="decision",
             verify=v_seeds_reproduced_apart),
    SeedRule("seed-reproduced", "with identical outputs registered, every warm run under one seed writes the same "
             "predictions", _SEED_SOURCE, "reproduction-not-identical", m_seed_not_reproduced, targets=(B4,)),
    SeedRule("seeds-drawn-order", "a drawn order names every warm run under every seed", _SEED_SOURCE, None,
             m_seeds_drawn, protect="decision", verify=v_seeds_drawn),
    SeedRule("seed-variable", "seed may be the declared variable: its variants are seeds, each recomputed apart",
             _SEED_SOURCE, None, m_seed_variable, "b200-wins", protect="decision", verify=v_seed_variable),
    SeedRule("seed-variable-every", "with seed declared, no seed answers unless every seed of its experiment is "
             "admissible", _SEED_SOURCE, None, m_lucky_seed, "b200-wins", targets=(f"{B200}/b4", B200_B8),
             reason="not admissible under every seed: seed 1"),
]
