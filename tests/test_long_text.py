"""The note shows long texts shortened and the evidence keeps them whole (issue 17, item 4): what bounds rendering.

tests/benchmarks/bench_long_notes.py measures what the caps are for: the build of a campaign with long notes, and
the render of a decision.json with a 100,000-character word, against the same inputs with short texts.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE, GRID, REPO, read_grid, write_grid

from generator.render.view import filters, gridnotes, view

NOTE_LENGTH = 9000
EXTRA_ROWS = 100
WORDS = ("the", "run", "was", "slow", "because", "the", "driver", "reloaded", "and", "the", "fan", "spun", "up",
         "again", "while", "a", "batch", "waited")


def _cli(*argv: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run gpu-audit in a child process, so that a runaway layout is stopped (the timeout guards against a hang;
    how long a build takes is tests/benchmarks/bench_long_notes.py's to measure)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "generator", *argv]
    # Its own process group, so that a timeout also ends the chart worker it starts (which holds the pipes).
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
                          start_new_session=True) as child:
        try:
            out, err = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            pytest.fail(f"gpu-audit {argv[0]} still running after {timeout:.0f} s")
    return subprocess.CompletedProcess(command, child.returncode, out, err)


def _long_notes_campaign(target: Path, note_length: int = NOTE_LENGTH) -> list[tuple[int, str]]:
    """inputs/example plus EXTRA_ROWS well-formed warm attempts (copies of warm run 1, each with its own
    prediction file) whose notes are `note_length` characters of words; returns each new row's line and note."""
    shutil.copytree(EXAMPLE, target)
    rows = read_grid(target)
    head = rows[0]
    col = {name: i for i, name in enumerate(head)}
    firsts = [r for r in rows[1:] if r[col["phase"]] == "warm" and r[col["run_index"]] == "1"]
    rng = random.Random(17)
    added: list[tuple[int, str]] = []
    for n in range(EXTRA_ROWS):
        row = list(firsts[n % len(firsts)])
        index = str(6 + n // len(firsts))
        row[col["run_index"]] = index
        note = f"row {n}: " + " ".join(rng.choice(WORDS) for _ in range(note_length))
        row[col["notes"]] = note[:note_length]
        folder = target / "predictions" / row[col["experiment_id"]] / row[col["variant_id"]]
        shutil.copyfile(folder / "warm-1.csv", folder / f"warm-{index}.csv")
        rows.append(row)
        added.append((len(rows), row[col["notes"]]))  # the header is line 1, so row k is line k
    write_grid(target, rows)
    return added


def test_long_grid_notes_are_shortened_in_the_note_and_kept_whole_in_the_evidence(tmp_path: Path) -> None:
    # How long such a build takes against the same campaign with short notes is measured by
    # tests/benchmarks/bench_long_notes.py: a test proves what the note shows, not how fast.
    added = _long_notes_campaign(tmp_path / "long")
    done = _cli("build", str(tmp_path / "long"), "-o", str(tmp_path / "b-long-1"), "--unsigned", "--quiet",
                   timeout=300)
    assert done.returncode == 1, done.stderr  # the extra attempts are unregistered: findings, still built

    bundle = tmp_path / "b-long-1" / "data"
    html = (bundle / "decision-note.html").read_text(encoding="utf-8")
    line, note = added[0]
    marker = (f"[shortened: {NOTE_LENGTH:,} characters; the whole note is in the grid, line {line}, "
              "and in decision.json]")
    assert marker in html
    assert note[:gridnotes.PART_CHARS] in html and note not in html
    assert "more rows (parts of the notes of" in html
    # The whole text stays in the evidence: the bundle's copy of the grid and decision.json.
    assert note in (bundle / "inputs" / GRID).read_text(encoding="utf-8")
    decision = json.loads((bundle / "decision.json").read_text(encoding="utf-8"))
    assert note in {r["notes"] for c in decision["configurations"] for r in c["runs"]}


@pytest.fixture(scope="module")
def example_decision(example_decision: Path) -> dict[str, Any]:
    """conftest's decision.json of inputs/example, as data."""
    return json.loads(example_decision.read_text(encoding="utf-8"))


def _decision(tmp_path: Path, example: dict[str, Any], name: str, change: Any = None) -> Path:
    decision = json.loads(json.dumps(example))
    if change is not None:
        change(decision)
    path = tmp_path / name
    path.write_text(json.dumps(decision), encoding="utf-8")
    return path


def test_a_100000_character_string_in_decision_json_is_shortened_where_the_note_shows_it(tmp_path: Path,
                                                                    example_decision: dict[str, Any]) -> None:
    word = "x" * 100_000  # one unbroken run: the worst case of line breaking

    def lengthen(decision: dict[str, Any]) -> None:
        decision["campaign"]["notes"] = word
        decision["campaign"]["question"] = word
        decision["campaign"]["corpus"]["name"] = word  # these two are placed into translated sentences
        decision["experiments"][0]["warmup"]["inputs"] = word

    long = _decision(tmp_path, example_decision, "long.json", lengthen)
    done = _cli("render", str(long), "-o", str(tmp_path / "r-long"), timeout=300)
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "r-long" / "decision-note.html").read_text(encoding="utf-8")
    assert html.count("[shortened: 100,000 characters; the whole text is in decision.json]") == 4
    assert word not in html and "x" * filters.TEXT_CHARS in html


def test_a_cut_never_splits_a_tag_and_counts_the_whole_text() -> None:
    text = "a" * (filters.TEXT_CHARS - 3) + "\u202e" + "b" * 10
    cut, length = filters.shorten(text, filters.TEXT_CHARS)
    assert cut == "a" * (filters.TEXT_CHARS - 3) and length == len(text)
    assert filters.shorten("short", 10) == ("short", None)
    assert str(filters.shown("y" * 5000)).endswith("[shortened: 5,000 characters; the whole text is in decision.json]")


def _many_notes_decision(example: dict[str, Any], notes: int, failed_rows: int) -> dict[str, Any]:
    """The example's decision with `notes` distinct notes and `failed_rows` failed attempts that differ."""
    decision = json.loads(json.dumps(example))
    runs = decision["configurations"][0]["runs"]
    template = runs[0]
    for n in range(max(notes, failed_rows)):
        run = json.loads(json.dumps(template))
        run.update(line=1000 + n, run_index=100 + n, notes=f"note {n}" if n < notes else template["notes"])
        if n < failed_rows:
            run.update(outcome="oom", completed_items=n, elapsed_seconds=None)
        runs.append(run)
    return decision


def test_lists_past_their_caps_are_summarised(example_decision: dict[str, Any]) -> None:
    decision = _many_notes_decision(example_decision, gridnotes.PARTS_LISTED + 7, view.ROWS_LISTED + 5)
    shown = view.build_view(view.ReadDecision.of(decision))
    assert len(shown.notes.rows) == gridnotes.PARTS_LISTED
    assert shown.notes.rows_left_out >= 7 and shown.notes.attempts_left_out >= 7
    assert len(shown.acceptance_rows) == view.ROWS_LISTED
    left = shown.acceptance_left_out
    assert left is not None and left.rows >= 5 and left.failed >= 5 and left.attempts >= left.rows
    assert len(shown.memory_rows) <= view.ROWS_LISTED

