"""Issue 34 item 1's seed rules (planned subgroups), in the form of tests/seed_rules.py (test_seed_rules runs them)."""

from __future__ import annotations

import csv
import html
import io
import re
from pathlib import Path
from typing import Any

from seed_rules import (
    B1,
    B4,
    B8,
    B200,
    GRID,
    PROTOCOL,
    RTX,
    A,
    P,
    SeedRule,
    Where,
    edit_protocol,
    pred,
    set_row,
    set_rows,
)

from generator.core.metrics import compute_metric
from generator.render.page.note import render_html

_SOURCE = f"{A} 'Beispiel: dieselben 1.000 Texte klassifizieren', 'Qualität nach einem Wechsel der Präzision prüfen'"
B4_RUNS = [("cold", 1)] + [("warm", r) for r in range(1, 6)]
SPOILED = 9  # long texts of each b4 run given a wrong label: the long subgroup fails, the whole corpus still passes


def _ids(folder: Path, rel: str) -> list[str]:
    return (folder / rel).read_text(encoding="utf-8").split()[1:]


def _labels(folder: Path, rel: str) -> dict[str, str]:
    with (folder / rel).open(encoding="utf-8", newline="") as fh:
        return {r["id"]: r["label"] for r in csv.DictReader(fh)}


def _write_labels(folder: Path, rel: str, labels: dict[str, str]) -> None:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["id", "label"])
    writer.writerows(labels.items())
    (folder / rel).write_text(buf.getvalue(), encoding="utf-8")


def _spoil_long(c: Path, honest_claims: bool) -> list[int]:
    """Every rtx4090-batch/b4 run labels SPOILED more long texts wrongly (the first it had right); with
    `honest_claims` the grid then claims what the whole corpus gives (quality_value, and corpus_accepted false)."""
    reference = _labels(c, "reference.csv")
    classes = sorted(set(reference.values()))
    long_ids = _ids(c, "subgroups/long.csv")
    lines = []
    for phase, run in B4_RUNS:
        rel = pred(RTX, "b4", phase, run)
        labels = _labels(c, rel)
        right = [i for i in long_ids if labels[i] == reference[i]][:SPOILED]
        for i in right:
            labels[i] = classes[(classes.index(reference[i]) + 1) % len(classes)]
        _write_labels(c, rel, labels)
        whole = compute_metric("macro_f1", list(reference.values()), [labels[i] for i in reference])
        cells = {"quality_value": f"{whole:.6f}"}
        if honest_claims:
            cells.update(corpus_accepted="false", accepted_unique_corpora="0")
        lines.append(set_row(c, RTX, "b4", phase, run, **cells))
    return lines


def m_long_fails(c: Path) -> list[Where]:
    _spoil_long(c, honest_claims=True)
    return []


def v_long_fails(decision: dict[str, Any], findings: list[Any]) -> None:
    b4 = next(x for x in decision["configurations"] if x["id"] == B4)
    groups = {g["id"]: g for g in b4["subgroups"]}
    assert b4["accepted"] is False and b4["admissible"] is False
    assert groups["long"]["accepted_runs"] == 0 and groups["long"]["completed_runs"] == 6
    assert groups["short"]["accepted_runs"] == groups["medium"]["accepted_runs"] == 6
    # the whole corpus passes in every run: only the long subgroup fails
    assert all(r["recomputed"]["quality_ok"] for r in b4["runs"])
    assert "subgroup long fails its rule in 6 of 6 completed runs" in b4["reasons"]
    assert decision["decision"]["answer"] == B1, decision["decision"]  # the answer moves


def m_long_claimed_accepted(c: Path) -> list[Where]:
    return [Where(GRID, line, "corpus_accepted") for line in _spoil_long(c, honest_claims=False)]


def m_unfinished(c: Path) -> list[Where]:
    return []


def v_unfinished(decision: dict[str, Any], findings: list[Any]) -> None:
    # The batch-8 run that ran out of memory finished the first 408 expected IDs: per subgroup, the unfinished
    # ones are those of its IDs beyond them.
    b8 = next(x for x in decision["configurations"] if x["id"] == B8)
    oom = next(r for r in b8["runs"] if r["outcome"] == "oom")
    done = set(_EXPECTED[:408])
    for group in oom["recomputed"]["subgroups"]:
        assert group["quality_value"] is None and group["accepted"] is False
        assert group["unfinished"] == sum(1 for i in _GROUPS[group["id"]] if i not in done), group
    assert sum(g["unfinished"] for g in oom["recomputed"]["subgroups"]) == 1000 - 408
    assert {g["id"]: g["unfinished"] for g in b8["subgroups"]} == {
        g["id"]: g["unfinished"] for g in oom["recomputed"]["subgroups"]}


