"""The registry of quality metrics a protocol can name: each one's reader's name, direction, range and reference
implementation (generator.core.metricmath), and the quality rule they are judged by."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from generator.core import metricmath
from generator.core.metricmath import Confusion

HIGHER, LOWER = "higher_is_better", "lower_is_better"


@dataclass(frozen=True)
class Metric:
    """One metric: `slug` as protocol.json names it, `name` as a reader says it (in English; the note's catalogues
    translate it), the direction in which it gets better, its range, and what scikit-learn call it equals."""

    slug: str
    name: str
    direction: str
    low: float
    high: float
    compute: Callable[[Confusion], float]
    sklearn: str
    edges: str
    declared: bool = False  # computed over the protocol's declared classes, not the labels the run holds

    @property
    def span(self) -> float:
        """The largest possible degradation: the width of the range."""
        return self.high - self.low

    def range_text(self) -> str:
        """[0, 1] or [-1, 1]."""
        return f"[{self.low:g}, {self.high:g}]"


_SCORE = "1 is every text right"
METRICS: dict[str, Metric] = {m.slug: m for m in (
    Metric("accuracy", "accuracy", HIGHER, 0.0, 1.0, metricmath.accuracy, "accuracy_score(truth, pred)", _SCORE),
    Metric("macro_f1", "macro-F1", HIGHER, 0.0, 1.0, metricmath.macro_f1, 'f1_score(truth, pred, average="macro")',
           "averaged over the classes in the truth or the predictions (scikit-learn's default labels): a class "
           "never predicted, or never true, has F1 0; a declared class absent from both is left out"),
    Metric("micro_f1", "micro-F1", HIGHER, 0.0, 1.0, metricmath.micro_f1, 'f1_score(truth, pred, average="micro")',
           "pooled counts over every class: with one label per text it equals the accuracy"),
    Metric("weighted_f1", "weighted-F1", HIGHER, 0.0, 1.0, metricmath.weighted_f1,
           'f1_score(truth, pred, average="weighted")',
           "each class's F1 weighted by its true texts; a class only predicted weighs 0"),
    Metric("macro_f1_declared", "macro-F1 over the declared classes", HIGHER, 0.0, 1.0, metricmath.declared_macro_f1,
           'f1_score(truth, pred, labels=classes, average="macro", zero_division=0)',
           "averaged over the protocol's classes: a declared class absent from the truth and the predictions "
           "counts 0", declared=True),
    Metric("balanced_accuracy", "balanced accuracy", HIGHER, 0.0, 1.0, metricmath.balanced_accuracy,
           "balanced_accuracy_score(truth, pred)",
           "the mean recall of the classes in the truth; a class only predicted has no recall and is left out"),
    Metric("min_recall", "minimum per-class recall", HIGHER, 0.0, 1.0, metricmath.min_recall,
           "recall_score(truth, pred, labels=sorted(set(truth)), average=None).min()",
           "the classes in the truth, as balanced accuracy averages them: a class only predicted has no recall"),
    Metric("matthews_corrcoef", "Matthews correlation", HIGHER, -1.0, 1.0, metricmath.matthews,
           "matthews_corrcoef(truth, pred)",
           "1 every text right, 0 no better than chance, -1 total disagreement; 0 where the truth or the "
           "predictions hold one class only"),
    Metric("cohen_kappa", "Cohen's kappa", HIGHER, -1.0, 1.0, metricmath.cohen_kappa,
           "cohen_kappa_score(truth, pred)",
           "1 every text right, 0 agreement by chance; undefined (NaN, replace_undefined_by's default) where the "
           "truth and the predictions hold one and the same class only: no value, so the run is not accepted"),
)}

# The direction each metric gets better in (the protocol's quality.direction must be it).
DIRECTIONS = {slug: m.direction for slug, m in METRICS.items()}


def metric(slug: str) -> Metric:
    """The registered metric `slug`; an unknown one is a ValueError naming the known ones."""
    found = METRICS.get(slug)
    if found is None:
        raise ValueError(f"unknown metric {slug!r}; known: {', '.join(METRICS)}")
    return found


def reader_name(slug: str) -> str:
    """The metric's name as a reader says it ("macro-F1"); an unknown slug as written."""
    found = METRICS.get(slug)
    return found.name if found else slug


def known_metrics() -> str:
    """Every registered metric, as a protocol names it and as a reader says it."""
    return "; ".join(f"{m.slug} ({m.name}, {m.range_text()})" for m in METRICS.values())


def metric_from_codes(name: str, truth: np.ndarray, pred: np.ndarray, n_labels: int) -> float:
    """The named metric from integer label codes (aligned by ID) that index the declared classes, as scikit-learn
    computes it (NaN where it is undefined there: Cohen's kappa on one class)."""
    return metric(name).compute(Confusion.of_codes(truth, pred, n_labels))


def compute_metric(name: str, truth: Sequence[str], pred: Sequence[str],
                   classes: Sequence[str] | None = None) -> float:
    """The named metric of `pred` against `truth` (label strings, aligned by ID). `classes` are the declared ones:
    the metric over the declared classes needs them; labels outside them count as other labels."""
    found = metric(name)
    if found.declared and classes is None:
        raise ValueError(f"{name} is computed over the declared classes: give them")
    declared = list(classes or ())
    labels = declared + sorted((set(truth) | set(pred)) - set(declared))
    index = {label: i for i, label in enumerate(labels)}
    t = np.fromiter((index[x] for x in truth), dtype=np.int64, count=len(truth))
    p = np.fromiter((index[x] for x in pred), dtype=np.int64, count=len(pred))
    return found.compute(Confusion.of_codes(t, p, len(labels), len(declared)))


def defined(value: float) -> float | None:
    """The value, or None where the metric is undefined (NaN): no value, so no rule can hold on it."""
    return None if math.isnan(value) else value


def quality_rule_holds(value: float, threshold: float, tolerance: float, direction: str,
                       reference: float) -> tuple[bool, float]:
    """The registered rule: value against threshold, and degradation against the reference within tolerance.

    Returns (holds, degradation); degradation is positive when worse than the reference.
    """
    if direction == HIGHER:
        degradation = reference - value
        return value >= threshold and degradation <= tolerance + 1e-12, degradation
    degradation = value - reference
    return value <= threshold and degradation <= tolerance + 1e-12, degradation
