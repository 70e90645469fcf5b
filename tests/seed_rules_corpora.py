"""Issue 34 item 9's seed rules (several corpora), in the form of tests/seed_rules.py; test_seed_rules.py runs them.

The second corpus is 300 real texts of the Debian descriptions' training split with their real labels; its
predictions are generated (every thirteenth text given the next class), like the example's."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
from conftest import read_grid, write_grid
from seed_rules import (
    B1,
    B4,
    B200,
    GRID,
    PROTOCOL,
    RTX,
    A,
    P,
    SeedRule,
    Where,
    edit_json,
    edit_protocol,
    index_of,
    meas,
    pred,
    set_row,
    set_rows,
)
from seed_rules_protocol import _REPEATS, _ROUND, _shifted, set_second_series_aside

from generator.audit.recompute.decision.model import DecisionDocument
from generator.core.metrics import compute_metric
from generator.core.system.resources import schemas_dir

_SOURCE = f"{A} 'Nutzbare Ergebnisse zählen, nicht Wiederholungen von Messungen'"
TRAIN = Path(__file__).resolve().parent.parent / "inputs" / "corpora" / "debian-descriptions" / "train.jsonl"
SECOND = "debian-descriptions-train-sample@r1"  # the second corpus's revision
SIZE, DONE = 300, 120  # its texts; the texts an out-of-memory run on it finished
FIRST_RUN = {"cold": 2, "warm": 6}  # the first run index on the second corpus


def _second_texts() -> list[tuple[str, str]]:
    with TRAIN.open(encoding="utf-8") as fh:
        return [(r["id"], r["label"]) for r in map(json.loads, (next(fh) for _ in range(SIZE)))]


def _csv(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def _predictions(truth: list[tuple[str, str]], classes: list[str]) -> list[tuple[str, str]]:
    """Every thirteenth text labelled with the next class: synthetic predictions, not a model's."""
    return [(i, classes[(classes.index(y) + 1) % len(classes)] if k % 13 == 0 else y) for k, (i, y) in enumerate(truth)]


def _more_repeats(doc: Any) -> None:
    """A measurement's warm runs 6 to 10: the second series repeats the first's (_REPEATS)."""
    doc["configuration"]["repeats"] = 10
    warm = {p["repeat"]: p for p in doc["phases"] if p["phase"] == "warm_forward"}
    for (phase, run), (_, source, steps) in _REPEATS.items():
        if phase == "warm":
            doc["phases"].append(dict(warm[source], repeat=run,
                                      started_at=_shifted(warm[source]["started_at"], steps * _ROUND),
                                      ended_at=_shifted(warm[source]["ended_at"], steps * _ROUND)))


def _second_corpus(c: Path) -> None:
    """The work is two corpora: every variant runs its cold and warm runs on the example's corpus, then on the
    second (cold run 2, warm runs 6 to 10, repeating the rotated order as the seeds' second series does), each with
    its row, prediction file and measured phase; the grid claims what the evidence gives."""
    truth = _second_texts()
    (c / "corpus2").mkdir()
    (c / "corpus2" / "expected-ids.csv").write_text(_csv([["id"], *([i] for i, _ in truth)]), encoding="utf-8")
    (c / "corpus2" / "reference.csv").write_text(_csv([["id", "label"], *map(list, truth)]), encoding="utf-8")
    edit_protocol(c, lambda p: p.update(corpora=[{
        "name": "debian-descriptions train sample", "revision": SECOND, "size": SIZE,
        "source": "the first 300 texts of inputs/corpora/debian-descriptions/train.jsonl, with their labels",
        "expected_ids": "corpus2/expected-ids.csv", "reference": "corpus2/reference.csv"}]))
    classes = sorted({y for _, y in truth} | {"admin", "games", "graphics", "net", "science", "sound", "text", "utils"})
    predicted = _predictions(truth, classes)
    value = round(compute_metric("macro_f1", [y for _, y in truth], [y for _, y in predicted]), 6)
    rows = read_grid(c)
    h = rows[0]
    for exp in (RTX, B200):
        for variant in ("b1", "b4", "b8"):
            for (phase, run), (from_phase, source, _) in _REPEATS.items():
                new = list(rows[index_of(c, exp, variant, from_phase, source)])
                cells = {"run_index": str(run), "corpus_revision": SECOND, "expected_ids": str(SIZE),
                         "accepted_unique_corpora": "2"}
                if "outcome=oom" in new[h.index("notes")]:
                    written = predicted[:DONE]
                    cells.update(observed_ids=str(DONE),
                                 notes=re.sub(r"completed=\d+", f"completed={DONE}", new[h.index("notes")]))
                else:
                    written = predicted
                    cells.update(observed_ids=str(SIZE), quality_value=f"{value}", corpus_accepted="true")
                for column, cell in cells.items():
                    new[h.index(column)] = cell
                rows.append(new)
                (c / pred(exp, variant, phase, run)).write_text(_csv([["id", "label"], *map(list, written)]),
                                                                 encoding="utf-8")
            edit_json(c, meas(exp, variant), _more_repeats)
    write_grid(c, rows)
    set_rows(c, RTX, None, accepted_unique_corpora="2")
    set_rows(c, B200, None, accepted_unique_corpora="2")


