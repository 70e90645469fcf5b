"""Issue 51's edges of seeds and corpora: one run short under a seed or on a corpus, every corpus not any, a
series' balance counted run by run, the claimed count of corpora, every seed of an experiment, exclusions listed."""

from __future__ import annotations

from typing import Any

import pytest
from edges_records import EXAMPLE, accepted, config, grid_row, run

from generator.audit.load.inputs.protocol import ExperimentSpec, Protocol
from generator.audit.load.inputs.rows import GridRow
from generator.audit.recompute.decision.runcells import CorpusRuns, SeedRuns
from generator.audit.recompute.evidence import attempts
from generator.audit.recompute.evidence.resumes import ResumePlan
from generator.audit.recompute.quality import corpora, seeds

GRID = "grid.csv"
FIRST, SECOND = EXAMPLE["corpus"]["revision"], "second@r1"
PROTOCOL = Protocol.of({**EXAMPLE, "corpora": [{"name": "second sample", "revision": SECOND, "size": 300,
                                                "expected_ids": "c2/ids.csv", "reference": "c2/ref.csv"}]})
RESUME: dict[str, Any] = {"id": "b1-resume", "value": 1,
                          "resume": {"of": "b1", "setting": "restart, resume after the last input"}}


def _exp(further: tuple[str, ...] = (), **data: Any) -> ExperimentSpec:
    return ExperimentSpec.of({**EXAMPLE["experiments"][0], "variants": [{"id": "b1", "value": 1}, RESUME],
                              "runs_per_variant": 2, "cold_runs_per_variant": 1, **data}, further)


def _rows(warm: int, cold: int, **cells: Any) -> list[tuple[GridRow, int]]:
    return [(grid_row("b1", phase, i + 1, **cells), 2 + i) for phase, n in (("warm", warm), ("cold", cold))
            for i in range(n)]


# ------------------------------------------------------------------------------------ seeds

def _seed_counts(rows: list[tuple[GridRow, int]], further: tuple[str, ...] = ()) -> list[tuple[int, int, str]]:
    return [(f.claimed, f.recomputed, f.message) for f in  # type: ignore[misc]
            seeds.count_findings(_exp(further, seeds=[1, 2]), rows, GRID)]


def test_every_seed_has_its_runs() -> None:
    assert _seed_counts(_rows(2, 1, seed=1) + _rows(2, 1, seed=2)) == []
    # one warm run short under seed 2: the finding says so; the resume variant's rows are never a series
    [(n, needed, message)] = _seed_counts(_rows(2, 1, seed=1) + _rows(1, 1, seed=2))
    assert (n, needed) == (1, 2)
    assert message == ("rtx4090-batch/b1 has 1 warm run(s) under seed 2, where 2 are registered under each of its "
                       "common seeds (1, 2)")


def test_each_seed_runs_on_every_corpus() -> None:
    # two corpora: four warm and two cold runs under each seed; three warm runs are one short
    rows = _rows(4, 2, seed=1) + _rows(3, 2, seed=2)
    assert [(n, needed) for n, needed, _ in _seed_counts(rows, (SECOND,))] == [(3, 4)]
    assert _seed_counts(_rows(4, 2, seed=1) + _rows(4, 2, seed=2), (SECOND,)) == []
    # and one cold run short: 1 of the 1 x 2 registered
    assert [(n, needed) for n, needed, _ in _seed_counts(_rows(4, 2, seed=1) + _rows(4, 1, seed=2), (SECOND,))] == [
        (1, 2)]


def test_no_seeds_no_count() -> None:
    assert seeds.count_findings(_exp(), [], GRID) == []


@pytest.mark.parametrize("fixed,seed,listed", [(1, 1, True), (3, 3, False), (None, None, True)])
def test_an_announced_seed_and_a_row_seed_are_common_seeds(fixed: int | None, seed: int | None, listed: bool) -> None:
    exp = {**EXAMPLE["experiments"][0], "seeds": [1, 2], "fixed": {**EXAMPLE["experiments"][0]["fixed"],
                                                                   "seed": fixed}}
    found = seeds.protocol_findings(Protocol.of({**EXAMPLE, "experiments": [exp]}), "protocol.json")
    assert [f.field for f in found] == ([] if listed else ["/experiments/0/fixed/seed"])
    spec = ExperimentSpec.of(exp)
    assert [f.claimed for f in seeds.row_findings(spec, grid_row("b1", "warm", 1, seed=seed), 2, GRID)] == (
        [] if listed else [seed])
    # without common seeds, neither is a finding
    plain = {**exp, "seeds": None}
    assert seeds.protocol_findings(Protocol.of({**EXAMPLE, "experiments": [plain]}), "protocol.json") == []
    assert seeds.row_findings(ExperimentSpec.of(plain), grid_row("b1", "warm", 1, seed=3), 2, GRID) == []


def _series(*rows: tuple[str, str, float | None]) -> list[tuple[int, GridRow, int]]:
    """(phase, notes, elapsed) per row, as (index, row, line)."""
    return [(i, grid_row("b1", phase, i + 1, notes=notes, elapsed_seconds=elapsed, seed=1), i + 2)
            for i, (phase, notes, elapsed) in enumerate(rows)]


