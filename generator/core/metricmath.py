"""The quality metrics' reference implementations, from one confusion matrix, each as scikit-learn computes it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Confusion:
    """A run's confusion matrix: `cells[i, j]` counts the texts of true class i predicted as j, over a label
    set whose first `declared` labels are the protocol's declared classes (the rest, labels outside them)."""

    cells: np.ndarray
    declared: int

    @classmethod
    def of_codes(cls, truth: np.ndarray, pred: np.ndarray, n_labels: int, declared: int | None = None) -> Confusion:
        """The matrix of integer label codes (aligned by ID) in one pass, counted in the narrowest integer type
        that indexes its cells."""
        if len(truth) != len(pred):
            raise ValueError("truth and predictions differ in length")
        if len(truth) == 0:
            raise ValueError("no labels to score")
        cells = n_labels * n_labels
        kind = np.dtype(np.int16 if cells <= np.iinfo(np.int16).max else np.int64)
        counts = np.bincount(truth.astype(kind) * n_labels + pred.astype(kind), minlength=cells)
        return cls(counts.reshape(n_labels, n_labels).astype(np.float64),
                   n_labels if declared is None else declared)

    @property
    def true_count(self) -> np.ndarray:
        return self.cells.sum(axis=1)

    @property
    def pred_count(self) -> np.ndarray:
        return self.cells.sum(axis=0)

    @property
    def hits(self) -> np.ndarray:
        return np.diagonal(self.cells)

    @property
    def present(self) -> np.ndarray:
        """The labels scikit-learn scores by default: those in the truth or the predictions."""
        return (self.true_count + self.pred_count) > 0


def accuracy(c: Confusion) -> float:
    """`accuracy_score`: the share of texts whose predicted label is the true one."""
    return float(c.hits.sum() / c.cells.sum())


def _f1(c: Confusion) -> np.ndarray:
    """Each present label's F1, 2 TP / (true + predicted): 0 for a label never predicted or never true."""
    present = c.present
    return 2 * c.hits[present] / (c.true_count[present] + c.pred_count[present])


def macro_f1(c: Confusion) -> float:
    """`f1_score(average="macro")`: the unweighted mean of the F1 of the labels in the truth or the predictions."""
    return float(_f1(c).mean())


def micro_f1(c: Confusion) -> float:
    """`f1_score(average="micro")`: F1 of the pooled counts; with one label per text, the accuracy."""
    return float(2 * c.hits.sum() / (c.true_count.sum() + c.pred_count.sum()))


def weighted_f1(c: Confusion) -> float:
    """`f1_score(average="weighted")`: the labels' F1 weighted by their number of true texts."""
    return float((_f1(c) * c.true_count[c.present]).sum() / c.true_count.sum())


def declared_macro_f1(c: Confusion) -> float:
    """`f1_score(labels=classes, average="macro", zero_division=0)`: the unweighted mean over the declared classes,
    a declared class absent from the truth and the predictions counting 0."""
    k = c.declared
    hits, both = c.hits[:k], c.true_count[:k] + c.pred_count[:k]
    f1 = np.divide(2 * hits, both, out=np.zeros(k), where=both > 0)
    return float(f1.mean())


def _recalls(c: Confusion) -> np.ndarray:
    """The recall of each label in the truth (a label only predicted has none)."""
    true = c.true_count > 0
    return c.hits[true] / c.true_count[true]


def balanced_accuracy(c: Confusion) -> float:
    """`balanced_accuracy_score`: the mean recall of the labels in the truth."""
    return float(_recalls(c).mean())


def min_recall(c: Confusion) -> float:
    """The lowest recall of a label in the truth: `recall_score(labels=unique(truth), average=None).min()`."""
    return float(_recalls(c).min())


def matthews(c: Confusion) -> float:
    """`matthews_corrcoef` (multiclass, Gorodkin's R_K); 0 where truth or predictions hold one label only."""
    t_sum, p_sum = c.true_count, c.pred_count
    n = p_sum.sum()
    cov_tp = c.hits.sum() * n - np.dot(t_sum, p_sum)
    cov_pp = n**2 - np.dot(p_sum, p_sum)
    cov_tt = n**2 - np.dot(t_sum, t_sum)
    if cov_pp * cov_tt == 0:
        return 0.0
    return float(cov_tp / np.sqrt(cov_pp * cov_tt))


def cohen_kappa(c: Confusion) -> float:
    """`cohen_kappa_score` (unweighted): agreement beyond chance; NaN (undefined) where the truth and the
    predictions hold one and the same label only, as scikit-learn returns it."""
    sum0, sum1 = c.pred_count, c.true_count
    expected = np.outer(sum1, sum0) / sum0.sum()
    off = ~np.eye(len(sum0), dtype=bool)
    denominator = expected[off].sum()
    if denominator == 0:
        return float("nan")
    return float(1 - c.cells[off].sum() / denominator)
