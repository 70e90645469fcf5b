"""Issue 34's seed rules (the protocol in full), in the form of tests/seed_rules.py; test_seed_rules.py runs them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from seed_rules import ANY, B4, GRID, PROTOCOL, RTX, A, P, SeedRule, Where, edit_lines, edit_protocol, line_of, pred

_SOURCE = f"{A} 'Qualität nach einem Wechsel der Präzision prüfen'"


def _register(c: Path, **target: Any) -> None:
    edit_protocol(c, lambda p: p["quality"].update(reproduction=target))


def _relabel_ten(c: Path) -> None:
    """Warm run 3 of rtx4090-batch/b4 gives its first ten texts the next one's label: the same IDs, other
    predictions (its quality moves a little, and stays above the threshold)."""
    def swap(lines: list[str]) -> list[str]:
        rows = [t.split(",") for t in lines[1:]]
        labels = [r[1] for r in rows[:11]]
        for i in range(10):
            rows[i][1] = labels[i + 1]
        return [lines[0]] + [",".join(r) for r in rows]
    edit_lines(c, pred(RTX, "b4", "warm", 3), swap)


def m_not_identical(c: Path) -> list[Where]:
    _register(c, target="identical")
    _relabel_ten(c)
    return [Where(GRID, line_of(c, RTX, "b4", "warm", 3), "run_index")]


def m_beyond_bound(c: Path) -> list[Where]:
    _register(c, target="bounded", bound=0.0)
    _relabel_ten(c)
    return [Where(GRID, ANY, "quality_value")]


def m_quality_only(c: Path) -> list[Where]:
    _register(c, target="quality")
    return []


def v_quality_only(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == B4, decision["decision"]
    assert decision["rule"]["reproduction"] == "quality"


RULES: list[SeedRule] = [
    SeedRule("reproduction-identical", "with identical outputs registered, every warm run writes the same "
             "predictions", _SOURCE, "reproduction-not-identical", m_not_identical, targets=(B4,)),
    SeedRule("reproduction-bounded", "with a bounded deviation registered, the metric's spread across the warm "
             "runs stays within the bound", _SOURCE, "reproduction-beyond-bound", m_beyond_bound, targets=(B4,)),
    SeedRule("reproduction-quality", "with acceptable quality registered, acceptance alone decides", _SOURCE, None,
             m_quality_only, protect="decision", verify=v_quality_only),
]


def m_other_code_revision(c: Path) -> list[Where]:
    # Each experiment states the inference code it ran; the B200 series ran another commit, with compilation.
    edit_protocol(c, lambda p: (p["experiments"][0]["fixed"].update(code_revision="abc1234", compile="eager"),
                                p["experiments"][1]["fixed"].update(code_revision="def5678", compile="eager")))
    return [Where(PROTOCOL, None, "/experiments/1/fixed/code_revision")]


def m_one_attention_backend(c: Path) -> list[Where]:
    # The same code, quantisation, attention backend and deterministic options in both series: one kind of work.
    same = {"code_revision": "abc1234", "quantisation": "none", "attention_backend": "sdpa",
            "deterministic": "torch.use_deterministic_algorithms(True)"}
    edit_protocol(c, lambda p: [e["fixed"].update(same) for e in p["experiments"]])
    return []


def v_same_fixed_fields(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == B4 and not [f for f in findings if f.code == "different-work"]


_FIXED = f"{A} 'Eingaben, Referenz und Manifest vorbereiten'; {P} §1, §2"
RULES += [
    SeedRule("fixed-code-revision", "the code revision, quantisation, compilation, attention backend and "
             "deterministic options held fixed are compared across the experiments ranked together", _FIXED,
             "different-work", m_other_code_revision, protect="withheld"),
    SeedRule("fixed-fields-same", "experiments that state the same code, quantisation, attention backend and "
             "deterministic options are ranked together", _FIXED, None, m_one_attention_backend, protect="decision",
             verify=v_same_fixed_fields),
]


# ------------------------------------------------------------------- training and tuning data kept apart

SPLIT_IDS = "splits/tuning-ids.csv"


def _tuning_split(c: Path, shared: int = 0) -> None:
    """A tuning split of 100 texts outside the corpus (and `shared` of the corpus's own expected IDs), registered
    with the reference value measured on it."""
    expected = (c / "expected-ids.csv").read_text(encoding="utf-8").split()[1:]
    ids = [f"tune-{i:04d}" for i in range(100)] + expected[:shared]
    (c / SPLIT_IDS).parent.mkdir(exist_ok=True)
    (c / SPLIT_IDS).write_text("id\n" + "\n".join(ids) + "\n", encoding="utf-8")
    edit_protocol(c, lambda p: (p.update(splits=[{"name": "tuning", "revision": "tuning@r1", "ids": SPLIT_IDS}]),
                                p["quality"]["reference"].update(split="tuning")))


def m_split_apart(c: Path) -> list[Where]:
    _tuning_split(c)
    return []


def v_split_apart(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == B4 and decision["rule"]["reference"]["split"] == "tuning"
    assert "splits/tuning-ids.csv" in {i["path"] for i in decision["inputs"]}  # the split's IDs are evidence


def m_split_overlaps(c: Path) -> list[Where]:
    _tuning_split(c, shared=3)
    return [Where(PROTOCOL, None, "/splits/0/ids")]


def m_reference_split_unknown(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: p["quality"]["reference"].update(split="training"))
    return [Where(PROTOCOL, None, "/quality/reference/split")]


def m_split_outside(c: Path) -> list[Where]:
    _tuning_split(c)
    edit_protocol(c, lambda p: p["splits"][0].update(ids="../tuning-ids.csv"))
    return [Where(PROTOCOL, None, "/splits/0/ids")]


_SPLITS = f"{P} §1; {A} 'Eingaben, Referenz und Manifest vorbereiten'"
RULES += [
    SeedRule("split-apart", "training and tuning splits registered apart from the corpus leave the decision as "
             "it is", _SPLITS, None, m_split_apart, protect="decision", verify=v_split_apart),
    SeedRule("split-overlaps-evaluation", "no ID of a training or tuning split is an expected ID of the "
             "comparison corpus", _SPLITS, "split-overlaps-evaluation", m_split_overlaps, protect="withheld"),
    SeedRule("reference-split-registered", "the reference value names the registered split it was measured on",
             _SPLITS, "reference-split-unknown", m_reference_split_unknown, protect="withheld"),
    SeedRule("split-ids-inside", "a split's ID file is in the campaign folder", f"{P} §5", "path-outside-campaign",
             m_split_outside, protect="withheld"),
]
