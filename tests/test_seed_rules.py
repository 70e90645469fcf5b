"""Each rule of the seeds (tests/seed_rules.py), planted in a copy of the example: found, and the decision protected."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE, CliResult
from seed_rules import (
    ANY,
    CALCULATOR_RULES,
    SETUPS,
    CalculatorRule,
    SeedRule,
    Where,
)
from seed_rules import (
    SEED_RULES as FIRST_RULES,
)
from seed_rules_corpora import RULES as CORPORA_RULES
from seed_rules_evidence import RULES as EVIDENCE_RULES
from seed_rules_grid import RULES as GRID_RULES
from seed_rules_incidents import RULES as INCIDENT_RULES
from seed_rules_measured import RULES as MEASURED_RULES
from seed_rules_messages import RULES as MESSAGE_RULES
from seed_rules_metrics import RULES as METRIC_RULES
from seed_rules_origin import RULES as ORIGIN_RULES
from seed_rules_outcomes import RULES as OUTCOME_RULES
from seed_rules_prices import RULES as PRICE_RULES
from seed_rules_protocol import RULES as PROTOCOL_RULES
from seed_rules_rentals import RULES as RENTAL_RULES
from seed_rules_runs import RULES as RUN_RULES
from seed_rules_runs34 import RULES as RUNS34_RULES
from seed_rules_seal import RULES as SEAL_RULES
from seed_rules_stamps import RULES as STAMP_RULES
from seed_rules_subgroups import RULES as SUBGROUP_RULES
from seed_rules_work import RULES as WORK_RULES

from generator.audit.check import CheckResult, check_campaign
from generator.audit.load.findings import Finding

# tests/seed_rules.py, then issues 31's, 33's and 34's rules, one module per topic (they import its helpers);
# seed_rules_runs34: issue 34's input order, set-up time and resumes; seed_rules_evidence: issue 47's;
# seed_rules_measured: issue 47 item 1's (measured evidence is required for an answer); seed_rules_origin: item 4's
# reference origin; seed_rules_incidents: item 4's reproduction target by default and incidents explained;
# seed_rules_seal: issue 48's; seed_rules_stamps: issue 49 item 6's (time stamps with offsets); seed_rules_rentals:
# issue 49 item 3's shared rentals; seed_rules_grid: issue 49 item 5's (the grid by its header); seed_rules_metrics:
# issue 49 item 4's
SEED_RULES = [*FIRST_RULES, *RUN_RULES, *OUTCOME_RULES, *WORK_RULES, *MESSAGE_RULES, *PRICE_RULES, *PROTOCOL_RULES,
              *SUBGROUP_RULES, *RUNS34_RULES, *CORPORA_RULES, *EVIDENCE_RULES, *MEASURED_RULES, *ORIGIN_RULES,
              *INCIDENT_RULES, *SEAL_RULES, *STAMP_RULES, *RENTAL_RULES, *GRID_RULES, *METRIC_RULES]


def _copy(tmp_path: Path, setup: str) -> Path:
    folder = tmp_path / "campaign"
    shutil.copytree(EXAMPLE, folder)
    prepare = SETUPS[setup][0]
    if prepare is not None:
        prepare(folder)
    return folder


def _errors(result: CheckResult) -> list[tuple[str, str, Any, Any]]:
    return [(f.code, f.file, f.line, f.field) for f in result.findings if f.is_error]


def _config(decision: dict[str, Any], config_id: str) -> dict[str, Any]:
    return next(c for c in decision["configurations"] if c["id"] == config_id)


def _at(f: Finding, where: Where) -> bool:
    return f.file == where.file and (where.line is ANY or f.line == where.line) \
        and (where.field is ANY or f.field == where.field)


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_setup_is_clean_and_answers(tmp_path: Path, setup: str) -> None:
    # Each rule's defect is planted in a clean campaign whose answer is known: without the defect it checks
    # with 0 errors and answers SETUPS[setup][1], the configuration most rules then make defective.
    result = check_campaign(_copy(tmp_path, setup))
    assert _errors(result) == []
    assert result.decision["decision"]["answer"] == SETUPS[setup][1], result.decision["decision"]


@pytest.mark.parametrize("rule", [pytest.param(r, id=r.id) for r in SEED_RULES])
def test_seed_rule(tmp_path: Path, rule: SeedRule) -> None:
    folder = _copy(tmp_path, rule.setup)
    wheres = rule.mutate(folder)
    result = check_campaign(folder)
    decision = result.decision["decision"]
    summary = {"answer": decision["answer"], "status": decision["status"], "errors": _errors(result)[:12]}

    # (1) the finding: its code, severity, file, line and field
    if rule.code is None:
        assert _errors(result) == [], "a decision rule without a finding: nothing here is an error"
    else:
        mine = [f for f in result.findings if f.code == rule.code]
        assert mine, f"no {rule.code} finding; found {sorted({f.code for f in result.findings})}"
        for where in wheres:
            hits = [f for f in mine if _at(f, where)]
            assert hits, f"no {rule.code} at {where}; {rule.code} found at {[(f.file, f.line, f.field) for f in mine]}"
            assert {f.severity.value for f in hits} == {rule.severity}, [f.severity for f in hits]
            if rule.protect == "configuration":
                # the finding itself names the configuration whose evidence it concerns (attribution)
                named = {c for f in hits for c in f.configurations}
                assert named & set(rule.targets), (where, named, rule.targets)

    # (2) the decision is protected
    ranked = [e["configuration"] for e in decision["ranking"]]
    excluded = {e["configuration"]: e["reasons"] for e in decision["excluded"]}
    if rule.protect == "configuration":
        for target in rule.targets:
            config = _config(result.decision, target)
            assert config["admissible"] is False, (target, config["reasons"], summary)
            assert any(rule.reason in r for r in config["reasons"]), (target, config["reasons"])
            assert target not in ranked, (target, ranked)
            assert target in excluded, (target, sorted(excluded))
            assert decision["answer"] != target, summary
        # whatever answers instead rests on admissible evidence
        if decision["answer"] is not None:
            assert _config(result.decision, decision["answer"])["admissible"] is True, summary
    elif rule.protect == "withheld":
        assert decision["answer"] is None and decision["status"] == "withheld", summary
        # withheld because of this defect, in a shared input
        assert rule.code in {e["code"] for e in decision["shared_errors"]}, decision["shared_errors"]
        assert decision["ranking"] == [], decision["ranking"]
    elif rule.protect == "no-answer":
        assert decision["answer"] is None, summary
        for target in rule.targets:
            assert any(rule.reason in r for r in _config(result.decision, target)["reasons"]), target
    elif rule.protect == "unpriced":
        for target in rule.targets:
            assert target not in ranked, (target, ranked)
            assert decision["answer"] != target, summary
    elif rule.protect == "warning":
        # warnings never gate: the answer is the one the campaign gives without them
        assert decision["answer"] == SETUPS[rule.setup][1], summary
    else:
        assert rule.protect == "decision", rule.protect
    if rule.verify is not None:
        rule.verify(result.decision, result.findings)


def test_table_is_complete() -> None:
    # One entry per rule, each naming its seed source; every rule that protects configurations names them.
    ids = [r.id for r in SEED_RULES]
    assert len(ids) == len(set(ids))
    for rule in SEED_RULES:
        assert rule.source and rule.source[:3] in {"000", "003", "004"}, rule.id
        assert "{" not in rule.source, rule.id  # an unformatted placeholder
        assert rule.setup in SETUPS, rule.id
        if rule.protect in ("configuration", "unpriced"):
            assert rule.targets, rule.id


@pytest.mark.parametrize("rule", CALCULATOR_RULES, ids=[r.id for r in CALCULATOR_RULES])
def test_calculator_rule(run_cli: Callable[..., CliResult], rule: CalculatorRule) -> None:
    r = run_cli("cost", *rule.argv)
    assert r.code == rule.exit_code, (r.out, r.err)
    for text in rule.says:
        assert text in r.out + r.err, (r.out, r.err)
