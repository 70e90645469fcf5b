"""Edges of the decision record (issue 51): every part of decision.json is a frozen value (what was decided is what is
rendered and verified), and its JSON mapping reads back exactly what it wrote."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
from pathlib import Path

import pytest

from generator.audit.check import check_campaign
from generator.audit.load.inputs.protocol import Expense, ExperimentSpec, Protocol, Resume
from generator.audit.load.inputs.rows import GridRow
from generator.audit.load.inputs.work import FurtherCorpus, Subgroup
from generator.audit.recompute.decision import answer, model, runcells, tally
from generator.audit.recompute.decision.decisionfile import read_decision
from generator.audit.recompute.evidence import resumes
from generator.audit.recompute.money.spend import SharedRental
from generator.audit.recompute.quality.acceptance import Acceptance
from generator.core.jsonrecord import from_json_value

ROOT = Path(__file__).resolve().parents[1]

RECORDS = sorted({cls for module in (answer, runcells, model) for _, cls in inspect.getmembers(module, inspect.isclass)
                  if dataclasses.is_dataclass(cls) and cls.__module__ == module.__name__},
                 key=lambda c: f"{c.__module__}.{c.__qualname__}")


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: c.__qualname__)
def test_every_part_of_the_decision_is_frozen(cls: type) -> None:
    record: object = object.__new__(cls)
    first = dataclasses.fields(cls)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(record, first, None)


def _row(phase: str, run: int | None, notes: str = "", elapsed: float | None = 10.0, **cells: object) -> GridRow:
    return GridRow.of({"experiment_id": "e", "variant_id": "v", "phase": phase, "run_index": run, "notes": notes,
                       "elapsed_seconds": elapsed, "corpus_revision": "c@1", **cells})  # type: ignore[dict-item]


def _exp() -> ExperimentSpec:
    exp = json.loads((ROOT / "inputs" / "example" / "protocol.json").read_text(encoding="utf-8"))["experiments"][0]
    return ExperimentSpec.of(exp)


def test_a_configuration_tallied_in_phase_and_run_order() -> None:
    rows = [_row("warm", 2, "outcome=oom; completed=3", None), _row("warm", 1), _row("cold", 2, elapsed=7.0),
            _row("cold", 1, "outcome=failed; completed=0", None), _row("warm", 3, "outcome=excluded; cause=p"),
            _row("warm", 4, "outcome=aborted", None)]
    items = [(i, r, 10 + i) for i, r in enumerate(rows)]
    accepted = {1: Acceptance(10, 10, 10, corpus_accepted=True, corpus="content-a"),
                2: Acceptance(10, 10, 10, corpus_accepted=True),
                4: Acceptance(10, 10, 10, corpus_accepted=True)}
    t = tally.tally(items, _exp(), None, accepted)
    assert [(r.phase, r.run_index, r.line) for r in t.runs] == [("cold", 1, 13), ("cold", 2, 12), ("warm", 1, 11),
                                                                  ("warm", 2, 10), ("warm", 3, 14), ("warm", 4, 15)]
    assert (t.failures, t.oom, t.failed, t.completed) == ({"cold": 1, "warm": 2}, 1, ["failed", "oom", "aborted"], 2)
    assert t.durations == {"cold": [7.0], "warm": [10.0]}
    assert (t.accepted_runs, t.accepted_corpora) == (2, {"content-a", "c@1"})  # the excluded run is not accepted
    assert [(through, failed) for through, failed, _ in t.subgroups] == [(True, False), (True, False), (False, False)]
    assert [r.notes for r in t.runs][3] == "outcome=oom; completed=3" and t.runs[0].recomputed is None


def test_a_resume_variant_tallies_its_resumption_as_the_completed_run() -> None:
    # the rows of the resume variant (r) and of the variant whose attempt it resumes (z), in phase and run order
    plan = resumes.ResumePlan("r", Resume("z", "x"), {("z", "warm", 1)}, {1: 30.0})
    rows = [(2, _row("warm", 3, "outcome=oom", None, variant_id="r"), 4),
            (1, _row("warm", 2, "outcome=resumed; resumed=z/warm/1", variant_id="r"), 3),
            (0, _row("warm", 1, "outcome=failed; completed=2", None, variant_id="z"), 2)]
    t = tally.tally(rows, _exp(), plan, {1: Acceptance(1, 1, 1, corpus_accepted=True)})
    assert [(r.line, r.run_index) for r in t.runs] == [(2, 1), (3, 2), (4, 3)]
    assert (t.failures["warm"], t.oom, t.failed, t.completed, t.durations["warm"]) == (2, 1, ["oom"], 1, [40.0])
    assert (t.accepted_runs, t.runs[1].resumed) == (1, "z/warm/1")


def test_a_row_without_its_run_index_is_recorded_as_run_0() -> None:
    t = tally.tally([(0, _row("warm", None), 2)], _exp(), None, {})
    assert [r.run_index for r in t.runs] == [0]


ENTRY = {"configuration": "e/v", "committed_budget_usd_minor": 100, "warm_median_seconds": 1.5}


@pytest.mark.parametrize(("hint", "value", "read"), [
    (tuple[str, str], ["a", "b"], ("a", "b")),
    (tuple[int, ...], [1, 2, 3], (1, 2, 3)),
    (tuple[int, ...], [], ()),
    (list[int], [1], [1]),
    (dict[str, int], {"a": 1}, {"a": 1}),
    (int | None, None, None),
    (answer.RankEntry | None, ENTRY, answer.RankEntry("e/v", 100, 1.5)),
    (str | answer.RankEntry, ENTRY, answer.RankEntry("e/v", 100, 1.5)),  # the record the object fits
    (answer.RankEntry | list[int], [1], [1]),
    (str | tuple[int, ...], [1], (1,)),  # the collection the array fits
    (str | list[int], "x", "x"),  # a scalar stays as the JSON has it
    (dict[str, int] | str, {"a": 1}, {"a": 1}),
])
def test_a_json_value_is_read_under_its_hint(hint: object, value: object, read: object) -> None:
    got = from_json_value(hint, value)
    assert got == read and type(got) is type(read)


@pytest.mark.parametrize(("hint", "value"), [
    (tuple[str, str], ["a", "b", "c"]),  # one value too many for a pair
    (tuple[str, str], ["a"]),
    (answer.RankEntry | None, 5),  # a number where the only member is a record
    (list[int], {"a": 1}),
    (dict[str, int], [1]),
])
def test_a_json_value_of_the_wrong_kind_is_refused(hint: object, value: object) -> None:
    with pytest.raises(ValueError):
        from_json_value(hint, value)


def test_a_record_reads_back_its_defaults_and_refuses_a_missing_field() -> None:
    assert model.RegistrationStatus.from_json_dict({"status": "declared"}) == model.RegistrationStatus("declared")
    with pytest.raises(ValueError, match="warm_median_seconds is missing"):
        answer.RankEntry.from_json_dict({"configuration": "e/v", "committed_budget_usd_minor": 1})
    with pytest.raises(ValueError, match="has no field for extra"):
        answer.RankEntry.from_json_dict({**ENTRY, "extra": 1})
    sep = model.Separation(decides=False, gap=None, spread=None, reason="r")
    assert sep.to_json_dict() == {"decides": False, "reason": "r"}  # OMIT_IF_NONE: left out, never null
    assert model.Separation.from_json_dict({"decides": False, "reason": "r"}) == sep
    assert answer.RankEntry("e/v", None, None).to_json_dict() == {"configuration": "e/v",
                                                                  "committed_budget_usd_minor": None,
                                                                  "warm_median_seconds": None}


@pytest.fixture(scope="module")
def decision() -> dict[str, object]:
    return check_campaign(ROOT / "inputs" / "example").decision


@pytest.mark.parametrize(("campaign", "language"), [
    ({"language": "fr"}, "fr"),  # written: kept
    ({"language": None}, "en"),  # absent (a decision from before the key): English
    (None, None),  # no campaign summary (a protocol that could not be read): nothing to default
])
def test_the_note_language_read_back(decision: dict[str, object], campaign: dict[str, object] | None,
                                     language: str | None) -> None:
    data = copy.deepcopy(decision)
    summary = data["campaign"]
    assert isinstance(summary, dict)
    if campaign is None:
        data["campaign"] = None
    elif campaign["language"] is None:
        del summary["language"]
    else:
        summary.update(campaign)
    read = read_decision(data)
    assert (read.campaign.language if read.campaign else None) == language


def _protocol(**changes: object) -> Protocol:
    data = json.loads((ROOT / "inputs" / "example" / "protocol.json").read_text(encoding="utf-8"))
    return dataclasses.replace(Protocol.of(data), **changes)  # type: ignore[arg-type]


def test_the_campaign_summary_states_what_the_protocol_leaves_out() -> None:
    bare = model.CampaignSummary.of(_protocol(notes=None, language=None, other_expenses=(), corpora=(), rentals=()))
    assert (bare.notes, bare.language, bare.other_expenses, bare.corpora, bare.rentals) == ("", "en", None, None, None)
    spent = (Expense("storage", 100, "the corpus"),)
    further = (FurtherCorpus("second", "r@1", 10, "ids.csv", "ref.csv"),)
    full = model.CampaignSummary.of(_protocol(notes="n", language="fr", other_expenses=spent, corpora=further))
    assert (full.notes, full.language, full.other_expenses, full.corpora) == ("n", "fr", spent, further)


def test_each_shared_rental_lists_the_experiments_run_in_it_by_its_exact_id() -> None:
    protocol = _protocol()
    a, b = (dataclasses.replace(protocol.experiments[0].rental, id=i) for i in ("lot-a", "LOT-A"))
    unnamed = dataclasses.replace(a, id=None)
    experiments = (dataclasses.replace(protocol.experiments[0], rental=a),
                   dataclasses.replace(protocol.experiments[1], rental=b))
    summary = model.CampaignSummary.of(dataclasses.replace(protocol, experiments=experiments, rentals=(a, b, unnamed)))
    assert summary.rentals == (SharedRental("lot-a", ("rtx4090-batch",)), SharedRental("LOT-A", ("b200-batch",)))


def test_the_quality_rule_says_whether_its_reproduction_target_was_registered() -> None:
    protocol = _protocol()
    unregistered = dataclasses.replace(protocol.quality, reproduction=None, subgroups=())
    default = model.QualityRule.of(dataclasses.replace(protocol, quality=unregistered))
    assert (default.reproduction_registered, default.subgroups) == (False, None)
    group = Subgroup("short", "short.csv", "by length")
    quality = dataclasses.replace(protocol.quality, reproduction="identical", subgroups=(group,))
    registered = model.QualityRule.of(dataclasses.replace(protocol, quality=quality))
    assert (registered.reproduction, registered.reproduction_registered, registered.subgroups) == (
        "identical", True, (group,))
