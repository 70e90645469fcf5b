"""Issue 51 item 2, the gate: which configurations an error excludes, which are priced, the answer among those tied
on budget, and the reasons it gives, each on a few configurations made from the example's (no campaign run)."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import pytest
from conftest import EXAMPLE

from generator.audit.check import check_campaign
from generator.audit.load.findings import Finding, FindingRef, Severity, make_finding
from generator.audit.recompute.decision import gate
from generator.audit.recompute.decision.model import Configuration, Timing
from generator.audit.recompute.times import timing


@cache
def template() -> Configuration:
    """The example's rtx4090-batch/b1 (admissible, priced, measured), its evidence left for the gate to attach."""
    c = next(c for c in check_campaign(EXAMPLE).document.configurations if c.id == "rtx4090-batch/b1")
    return replace(c, evidence=None, reasons=(), admissible=True, runs=())


def config(cid: str, budget: int | None = 100, warm: tuple[float, ...] = (10.0, 10.1, 10.2),
           status: str | None = "published", admissible: bool = True, reasons: tuple[str, ...] = (),
           dated: bool = True) -> Configuration:
    c = template()
    measurement = c.measurement
    assert measurement is not None
    if not dated:
        measurement = replace(measurement, phases=[{k: v for k, v in p.items() if k != "ended_at"}
                                                   for p in measurement.phases])
    return replace(c, id=cid, committed_budget_usd_minor=budget, price_status=status, admissible=admissible,
                   reasons=reasons, measurement=measurement,
                   timing=Timing(warm=timing.phase_stats(list(warm), 0), cold=c.timing.cold))


def finding(cid: str | None, severity: Severity = Severity.ERROR, shared: str | None = None,
            line: int = 2) -> Finding:
    f = make_finding("missing-attempt", severity, "resultats-bruts.csv", "m", line=line, field="run_index")
    return replace(f, configurations=(cid,) if cid else (), shared_input=shared)


# ------------------------------------------------------------------------------------------- the evidence


@pytest.mark.parametrize("n,text", [
    (5, "evidence has 5 error finding(s): " + ", ".join(f"missing-attempt at resultats-bruts.csv:{i} (run_index)"
                                                       for i in range(2, 7))),
    (6, "evidence has 6 error finding(s): " + ", ".join(f"missing-attempt at resultats-bruts.csv:{i} (run_index)"
                                                       for i in range(2, 7)) + " and 1 more"),
])
def test_a_reason_names_five_findings_then_counts_the_rest(n: int, text: str) -> None:
    refs = [FindingRef.of(finding("a", line=i)) for i in range(2, 2 + n)]
    assert gate.evidence_reason(refs) == text


def test_an_error_gates_only_its_configuration_and_a_warning_none() -> None:
    a, b = gate.with_evidence([config("e/a"), config("e/b")],
                              [finding("e/a"), finding("e/a", Severity.WARNING), finding("e/b", Severity.WARNING)])
    assert (a.admissible, b.admissible) == (False, True)
    assert a.reasons == ("evidence has 1 error finding(s): missing-attempt at resultats-bruts.csv:2 (run_index)",)
    assert b.reasons == ()
    assert a.evidence is not None and b.evidence is not None
    assert (len(a.evidence.errors), len(a.evidence.warnings), len(b.evidence.errors), len(b.evidence.warnings)) == (
        1, 1, 0, 1)


# ------------------------------------------------------------------------------------------- the answer


def test_the_least_budget_published_is_the_answer() -> None:
    _, d = gate.decide([config("e/a", 200), config("e/b", 100, status="illustrative"), config("e/c", None, status=None),
                        config("e/d", 150)], [])
    assert (d.answer, d.status, d.reason) == ("e/d", "answered", "lowest committed budget among admissible "
                                                                 "configurations")
    assert [r.configuration for r in d.ranking] == ["e/d", "e/a"]
    assert [(u.configuration, u.reason) for u in d.unpriced] == [
        ("e/b", "the price of rtx-4090 (7 days) is illustrative, not published"),
        ("e/c", "no published price for rtx-4090 (7 days): the committed budget is undefined")]
    assert d.series_decides is True and d.uncertainty == () and d.ties == () and d.exclusions is None


def test_configurations_tied_on_budget_are_ordered_by_median_warm_time() -> None:
    a = config("e/a", 100, (9.9, 10.0, 10.1))
    b = config("e/b", 100, (19.9, 20.0, 20.1))   # apart from a
    c = config("e/c", 100, (10.0, 10.05, 10.1))  # its range overlaps a's
    d = config("e/d", 90, (50.0, 50.1, 50.2), status="illustrative")
    e = config("e/e", 200, (1.0, 1.1, 1.2))
    _, dec = gate.decide([b, e, c, a, d], [])
    assert dec.answer == "e/a"
    assert [r.configuration for r in dec.ranking] == ["e/a", "e/c", "e/b", "e/e"]
    assert [(t.configurations, t.timing_decides) for t in dec.ties] == [(("e/a", "e/c"), False),
                                                                       (("e/a", "e/b"), True)]
    assert dec.reason == ("lowest committed budget among admissible configurations; tied on budget with e/c, e/b, "
                          "ordered by median warm time; the timing series separates it from e/b; the timing series "
                          "does not separate it from e/c")
    assert dec.series_decides is False
    assert dec.uncertainty == ("e/a and e/c commit the same budget and the timing series does not separate them "
                               "(the min-max ranges overlap)",)


