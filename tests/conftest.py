"""Shared fixtures: a private copy of the synthetic example campaign, and CLI helpers."""

from __future__ import annotations

import csv
import io
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from generator.cli.main import main

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "inputs" / "example"
GRID = "resultats-bruts.csv"
# `python -m bagit`: the bagit.py that the test extra installs, whether or not the venv is activated (PATH)
BAGIT = [sys.executable, "-m", "bagit"]


def needs_tools(*names: str) -> pytest.MarkDecorator:
    """Skip a test whose Debian tools are not installed, except in CI (CI=true), which installs every one the
    README's set-up names: there a missing tool fails the test instead of hiding it."""
    missing = [name for name in names if shutil.which(name) is None]
    skip = bool(missing) and os.environ.get("CI") != "true"
    return pytest.mark.skipif(skip, reason=f"{', '.join(missing)} not installed")


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """Run the CLI in-process and capture its exit status and output."""

    def _run(*argv: str) -> CliResult:
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return _run


@pytest.fixture
def campaign(tmp_path: Path) -> Path:
    """A writable copy of inputs/example."""
    target = tmp_path / "campaign"
    shutil.copytree(EXAMPLE, target)
    return target


def read_grid(folder: Path) -> list[list[str]]:
    with (folder / GRID).open(encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


def write_grid(folder: Path, rows: list[list[str]]) -> None:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    (folder / GRID).write_text(buf.getvalue(), encoding="utf-8")


def set_cell(folder: Path, data_row: int, column: str, value: str) -> None:
    """Set one cell of the grid; data_row 1 is the first row after the header (file line 2)."""
    rows = read_grid(folder)
    rows[data_row][rows[0].index(column)] = value
    write_grid(folder, rows)
