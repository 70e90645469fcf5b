"""Quality metrics recomputed from predictions: accuracy, macro-F1 and weighted-F1 as sklearn defines them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# The metrics gpu-audit recomputes, each with the direction in which it gets better: all three are scores, where 1
# is every text right, so a protocol registering lower_is_better for one would reject every good run.
DIRECTIONS = {"accuracy": "higher_is_better", "macro_f1": "higher_is_better", "weighted_f1": "higher_is_better"}


def metric_from_codes(name: str, truth: np.ndarray, pred: np.ndarray, n_labels: int) -> float:
    """The named metric from integer label codes (aligned by ID), as sklearn defines it.

    F1 is averaged over the labels present in truth or predictions (sklearn's default label set); a
    label never predicted, or never true, gets F1 0 (sklearn's zero_division default).
    """
    if len(truth) != len(pred):
        raise ValueError("truth and predictions differ in length")
    if len(truth) == 0:
        raise ValueError("no labels to score")
    if name == "accuracy":
        return float(np.count_nonzero(truth == pred) / len(truth))
    # One pass over the rows: the confusion matrix, in the narrowest integer type that indexes its cells.
    cells = n_labels * n_labels
    kind = np.dtype(np.int16 if cells <= np.iinfo(np.int16).max else np.int64)
    confusion = np.bincount(truth.astype(kind) * n_labels + pred.astype(kind),
                            minlength=cells).reshape(n_labels, n_labels).astype(np.float64)
    true_count, pred_count, tp = confusion.sum(axis=1), confusion.sum(axis=0), np.diagonal(confusion)
    present = (true_count + pred_count) > 0
    f1 = 2 * tp[present] / (true_count[present] + pred_count[present])
    if name == "macro_f1":
        return float(f1.mean())
    if name == "weighted_f1":
        return float((f1 * true_count[present]).sum() / true_count.sum())
    raise ValueError(f"unknown metric {name!r}")


def compute_metric(name: str, truth: Sequence[str], pred: Sequence[str]) -> float:
    """The named metric of `pred` against `truth` (label strings, aligned by ID)."""
    labels = sorted(set(truth) | set(pred))
    index = {label: i for i, label in enumerate(labels)}
    t = np.fromiter((index[x] for x in truth), dtype=np.int64, count=len(truth))
    p = np.fromiter((index[x] for x in pred), dtype=np.int64, count=len(pred))
    return metric_from_codes(name, t, p, len(labels))


def quality_rule_holds(value: float, threshold: float, tolerance: float, direction: str,
                       reference: float) -> tuple[bool, float]:
    """The registered rule: value against threshold, and degradation against the reference within tolerance.

    Returns (holds, degradation); degradation is positive when worse than the reference.
    """
    if direction == "higher_is_better":
        degradation = reference - value
        return value >= threshold and degradation <= tolerance + 1e-12, degradation
    degradation = value - reference
    return value <= threshold and degradation <= tolerance + 1e-12, degradation
