"""The registry of codes: only registered codes are built, docs/findings.md is its print, the seeds' codes are in it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from test_seed_rules import SEED_RULES

from generator.audit.load.findings import Severity, make_finding
from generator.bundle.verdict import Problem
from generator.core.codes.registry import FINDINGS, INVOICE_FINDINGS, PROBLEMS, UnregisteredCode, markdown
from generator.invoice.money import InvoiceFinding

REPO = Path(__file__).resolve().parent.parent


def test_an_unregistered_code_is_refused_by_every_builder() -> None:
    with pytest.raises(UnregisteredCode, match="no-such-code"):
        make_finding("no-such-code", Severity.ERROR, "protocol.json", "planted")
    with pytest.raises(UnregisteredCode, match="no-such-code"):
        Problem("no-such-code", "MANIFEST.json", "planted")
    with pytest.raises(UnregisteredCode, match="no-such-code"):
        InvoiceFinding("no-such-code", None, "TypeCode", None, None, "planted")
    # a code of one table is not one of another's
    with pytest.raises(UnregisteredCode):
        Problem("fixed-value-mismatch", "MANIFEST.json", "planted")


def test_registered_codes_are_accepted() -> None:
    assert make_finding("fixed-value-mismatch", Severity.ERROR, "grid.csv", "m").code == "fixed-value-mismatch"
    assert Problem("unsafe-zip", "bundle.zip", "m").code == "unsafe-zip"
    assert InvoiceFinding("currency", None, "InvoiceCurrencyCode", "EUR", "USD", "m").code == "currency"


def test_docs_findings_is_what_the_registry_prints() -> None:
    assert (REPO / "docs" / "findings.md").read_text(encoding="utf-8") == markdown(), (
        "regenerate it: python -m generator.core.codes.registry > docs/findings.md")


def test_every_seed_rule_code_is_registered_with_its_seed() -> None:
    for rule in SEED_RULES:
        if rule.code is None:
            continue
        assert rule.code in FINDINGS, f"seed rule {rule.id}: {rule.code} is not registered"
        seed = FINDINGS[rule.code].seed or ""
        for part in rule.source.split("; "):
            assert part in seed, f"seed rule {rule.id}: {part!r} is not among {rule.code}'s seeds"


def _literal_codes(folder: str, builders: set[str]) -> set[str]:
    """The literal first arguments of calls to `builders` under generator/`folder`."""
    found = set()
    for path in (REPO / "generator" / folder).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
                if name in builders and isinstance(node.args[0].value, str):
                    found.add(node.args[0].value)
    return found


def test_every_literal_code_in_the_source_is_registered() -> None:
    """Codes written out at a call are checked here before any run reaches them (a rare branch would raise)."""
    assert _literal_codes("audit", {"make_finding", "problem", "bad"}) - set(FINDINGS) == set()
    assert _literal_codes("bundle", {"Problem", "problem"}) - set(PROBLEMS) == set()
    assert _literal_codes("invoice", {"InvoiceFinding", "_finding"}) - set(INVOICE_FINDINGS) == set()


# The audit side's kebab-case words that are not codes: schema names, encodings, a decision status, the
# registration's statuses.
NOT_CODES = {"expected-ids-row", "labels-row", "raw-results-row", "tariffs-row", "x-csv-columns",
             "x-csv-optional-columns", "gpu-audit", "utf-8", "no-admissible", "lab-manifest",
             "sealed-time-stamped", "sealed-time-not-proven", "seal-broken"}


def test_every_code_like_word_of_the_audit_is_registered() -> None:
    """A code passed through a helper or a table of codes (not a literal argument) is a word of the source too."""
    words = set()
    for path in (REPO / "generator" / "audit").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", node.value):
                words.add(node.value)
    assert words - NOT_CODES - set(FINDINGS) == set()
