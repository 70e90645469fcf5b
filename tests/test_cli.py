"""The CLI's surface: every command has help, and docs/cli.md is what `--help` prints (tests/cli_doc.py makes it)."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

import cli_doc
import pytest
from conftest import REPO

from generator.cli.main import build_parser


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    """Every command and nested subcommand, by its full name ("measure run")."""
    return {name: parser for name, parser in cli_doc.commands().items() if name}


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_every_command_has_help(name: str) -> None:
    sub = _subcommands()[name]
    assert sub.description, f"{name} has no description"
    *parents, last = name.split(" ")
    parent = _subcommands()[" ".join(parents)] if parents else build_parser()
    action = next(a for a in parent._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help for c in action._choices_actions}
    assert helps.get(last), f"{name} has no one-line help"


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_docs_cli_shows_the_usage_line(name: str) -> None:
    usage = " ".join(_subcommands()[name].format_usage().split())
    doc = " ".join((REPO / "docs" / "cli.md").read_text(encoding="utf-8").split())
    assert usage in doc, f"docs/cli.md lacks: {usage}"


def test_docs_cli_is_the_help_of_every_command() -> None:
    doc = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert doc == cli_doc.render(), "docs/cli.md is stale: python tests/cli_doc.py > docs/cli.md"


def test_python_dash_m_runs_the_cli() -> None:
    proc = subprocess.run([sys.executable, "-m", "generator", "--version"], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0
    assert re.fullmatch(r"gpu-audit \d+\.\d+\.\d+\n", proc.stdout)


def test_unknown_command_is_a_usage_error(run_cli) -> None:
    r = run_cli("frobnicate")
    assert r.code == 2
    assert "invalid choice: 'frobnicate'" in r.err