def m_two_corpora(c: Path) -> list[Where]:
    _second_corpus(c)
    return []


def v_two_corpora(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == B4, decision["decision"]
    b4 = next(x for x in decision["configurations"] if x["id"] == B4)
    assert [(k["revision"], k["expected_ids"], k["attempts"], k["accepted_runs"], k["accepted"])
            for k in b4["corpora"]] == [(decision["campaign"]["corpus"]["revision"], 1000, 6, 6, True),
                                        (SECOND, SIZE, 6, 6, True)]
    assert b4["accepted_unique_corpora"] == 2
    assert b4["cost_per_accepted_result"]["usd_minor"] == "5500.00"  # the package over two accepted corpora
    assert {r["corpus"] for r in b4["runs"]} == {decision["campaign"]["corpus"]["revision"], SECOND}
    # the second corpus's files are evidence; its runs are judged against its own reference
    assert {"corpus2/expected-ids.csv", "corpus2/reference.csv"} <= {i["path"] for i in decision["inputs"]}
    second = [r for r in b4["runs"] if r["corpus"] == SECOND]
    assert {r["recomputed"]["expected_ids"] for r in second} == {SIZE}
    assert all("subgroups" not in r["recomputed"] for r in second)  # the planned subgroups are the first corpus's
    # the per-corpus records are the decision schema's, and read back as they were written
    jsonschema.validate(decision, json.loads((schemas_dir() / "decision.schema.json").read_text(encoding="utf-8")))
    assert DecisionDocument.from_json_dict(decision).to_json_dict() == decision


def m_runs_missing(c: Path) -> list[Where]:
    # b4's runs on the second corpus are filed under the first corpus's revision: the second has none.
    _second_corpus(c)
    first = json.loads((c / PROTOCOL).read_text(encoding="utf-8"))["corpus"]["revision"]
    for phase, run in [("cold", 2), *(("warm", r) for r in range(6, 11))]:
        set_row(c, RTX, "b4", phase, run, corpus_revision=first)
    return [Where(GRID, None, "corpus_revision")]


def m_not_on_every_corpus(c: Path) -> list[Where]:
    # Every b4 run on the second corpus is set aside under a registered outside cause: no run is a failure and
    # every completed run is accepted, but the second corpus has no accepted run.
    _second_corpus(c)
    set_second_series_aside(c)
    set_rows(c, RTX, "b4", accepted_unique_corpora="1")
    return []


def v_not_on_every_corpus(decision: dict[str, Any], findings: list[Any]) -> None:
    b4 = next(x for x in decision["configurations"] if x["id"] == B4)
    assert [k["accepted"] for k in b4["corpora"]] == [True, False] and b4["accepted"] is False
    assert any(r.startswith("not accepted on every corpus") for r in b4["reasons"]), b4["reasons"]
    assert decision["decision"]["answer"] == B1, decision["decision"]


def m_repeated(c: Path) -> list[Where]:
    _second_corpus(c)
    edit_protocol(c, lambda p: p["corpora"][0].update(revision=p["corpus"]["revision"]))
    return [Where(PROTOCOL, None, "/corpora/0/revision")]


AGAIN = "debian-descriptions-eval-again@r2"  # the first corpus registered a second time, under this revision
# The content fingerprint of the example's corpus (audit's corpusprint; tests/test_corpus_fingerprint.py
# recomputes it from the reference in plain Python).
CONTENT = "content-sha256:f6901a56c39387b676e4a11e10cdb05182fc6251e6663b35511e96bcba1e3f34"


def _same_corpus_again(c: Path) -> None:
    """The first corpus registered a second time as a further corpus, under another name and revision: its expected
    IDs and reference copied, every run of the first series repeated on it (cold run 2, warm runs 6 to 10, each a
    copy of the run it repeats, with its measured phase), and the grid claiming two accepted corpora."""
    (c / "again").mkdir()
    for name in ("expected-ids.csv", "reference.csv"):
        shutil.copyfile(c / name, c / "again" / name)
    edit_protocol(c, lambda p: p.update(corpora=[{
        "name": "debian-descriptions eval, second sample", "revision": AGAIN, "size": 1000,
        "expected_ids": "again/expected-ids.csv", "reference": "again/reference.csv"}]))
    rows = read_grid(c)
    h = rows[0]
    for exp in (RTX, B200):
        for variant in ("b1", "b4", "b8"):
            for (phase, run), (from_phase, source, _) in _REPEATS.items():
                new = list(rows[index_of(c, exp, variant, from_phase, source)])
                new[h.index("run_index")], new[h.index("corpus_revision")] = str(run), AGAIN
                rows.append(new)
                shutil.copyfile(c / pred(exp, variant, from_phase, source), c / pred(exp, variant, phase, run))
            edit_json(c, meas(exp, variant), _more_repeats)
    write_grid(c, rows)
    set_rows(c, RTX, None, accepted_unique_corpora="2")
    set_rows(c, B200, None, accepted_unique_corpora="2")


def set_corpus_revision(c: Path, revision: str) -> None:
    """The first corpus registered under `revision`: in the protocol, each experiment's fixed settings, and every
    grid row (the example's work is one corpus)."""
    edit_protocol(c, lambda p: [p["corpus"].update(revision=revision),
                                *(e["fixed"].update(corpus_revision=revision) for e in p["experiments"])])
    for exp in (RTX, B200):
        set_rows(c, exp, None, corpus_revision=revision)


def m_same_corpus_again(c: Path) -> list[Where]:
    # Issue 47: the same corpus registered a second time under another revision halved the cost per accepted
    # result (110.00 -> 55.00 USD).
    _same_corpus_again(c)
    return [Where(PROTOCOL, None, "/corpora/0/revision")]


def v_same_corpus_again(decision: dict[str, Any], findings: list[Any]) -> None:
    repeated = next(f for f in findings if f.code == "corpus-repeated")
    assert (repeated.claimed, repeated.recomputed) == (AGAIN, CONTENT), repeated
    b4 = next(x for x in decision["configurations"] if x["id"] == B4)
    # the evidence counts one accepted corpus: the cost is the package's, not halved
    assert b4["accepted_unique_corpora"] == 1
    assert b4["cost_per_accepted_result"]["usd_minor"] == "11000.00"
    assert [k["fingerprint"] for k in decision["campaign"]["fingerprints"]] == [CONTENT, CONTENT]


def m_fingerprint_wrong(c: Path) -> list[Where]:
    # The revision carries a content fingerprint, one hex digit off the expected IDs' and reference's.
    set_corpus_revision(c, "debian-descriptions-eval@" + CONTENT[:-49] + "0")
    return [Where(PROTOCOL, None, "/corpus/revision")]


def m_fingerprint_borrowed(c: Path) -> list[Where]:
    # The second corpus registers the first corpus's content fingerprint as its revision.
    _second_corpus(c)
    edit_protocol(c, lambda p: p["corpora"][0].update(revision="train-sample@" + CONTENT))
    rows = read_grid(c)
    h = rows[0]
    for r in rows[1:]:
        if r[h.index("corpus_revision")] == SECOND:
            r[h.index("corpus_revision")] = "train-sample@" + CONTENT
    write_grid(c, rows)
    return [Where(PROTOCOL, None, "/corpora/0/revision")]


def m_reference_short(c: Path) -> list[Where]:
    # The second corpus's reference leaves one expected text unlabelled.
    _second_corpus(c)
    path = c / "corpus2" / "reference.csv"
    path.write_text("".join(path.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")
    return [Where("corpus2/reference.csv", None, None)]


RULES: list[SeedRule] = [
    SeedRule("corpora-each-processed", "when the useful work is several corpora, every configuration processes "
             "each under the same rule, and each accepted corpus counts once", _SOURCE, None, m_two_corpora,
             protect="decision", verify=v_two_corpora),
    SeedRule("corpora-runs-each", "every configuration has its runs on every corpus of the work", _SOURCE,
             "corpus-runs-missing", m_runs_missing, targets=(B4,)),
    SeedRule("corpora-accepted-each", "a configuration is accepted only when every corpus is", _SOURCE, None,
             m_not_on_every_corpus, protect="decision", verify=v_not_on_every_corpus),
    SeedRule("corpora-distinct", "each corpus of the work has a revision of its own", _SOURCE, "corpus-repeated",
             m_repeated, protect="withheld"),
    SeedRule("corpora-same-content-once", "two corpora of the same content (expected IDs and reference labels) are "
             "one corpus, whatever their names and revisions: never a second accepted result", _SOURCE,
             "corpus-repeated", m_same_corpus_again, protect="withheld", verify=v_same_corpus_again),
    SeedRule("corpus-fingerprint-matches", "a corpus revision that carries a content fingerprint carries its "
             "corpus's (the expected IDs and reference labels)", f"{P} §4 corpus_revision",
             "corpus-fingerprint-mismatch", m_fingerprint_wrong, protect="withheld"),
    SeedRule("corpus-fingerprint-own", "a further corpus's revision does not borrow another corpus's content "
             "fingerprint", f"{P} §4 corpus_revision", "corpus-fingerprint-mismatch", m_fingerprint_borrowed,
             protect="withheld"),
    SeedRule("corpora-reference-complete", "a further corpus's reference labels every expected ID, as the first's",
             f"{P} §1", "reference-missing-id", m_reference_short, protect="withheld"),
]