_EXAMPLE = Path(__file__).resolve().parent.parent / "inputs" / "example"
_EXPECTED = _ids(_EXAMPLE, "expected-ids.csv")
_GROUPS = {name: set(_ids(_EXAMPLE, f"subgroups/{name}.csv")) for name in ("short", "medium", "long")}


def m_own_rule(c: Path) -> list[Where]:
    # The long texts get a rule of their own, stricter than the RTX 4090's runs meet and the B200's do.
    edit_protocol(c, lambda p: p["quality"]["subgroups"][2].update(threshold=0.83))
    set_rows(c, RTX, None, corpus_accepted="false", accepted_unique_corpora="0")  # the grid claims as recomputed
    return []


def v_own_rule(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["rule"]["subgroups"][2] == {**decision["rule"]["subgroups"][2], "id": "long", "threshold": 0.83}
    for config in decision["configurations"]:
        long = next(g for g in config["subgroups"] if g["id"] == "long")
        assert long["threshold"] == 0.83 and long["tolerance"] == 0.03 and long["reference_value"] == 0.84
        assert config["accepted"] is config["id"].startswith(B200), config["id"]
    assert decision["decision"]["answer"] == f"{B200}/b8", decision["decision"]


def m_not_expected(c: Path) -> list[Where]:
    (c / "subgroups" / "long.csv").write_text((c / "subgroups" / "long.csv").read_text(encoding="utf-8")
                                              + "not-a-corpus-text\n", encoding="utf-8")
    return [Where(PROTOCOL, None, "/quality/subgroups/2/ids")]


def m_empty(c: Path) -> list[Where]:
    (c / "subgroups" / "medium.csv").write_text("id\n", encoding="utf-8")
    return [Where(PROTOCOL, None, "/quality/subgroups/1/ids")]


def v_empty_alone(decision: dict[str, Any], findings: list[Any]) -> None:
    # The empty subgroup is the one error: it judges no run, so no run's claims are disputed because of it.
    assert {f.code for f in findings if f.is_error} == {"subgroup-empty"}, sorted({f.code for f in findings})


def m_id_twice(c: Path) -> list[Where]:
    path = c / "subgroups" / "long.csv"
    path.write_text(path.read_text(encoding="utf-8") + _ids(c, "subgroups/long.csv")[0] + "\n", encoding="utf-8")
    return [Where(PROTOCOL, None, "/quality/subgroups/2/ids")]


def m_diluted(c: Path) -> list[Where]:
    # b4 fails its long texts; the medium texts added to the long subgroup would hide it.
    _spoil_long(c, honest_claims=False)
    path = c / "subgroups" / "long.csv"
    path.write_text(path.read_text(encoding="utf-8") + "\n".join(_ids(c, "subgroups/medium.csv")) + "\n",
                    encoding="utf-8")
    return [Where(PROTOCOL, None, "/quality/subgroups/2/ids")]


def m_repeated(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: p["quality"]["subgroups"][1].update(id="short"))
    return [Where(PROTOCOL, None, "/quality/subgroups/1/id")]


def m_outside(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: p["quality"]["subgroups"][0].update(ids="../short.csv"))
    return [Where(PROTOCOL, None, "/quality/subgroups/0/ids")]


# Issue 47 item 4: a subgroup's rule is never loosened, nor its hard examples removed, unseen.
_LATER = f"{A} 'Qualität nach einem Wechsel der Präzision prüfen' (never lower the threshold afterwards)"
_HARD = f"{A} 'Beispiel: dieselben 1.000 Texte klassifizieren' (removing hard examples improves the score)"
LOOSE = {"threshold": 0.5, "tolerance": 0.4}  # the long rule loosened until b4's spoiled long texts pass
REASON = "set before the runs: the long texts are few (100), their macro-F1 spreads widely"


def _loosen(c: Path, **extra: str) -> None:
    _spoil_long(c, honest_claims=False)  # b4 fails its long texts, the grid still claims it accepted
    edit_protocol(c, lambda p: p["quality"]["subgroups"][2].update(LOOSE, **extra))


def m_loosened(c: Path) -> list[Where]:
    _loosen(c)
    return [Where(PROTOCOL, None, "/quality/subgroups/2/threshold"),
            Where(PROTOCOL, None, "/quality/subgroups/2/tolerance")]


def _page_one(decision: dict[str, Any]) -> str:
    head = render_html(decision).split("<body>")[1].split('<div class="answer">')[0]
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", head)).split())


def v_loosened(decision: dict[str, Any], findings: list[Any]) -> None:
    # b4 answers through the loosened rule, but not unseen: the warnings say which values, page 1 shows them.
    mine = {f.field: (f.claimed, f.recomputed) for f in findings if f.code == "subgroup-rule-looser-unexplained"}
    assert mine == {"/quality/subgroups/2/threshold": (0.5, 0.8), "/quality/subgroups/2/tolerance": (0.4, 0.03)}
    text = _page_one(decision)
    assert ("long : threshold 0.5000 (corpus rule: 0.8000), tolerance 0.4000 (corpus rule: 0.0300); "
            "no reason registered") in text, text


def m_loosened_with_reason(c: Path) -> list[Where]:
    _loosen(c, reason=REASON)
    return []


def v_loosened_with_reason(decision: dict[str, Any], findings: list[Any]) -> None:
    assert not [f for f in findings if f.code == "subgroup-rule-looser-unexplained"]
    assert decision["rule"]["subgroups"][2]["reason"] == REASON
    assert decision["decision"]["answer"] == B4
    assert f"tolerance 0.4000 (corpus rule: 0.0300); reason registered: {REASON}" in _page_one(decision)


def m_hard_examples_removed(c: Path) -> list[Where]:
    # The long texts b4 gets wrong taken out of long.csv: its long subgroup passes, the corpus is unchanged.
    _spoil_long(c, honest_claims=False)
    reference = _labels(c, "reference.csv")
    wrong = {i for phase, run in B4_RUNS for i, label in _labels(c, pred(RTX, "b4", phase, run)).items()
             if label != reference[i]}
    kept = [i for i in _ids(c, "subgroups/long.csv") if i not in wrong]
    (c / "subgroups" / "long.csv").write_text("id\n" + "\n".join(kept) + "\n", encoding="utf-8")
    return [Where(PROTOCOL, None, "/quality/subgroups")]


RULES: list[SeedRule] = [
    SeedRule("subgroup-long-fails", "a run is accepted only if every planned subgroup meets its rule: a "
             "configuration whose whole corpus passes but whose long texts fail is not accepted", _SOURCE, None,
             m_long_fails, protect="decision", verify=v_long_fails),
    SeedRule("subgroup-claim-recomputed", "a run claimed accepted whose long subgroup fails is a mismatch", _SOURCE,
             "corpus-accepted-mismatch", m_long_claimed_accepted, targets=(B4,)),
    SeedRule("subgroup-unfinished", "a failed run's unfinished IDs are counted per subgroup", _SOURCE, None,
             m_unfinished, protect="decision", verify=v_unfinished),
    SeedRule("subgroup-own-rule", "a subgroup with a rule of its own is judged by it", _SOURCE, None, m_own_rule,
             protect="decision", verify=v_own_rule),
    SeedRule("subgroup-ids-expected", "a planned subgroup lists expected IDs only", _SOURCE,
             "subgroup-id-not-expected", m_not_expected, protect="withheld"),
    SeedRule("subgroup-not-empty", "a planned subgroup lists the IDs it is judged on", _SOURCE, "subgroup-empty",
             m_empty, protect="withheld", verify=v_empty_alone),
    SeedRule("subgroup-ids-once", "a planned subgroup lists each of its texts once", _SOURCE, "subgroup-id-repeated",
             m_id_twice, protect="withheld"),
    SeedRule("subgroups-apart", "planned subgroups are set apart by their edges: no text is in two, so none can be "
             "diluted", _SOURCE, "subgroups-overlap", m_diluted, protect="withheld"),
    SeedRule("subgroup-once", "each planned subgroup is registered once", _SOURCE, "subgroup-repeated", m_repeated,
             protect="withheld"),
    SeedRule("subgroup-rule-not-loosened", "a subgroup's own threshold or tolerance looser than the corpus rule "
             "needs a registered reason, and page 1 shows it", _LATER, "subgroup-rule-looser-unexplained", m_loosened,
             protect="warning", severity="warning", verify=v_loosened),
    SeedRule("subgroup-rule-loosened-with-reason", "a looser subgroup rule with its registered reason is shown on page "
             "1 with the reason", _LATER, None, m_loosened_with_reason, protect="decision",
             verify=v_loosened_with_reason),
    SeedRule("subgroup-hard-examples-kept", "subgroups whose edges cover every length hold every expected ID: the "
             "texts a configuration gets wrong are never taken out of its subgroup", _HARD, "subgroup-ids-left-out",
             m_hard_examples_removed, protect="withheld"),
    SeedRule("subgroup-ids-inside", "a subgroup's ID file is in the campaign folder", f"{P} §5",
             "path-outside-campaign", m_outside, protect="withheld"),
]
