"""The metrics registry: every metric equals the scikit-learn call it names, on random runs and at the edges."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn import metrics as skm

from generator.core.metrics import HIGHER, METRICS, compute_metric, metric_from_codes
from generator.core.system.resources import load_schema

CLASSES = tuple(f"c{i}" for i in range(9))


def _sklearn(slug: str, truth: list[str], pred: list[str], classes: list[str]) -> float:
    """The scikit-learn call the registry names for `slug`, evaluated as written there."""
    names: dict[str, Any] = {name: getattr(skm, name) for name in dir(skm) if not name.startswith("_")}
    names.update(truth=truth, pred=pred, classes=classes, sorted=sorted, set=set)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns where a class has no prediction or no truth
        return float(eval(METRICS[slug].sklearn, {"__builtins__": {}}, names))  # noqa: S307


def _agree(slug: str, truth: list[str], pred: list[str], classes: list[str]) -> None:
    ours = compute_metric(slug, truth, pred, classes)
    theirs = _sklearn(slug, truth, pred, classes)
    if math.isnan(theirs):
        assert math.isnan(ours), (slug, truth, pred)
    else:
        assert abs(ours - theirs) <= 1e-12, (slug, ours, theirs, truth, pred)
    m = METRICS[slug]
    assert math.isnan(ours) or m.low <= ours <= m.high


def _random_cases(count: int) -> list[tuple[list[str], list[str], list[str]]]:
    rng = np.random.default_rng(20261204)
    out = []
    for _ in range(count):
        k = int(rng.integers(1, 9))  # classes in play, 1 to 8; the declared ones hold one more
        n = int(rng.integers(1, 400))
        truth = rng.integers(0, k, n)
        right = rng.random(n) < rng.random()  # from nearly all wrong to nearly all right
        pred = np.where(right, truth, rng.integers(0, k, n))
        out.append(([CLASSES[i] for i in truth], [CLASSES[i] for i in pred], list(CLASSES[: k + 1])))
    return out


@pytest.mark.parametrize("slug", list(METRICS))
def test_each_metric_is_sklearns_on_200_random_runs(slug: str) -> None:
    for truth, pred, classes in _random_cases(200):
        _agree(slug, truth, pred, classes)


EDGES = {
    "a class never predicted": (["a", "a", "b", "c", "c"], ["a", "a", "a", "c", "a"]),
    "a class absent from the truth": (["a", "a", "b", "b"], ["a", "c", "b", "c"]),
    "one class only, all right": (["a"] * 4, ["a"] * 4),
    "one class in the truth": (["a"] * 4, ["a", "b", "a", "a"]),
    "one class predicted": (["a", "b", "c", "a"], ["a"] * 4),
    "all correct": (["a", "b", "c", "b"], ["a", "b", "c", "b"]),
    "all wrong": (["a", "b", "a", "b"], ["b", "a", "b", "a"]),
    "all wrong, three classes": (["a", "b", "c"], ["b", "c", "a"]),
    "one text": (["a"], ["b"]),
}


@pytest.mark.parametrize("slug", list(METRICS))
@pytest.mark.parametrize("case", list(EDGES))
def test_each_metric_is_sklearns_at_the_edges(slug: str, case: str) -> None:
    truth, pred = EDGES[case]
    _agree(slug, truth, pred, ["a", "b", "c", "d"])  # "d" declared, in no run


def test_sklearns_own_conventions_at_the_edges_are_followed() -> None:
    one = (["a"] * 4, ["a"] * 4)
    assert compute_metric("matthews_corrcoef", *one) == 0.0  # sklearn: 0 where a covariance is 0
    assert math.isnan(compute_metric("cohen_kappa", *one))  # sklearn: undefined, replace_undefined_by=nan
    assert compute_metric("cohen_kappa", ["a", "b", "a", "b"], ["b", "a", "b", "a"]) == -1.0
    assert compute_metric("matthews_corrcoef", ["a", "b", "a", "b"], ["b", "a", "b", "a"]) == -1.0
    # a declared class in no run: left out of macro-F1, counted 0 by macro-F1 over the declared classes
    truth, pred = ["a", "a", "b"], ["a", "b", "b"]
    assert compute_metric("macro_f1", truth, pred) == pytest.approx(2 / 3)
    assert compute_metric("macro_f1_declared", truth, pred, ["a", "b", "c"]) == pytest.approx(4 / 9)
    # a class only predicted has no recall: balanced accuracy and the minimum recall leave it out
    assert compute_metric("min_recall", ["a", "a"], ["a", "b"]) == 0.5
    assert compute_metric("balanced_accuracy", ["a", "a"], ["a", "b"]) == 0.5


def test_the_column_wise_path_gives_the_string_paths_value() -> None:
    for truth, pred, classes in _random_cases(20):
        index = {c: i for i, c in enumerate(classes)}
        t = np.array([index[x] for x in truth])
        p = np.array([index[x] for x in pred])
        for slug in METRICS:
            a, b = metric_from_codes(slug, t, p, len(classes)), compute_metric(slug, truth, pred, classes)
            assert (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12


def test_the_declared_metric_needs_the_declared_classes() -> None:
    with pytest.raises(ValueError, match="declared classes"):
        compute_metric("macro_f1_declared", ["a"], ["a"])
    with pytest.raises(ValueError, match="known: accuracy, macro_f1"):
        compute_metric("f1_macro", ["a"], ["a"])


def test_every_metric_is_a_score_higher_is_better_in_its_range() -> None:
    for m in METRICS.values():
        assert m.direction == HIGHER and m.low < m.high and m.name and m.edges
    assert {m.slug for m in METRICS.values() if m.low < 0} == {"matthews_corrcoef", "cohen_kappa"}


def test_the_schemas_name_the_registrys_metrics() -> None:
    protocol = load_schema("protocol")
    assert protocol["properties"]["quality"]["properties"]["metric"]["enum"] == list(METRICS)
    row = load_schema("raw-results-row")
    assert row["properties"]["quality_metric"]["enum"] == [*METRICS, None]
    for slug, m in METRICS.items():
        assert f"{slug} ({m.name}" in json.dumps(protocol)  # its description lists each with its reader's name


def test_the_schemas_allow_every_metrics_range_and_no_more() -> None:
    low, high = min(m.low for m in METRICS.values()), max(m.high for m in METRICS.values())
    span = max(m.span for m in METRICS.values())
    quality = load_schema("protocol")["properties"]["quality"]["properties"]
    group = quality["subgroups"]["items"]["properties"]
    values = [quality["threshold"], quality["reference"]["properties"]["value"], group["threshold"],
              group["reference_value"]]
    for node in values:
        assert (node["minimum"], node["maximum"]) == (low, high)
    for node in (quality["tolerance"], group["tolerance"], quality["reproduction"]["properties"]["bound"]):
        assert (node["minimum"], node["maximum"]) == (0, span)
    row = load_schema("raw-results-row")["properties"]
    assert (row["quality_value"]["minimum"], row["quality_value"]["maximum"]) == (low, high)
    assert (row["quality_threshold"]["minimum"], row["quality_threshold"]["maximum"]) == (low, high)
    assert (row["quality_tolerance"]["minimum"], row["quality_tolerance"]["maximum"]) == (0, span)


def test_the_docs_list_every_metric_as_the_registry_does() -> None:
    docs = Path(__file__).parent.parent / "docs"
    check = (docs / "check.md").read_text(encoding="utf-8")
    folder = (docs / "campaign-folder.md").read_text(encoding="utf-8")
    for slug, m in METRICS.items():
        assert f"| `{slug}` | {m.name} | {m.range_text()} | `{m.sklearn}` | {m.edges} |" in check
        assert f"`{slug}`" in folder