def test_a_series_balance_run_by_run() -> None:
    rows = _series(("warm", "", 10.0), ("warm", "", 12.0), ("warm", "", None),
                   ("warm", "outcome=oom; completed=3", 4.0),
                   ("cold", "outcome=failed; completed=0", None), ("cold", "", 30.0),
                   ("warm", "outcome=resumed", 9.0))
    acceptances = {0: accepted(), 1: accepted(False), 5: accepted()}  # row 2 was not judged
    attempts_, completed, failures, accepted_runs, timed = seeds.balance(rows, acceptances)
    assert (attempts_, completed, failures, accepted_runs) == (7, 4, 2, 2)
    assert (timed.warm.durations, timed.warm.failures, timed.cold.durations, timed.cold.failures) == (
        (10.0, 12.0), 1, (30.0,), 1)


def test_a_resumption_counts_with_the_interrupted_time() -> None:
    rows = _series(("warm", "outcome=resumed; resumed=b1/warm/3", 9.0))
    plan = ResumePlan("b1-resume", _exp().variants[1].resume, added={0: 6.5})  # type: ignore[arg-type]
    assert seeds.balance(rows, {0: accepted()}, plan)[1:4] == (1, 0, 1)
    assert seeds.balance(rows, {0: accepted()}, plan)[4].warm.durations == (15.5,)


@pytest.mark.parametrize("notes,acceptance,ok", [
    (["", ""], [True, True], True), (["", ""], [True, False], False),
    (["outcome=oom; completed=1"], [False], False),  # no completed run: never accepted
    ([""], [True], True),  # one completed run, accepted
])
def test_a_seed_is_accepted_when_each_of_its_completed_runs_is(notes: list[str], acceptance: list[bool],
                                                                ok: bool) -> None:
    rows = _series(*(("warm", n, 1.0) for n in notes))
    [one] = seeds.seed_runs(_exp(seeds=[1]), rows, {i: accepted(a) for i, a in enumerate(acceptance)}) or ()
    assert one.accepted is ok
    [corpus] = [c for c in corpora.corpus_runs(PROTOCOL, _exp((SECOND,)),
                                               [(i, grid_row("b1", "warm", i + 1, notes=n, corpus_revision=SECOND,
                                                             elapsed_seconds=1.0), i + 2)
                                                for i, n in enumerate(notes)],
                                               {i: accepted(a) for i, a in enumerate(acceptance)}) or ()
                if c.revision == SECOND]
    assert corpus.accepted is ok


def test_no_seeds_no_seed_runs_and_one_corpus_no_corpus_runs() -> None:
    assert seeds.seed_runs(_exp(), [], {}) is None
    assert corpora.corpus_runs(PROTOCOL, _exp(), [], {}) is None


def test_seed_runs_keep_each_seed_apart() -> None:
    rows = [(i, grid_row("b1", "warm", i + 1, seed=s, elapsed_seconds=float(i)), i + 2)
            for i, s in enumerate((2, 1, 2))]
    runs = seeds.seed_runs(_exp(seeds=[1, 2, 3]), rows, {0: accepted(), 1: accepted(), 2: accepted(False)}) or ()
    assert [(r.seed, r.attempts, r.accepted_runs, r.timing.warm.durations) for r in runs] == [
        (1, 1, 1, (1.0,)), (2, 2, 1, (0.0, 2.0)), (3, 0, 0, ())]


def _seed(seed: int, completed: int, accepted_runs: int) -> SeedRuns:
    timing = seeds.balance([], {})[4]
    return SeedRuns(seed, completed, completed, 0, accepted_runs, completed > 0 and accepted_runs == completed, timing)


def test_seed_reason_names_each_missed_seed() -> None:
    assert seeds.seed_reason([_seed(1, 5, 5)]) is None and seeds.seed_reason(None) is None
    assert seeds.seed_reason([_seed(1, 5, 5), _seed(2, 0, 0), _seed(3, 5, 3)]) == (
        "not accepted under every seed (seed 2: no completed run; seed 3: 2 of 5 completed runs not accepted)")


def test_every_seed_decides_a_seed_configuration() -> None:
    configs = [config("e/s1"), config("e/S2", admissible=False), config("e/s3", admissible=False),
               config("f/b1", variable="batch"), config("f/b2", variable="batch", admissible=False),
               config("g/s1")]
    out = {c.id: c for c in seeds.every_seed(configs)}
    assert out["e/s1"].admissible is False and out["e/s1"].reasons == (
        "not admissible under every seed: seed 1 (e/S2), seed 1 (e/s3) is not; the decision needs every seed",)
    # an inadmissible seed names the other inadmissible one, never itself
    assert out["e/S2"].reasons == ("not admissible under every seed: seed 1 (e/s3) is not; the decision needs "
                                   "every seed",)
    assert out["f/b1"] == configs[3] and out["g/s1"] == configs[5]  # another variable; an experiment all admissible


