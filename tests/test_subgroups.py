"""Planned subgroups: the column-wise and the straightforward recomputation agree, edges of the rule hold, and a
subgroup's IDs in another order or written by a spreadsheet are the same subgroup."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.audit.check import check_campaign


def _subgroups(decision: dict[str, Any]) -> list[object]:
    return [(c["id"], c["subgroups"], [r["recomputed"]["subgroups"] for r in c["runs"]])
            for c in decision["configurations"]]


def _protocol(folder: Path, change: Any) -> None:
    path = folder / "protocol.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc), encoding="utf-8")


def test_column_wise_and_straightforward_agree(campaign: Path) -> None:
    # A partial file (the out-of-memory run) and one with a long text relabelled: both paths give the same
    # subgroup verdicts, unfinished counts included.
    rel = campaign / "predictions" / "rtx4090-batch" / "b4" / "warm-2.csv"
    long_id = (campaign / "subgroups" / "long.csv").read_text(encoding="utf-8").split()[1]
    lines = rel.read_text(encoding="utf-8").splitlines()
    lines = [f"{long_id},games" if t.startswith(f"{long_id},") else t for t in lines]
    rel.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fast = check_campaign(campaign).decision
    slow = check_campaign(campaign, fast=False).decision
    assert _subgroups(fast) == _subgroups(slow)


@pytest.mark.parametrize(("above", "accepted"), [(0.0, True), (1e-9, False)])
def test_a_value_exactly_on_the_threshold_is_accepted(campaign: Path, above: float, accepted: bool) -> None:
    # The long subgroup's threshold set to rtx4090-batch/b1's worst run there, exactly: it holds; a billionth
    # above, it does not.
    def long_of(decision: dict[str, Any]) -> dict[str, Any]:
        config = next(c for c in decision["configurations"] if c["id"] == "rtx4090-batch/b1")
        return next(g for g in config["subgroups"] if g["id"] == "long")

    worst = long_of(check_campaign(campaign).decision)["worst_value"]
    _protocol(campaign, lambda p: p["quality"]["subgroups"][2].update(threshold=worst + above, tolerance=0.1))
    long = long_of(check_campaign(campaign).decision)
    assert (long["accepted_runs"] == long["completed_runs"]) is accepted, long


def test_ids_in_another_order_with_crlf_and_a_bom_are_the_same_subgroup(campaign: Path) -> None:
    # A spreadsheet saves the long subgroup sorted the other way, with CRLF line ends and a byte-order mark.
    before = _subgroups(check_campaign(campaign).decision)
    path = campaign / "subgroups" / "long.csv"
    ids = path.read_text(encoding="utf-8").split()[1:]
    path.write_bytes(("\ufeffid\r\n" + "\r\n".join(sorted(ids, reverse=True)) + "\r\n").encode("utf-8"))
    result = check_campaign(campaign)
    assert [f.code for f in result.errors] == []
    assert _subgroups(result.decision) == before


def test_a_campaign_without_subgroups_records_none(campaign: Path) -> None:
    _protocol(campaign, lambda p: p["quality"].pop("subgroups"))
    decision = check_campaign(campaign).decision
    assert "subgroups" not in decision["rule"]
    assert all("subgroups" not in c for c in decision["configurations"])
    assert all("subgroups" not in r["recomputed"] for c in decision["configurations"] for r in c["runs"])


def test_the_subgroup_files_are_evidence(campaign: Path) -> None:
    inputs = {i["path"] for i in check_campaign(campaign).decision["inputs"]}
    assert {"subgroups/short.csv", "subgroups/medium.csv", "subgroups/long.csv"} <= inputs