def test_a_configuration_without_a_warm_median_is_ranked_after_those_with_one() -> None:
    _, d = gate.decide([config("e/a", 100, ()), config("e/b", 100, (20.0, 20.1, 20.2))], [])
    assert [r.configuration for r in d.ranking] == ["e/b", "e/a"]


def test_without_a_published_price_the_order_by_time_is_shown_not_the_answer() -> None:
    a = config("e/a", None, (30.0, 30.1, 30.2), status=None)
    b = config("e/b", 100, (10.0, 10.1, 10.2), status="illustrative")
    c = config("e/c", 100, (10.1, 10.2, 10.3), status="illustrative")  # overlaps b
    x = config("e/x", admissible=False, reasons=("not accepted: no completed run",))
    _, d = gate.decide([a, b, c, x], [])
    assert (d.answer, d.status) == (None, "unanswerable")
    assert d.reason == ("cannot be answered: no published price for rtx-4090; the question asks for the least "
                        "committed budget")
    assert [r.configuration for r in d.time_ordering] == ["e/b", "e/c", "e/a"]
    assert [(t.configurations, t.timing_decides) for t in d.ties] == [(("e/b", "e/c"), False), (("e/c", "e/a"), True)]
    assert d.series_decides is False
    assert [e.configuration for e in d.excluded] == ["e/x"]
    _, apart = gate.decide([a, b], [])
    assert apart.series_decides is True


def test_no_admissible_configuration_gives_every_reason_once() -> None:
    _, d = gate.decide([config("e/a", admissible=False, reasons=("r2", "r1")),
                        config("e/b", admissible=False, reasons=("r1",))], [])
    assert (d.answer, d.status, d.reason) == (None, "no-admissible", "no admissible configuration: r1; r2")
    assert [e.configuration for e in d.excluded] == ["e/a", "e/b"]


# ------------------------------------------------------------------------------------------- no answer


def test_a_shared_input_error_withholds_the_answer_and_a_shared_warning_does_not() -> None:
    configs = [config("e/a"), config("e/b")]
    _, d = gate.decide(configs, [finding(None, shared="grid"), finding(None, shared="protocol.json", line=3)])
    assert (d.answer, d.status) == (None, "withheld")
    assert d.reason == ("no answer: 2 error finding(s) in shared inputs (grid, protocol.json): missing-attempt at "
                        "resultats-bruts.csv:2 (run_index), missing-attempt at resultats-bruts.csv:3 (run_index)")
    assert len(d.shared_errors) == 2
    _, w = gate.decide(configs, [finding(None, Severity.WARNING, shared="grid")])
    assert w.status == "answered"
    # an error of one configuration, named by no shared input, gates that configuration only
    _, e = gate.decide(configs, [finding("e/a")])
    assert (e.status, e.answer) == ("answered", "e/b")


def test_an_unreadable_campaign_says_nothing_could_be_recomputed() -> None:
    assert gate.withhold([], [finding(None, shared="grid")], unreadable=True).reason.endswith(
        "(run_index); nothing could be recomputed")
    assert gate.withhold([], [], unreadable=True).reason == (
        "no answer: the protocol, the expected IDs, the reference or the raw results could not be read")
    assert gate.withhold([], [replace(finding(None), shared_input=None)], unreadable=False).reason.startswith(
        "no answer: 1 error finding(s) in shared inputs (campaign): ")


@pytest.mark.parametrize("measured", [(True, True), (True, False)])
def test_one_measured_configuration_is_enough_to_answer(measured: tuple[bool, bool]) -> None:
    configs = [config("e/a", 100, dated=measured[0]), config("e/b", 200, dated=measured[1])]
    _, d = gate.decide(configs, [])
    assert (d.status, d.answer) == ("answered", "e/a")


def test_without_any_measured_configuration_the_answer_is_withheld() -> None:
    _, d = gate.decide([config("e/a", dated=False), replace(config("e/b"), measurement=None)], [])
    assert (d.status, d.reason) == ("withheld", gate.UNMEASURED_REASON)
    assert gate.measured(config("e/a")) is True
    assert gate.measured(config("e/a", dated=False)) is False
    # a file dating some of its phases dates its runs (the undated ones are run-times-partial, an error of its own)
    partly = config("e/a")
    assert partly.measurement is not None
    phases = [{k: v for k, v in p.items() if k != "started_at"} if i == 0 else p
              for i, p in enumerate(partly.measurement.phases)]
    assert gate.measured(replace(partly, measurement=replace(partly.measurement, phases=phases))) is True