def test_every_seed_tells_two_seeds_apart_by_their_exact_id() -> None:
    # Seeds named S1 and s1: the inadmissible S1 is another seed of s1's experiment.
    out = seeds.every_seed([config("e/s1"), config("e/S1", admissible=False)])
    assert [c.admissible for c in out] == [False, False]


def test_exclusions_list_only_excluded_attempts() -> None:
    runs = (run(1, outcome="excluded", notes="outcome=excluded; cause=power"), run(2),
            run(3, outcome="oom", notes="outcome=oom"))
    [excluded] = attempts.exclusions([config("e/b1", runs)])
    assert (excluded.configuration, excluded.line, excluded.run_index, excluded.cause) == ("e/b1", 2, 1, "power")


# ------------------------------------------------------------------------------------ corpora

def _corpus_counts(rows: list[tuple[GridRow, int]], **data: Any) -> list[tuple[int, int, str]]:
    return [(f.claimed, f.recomputed, f.message) for f in  # type: ignore[misc]
            corpora.count_findings(PROTOCOL, _exp((SECOND,), **data), rows, GRID)]


def test_every_corpus_has_its_runs() -> None:
    both = _rows(2, 1, corpus_revision=FIRST) + _rows(2, 1, corpus_revision=SECOND)
    assert _corpus_counts(both) == []
    [(n, needed, message)] = _corpus_counts(_rows(2, 1, corpus_revision=FIRST) + _rows(2, 0, corpus_revision=SECOND))
    assert (n, needed) == (0, 1)
    assert message == ("rtx4090-batch/b1 has 0 cold run(s) on the corpus 'second sample' (second@r1), where 1 are "
                       "registered on each corpus of the work")
    assert corpora.count_findings(PROTOCOL, _exp(), [], GRID) == []  # one corpus: no count of its own


def test_each_corpus_has_its_runs_under_each_seed() -> None:
    rows = [(r, n) for s in (1, 2) for c in (FIRST, SECOND) for r, n in _rows(2, 1, corpus_revision=c, seed=s)]
    assert _corpus_counts(rows, seeds=[1, 2]) == []
    assert [(n, needed) for n, needed, _ in _corpus_counts(rows[:-1], seeds=[1, 2])] == [(1, 2)]
    # one warm run short on the second corpus: 3 of the 2 x 2 registered
    short = [(r, n) for r, n in rows if not (r.seed == 2 and r.corpus_revision == SECOND and r.run_index == 2
                                            and r.phase == "warm")]
    assert [(n, needed) for n, needed, _ in _corpus_counts(short, seeds=[1, 2])] == [(3, 4)]


def test_corpus_runs_keep_every_corpus() -> None:
    rows = [(0, grid_row("b1", "warm", 1, corpus_revision=FIRST, elapsed_seconds=1.0), 2)]
    runs = corpora.corpus_runs(PROTOCOL, _exp((SECOND,)), rows, {0: accepted()}) or ()
    assert [(c.revision, c.attempts, c.accepted) for c in runs] == [(FIRST, 1, True), (SECOND, 0, False)]
    assert corpora.corpus_reason(runs) == "not accepted on every corpus (second sample: no completed run)"


def _corpus(name: str, completed: int, accepted_runs: int) -> CorpusRuns:
    return CorpusRuns(name, name, 10, completed, completed, 0, accepted_runs,
                      completed > 0 and accepted_runs == completed, seeds.balance([], {})[4])


def test_corpus_reason_names_each_missed_corpus() -> None:
    assert corpora.corpus_reason([_corpus("a", 5, 5)]) is None and corpora.corpus_reason(None) is None
    assert corpora.corpus_reason([_corpus("a", 5, 5), _corpus("b", 0, 0), _corpus("c", 6, 2)]) == (
        "not accepted on every corpus (b: no completed run; c: 4 of 6 completed runs not accepted)")


@pytest.mark.parametrize("claimed,distinct,hint", [
    (5, 1, True), (2, 1, True), (2, 0, True),  # repeats of one corpus (or none) counted as several
    (3, 2, False), (1, 0, False), (0, 1, False), (1, 2, False),
])
def test_a_claimed_count_of_corpora(claimed: int, distinct: int, hint: bool) -> None:
    [finding] = corpora.claimed_count_findings([(0, grid_row("b1", "warm", 1, accepted_unique_corpora=claimed), 7)],
                                               distinct, GRID)
    assert (finding.claimed, finding.recomputed, finding.line) == (claimed, distinct, 7)
    assert finding.message == (f"accepted_unique_corpora claims {claimed}, the evidence gives {distinct} distinct "
                               "accepted corpora" + (" (repeats of the same corpus were counted: five repeats are not "
                                                     "five results)" if hint else ""))


@pytest.mark.parametrize("claimed", [None, 2])
def test_a_claimed_count_that_agrees_or_is_not_claimed(claimed: int | None) -> None:
    rows = [(0, grid_row("b1", "warm", 1, accepted_unique_corpora=claimed), 7)]
    assert corpora.claimed_count_findings(rows, 2, GRID) == []
