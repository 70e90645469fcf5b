"""Several corpora of the useful work: both recomputations agree, the note shows each corpus's runs, and the GPU
runner refuses them (tests/test_campaign_run.py)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from seed_rules_corpora import SECOND, _second_corpus

from generator.audit.check import check_campaign
from generator.render.page.note import render_html

EXAMPLE = Path(__file__).resolve().parent.parent / "inputs" / "example"


@pytest.fixture
def two_corpora(tmp_path: Path) -> Path:
    folder = tmp_path / "campaign"
    shutil.copytree(EXAMPLE, folder)
    _second_corpus(folder)
    return folder


def _recomputed(decision: dict[str, Any]) -> list[object]:
    return [(c["id"], c["accepted"], c["corpora"], [r["recomputed"] for r in c["runs"]])
            for c in decision["configurations"]]


def test_column_wise_and_straightforward_agree(two_corpora: Path) -> None:
    # One run on the second corpus mislabels a text: both paths judge it against the second corpus's reference.
    path = two_corpora / "predictions" / "rtx4090-batch" / "b1" / "warm-7.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    first_id = lines[1].split(",")[0]
    lines[1] = f"{first_id},games" if not lines[1].endswith(",games") else f"{first_id},net"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _recomputed(check_campaign(two_corpora).decision) == _recomputed(
        check_campaign(two_corpora, fast=False).decision)


def test_the_same_bytes_on_two_corpora_are_judged_apart(two_corpora: Path) -> None:
    # A second-corpus run whose file is a copy of a first-corpus run's: not the second corpus's IDs, whatever
    # another run with those bytes gave.
    src = two_corpora / "predictions" / "rtx4090-batch" / "b4" / "warm-1.csv"
    shutil.copyfile(src, two_corpora / "predictions" / "rtx4090-batch" / "b4" / "warm-7.csv")
    result = check_campaign(two_corpora)
    b4 = next(c for c in result.decision["configurations"] if c["id"] == "rtx4090-batch/b4")
    run7 = next(r for r in b4["runs"] if r["phase"] == "warm" and r["run_index"] == 7)
    assert run7["corpus"] == SECOND and run7["recomputed"]["ids_match"] is False
    assert b4["admissible"] is False


def test_the_note_shows_each_corpus(two_corpora: Path) -> None:
    html = render_html(check_campaign(two_corpora).decision)
    assert "Acceptance and timing per corpus" in html and "debian-descriptions train sample" in html
    assert "Further corpora" in html

