"""The CLI's surface: every command has help, and the README's CLI reference matches `--help`."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

import pytest
from conftest import REPO

from generator.cli.main import build_parser


def _walk(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[prefix + name] = sub
                found.update(_walk(sub, prefix + name + " "))
    return found


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    """Every command and nested subcommand, by its full name ("measure run")."""
    return _walk(build_parser())


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
def test_readme_shows_the_usage_line(name: str) -> None:
    usage = " ".join(_subcommands()[name].format_usage().split())
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert usage in readme, f"README lacks: {usage}"


def test_python_dash_m_runs_the_cli() -> None:
    proc = subprocess.run([sys.executable, "-m", "generator", "--version"], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0
    assert re.fullmatch(r"gpu-audit \d+\.\d+\.\d+\n", proc.stdout)


def test_unknown_command_is_a_usage_error(run_cli) -> None:
    r = run_cli("frobnicate")
    assert r.code == 2
    assert "invalid choice: 'frobnicate'" in r.err
