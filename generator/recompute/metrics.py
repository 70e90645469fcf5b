"""Quality metrics recomputed from predictions: accuracy, macro-F1 and weighted-F1 as sklearn defines them."""

from __future__ import annotations

from typing import Sequence

import numpy as np

METRICS = ("macro_f1", "accuracy", "weighted_f1")


def _per_class(truth: Sequence[str], pred: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """F1 and support per label, over the labels present in truth or predictions (sklearn's default).

    A label with no true positive, no false positive and no false negative cannot occur here; a
    label never predicted (or never true) gets F1 0, as sklearn's zero_division default does.
    """
    labels = sorted(set(truth) | set(pred))
    index = {label: i for i, label in enumerate(labels)}
    t = np.fromiter((index[x] for x in truth), dtype=np.int64, count=len(truth))
    p = np.fromiter((index[x] for x in pred), dtype=np.int64, count=len(pred))
    k = len(labels)
    tp = np.bincount(t[t == p], minlength=k).astype(np.float64)
    true_count = np.bincount(t, minlength=k).astype(np.float64)
    pred_count = np.bincount(p, minlength=k).astype(np.float64)
    denom = true_count + pred_count
    f1 = np.divide(2 * tp, denom, out=np.zeros(k), where=denom > 0)
    return f1, true_count


def compute_metric(name: str, truth: Sequence[str], pred: Sequence[str]) -> float:
    """The named metric of `pred` against `truth` (same length, aligned by ID)."""
    if len(truth) != len(pred):
        raise ValueError("truth and predictions differ in length")
    if not truth:
        raise ValueError("no labels to score")
    if name == "accuracy":
        return float(np.mean([a == b for a, b in zip(truth, pred)]))
    f1, support = _per_class(truth, pred)
    if name == "macro_f1":
        return float(f1.mean())
    if name == "weighted_f1":
        return float((f1 * support).sum() / support.sum())
    raise ValueError(f"unknown metric {name!r}")


def quality_rule_holds(value: float, threshold: float, tolerance: float, direction: str, reference: float) -> tuple[bool, float]:
    """The registered rule: value against threshold, and degradation against the reference within tolerance.

    Returns (holds, degradation); degradation is positive when worse than the reference.
    """
    if direction == "higher_is_better":
        degradation = reference - value
        return value >= threshold and degradation <= tolerance + 1e-12, degradation
    degradation = value - reference
    return value <= threshold and degradation <= tolerance + 1e-12, degradation
