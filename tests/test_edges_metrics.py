"""Issue 51's edges of the quality rule and the metric registry: a value exactly at the threshold, a degradation
exactly at the tolerance, and one just past each (the mutation command's survivors in core/metrics)."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from generator.core.metrics import HIGHER, LOWER, METRICS, compute_metric, metric, quality_rule_holds

# (value, threshold, tolerance, direction, reference) -> holds. Binary fractions (0.5, 0.25) are exact in floating
# point: a degradation of 0.25 is exactly the tolerance, not a rounding away from it.
EDGES = [
    ((0.80, 0.80, 0.10, HIGHER, 0.84), True),  # exactly at the threshold
    ((0.5, 0.5, 0.25, HIGHER, 0.75), True),  # threshold and tolerance both exactly met
    ((0.5, 0.5, 0.25, HIGHER, 0.75 + 2**-20), False),  # a degradation just past the tolerance
    ((0.5, 0.5 + 2**-20, 0.25, HIGHER, 0.5), False),  # just under the threshold, no degradation
    ((0.75, 0.5, 0.0, HIGHER, 0.5), True),  # better than the reference: a negative degradation
    ((0.8755, 0.80, 0.0005, HIGHER, 0.876), True),  # at the tolerance as written: float gives 5.000000000000004e-4
    ((0.0, 0.0, 0.0, HIGHER, 1e-12), True),  # the rule's 1e-12 slack itself is within
    ((0.5, 0.5, 0.25, LOWER, 0.25), True),
    ((0.5, 0.5, 0.25, LOWER, 0.25 - 2**-20), False),
    ((0.5 + 2**-20, 0.5, 0.25, LOWER, 0.5), False),  # just over the threshold of a lower-is-better metric
    ((0.25, 0.5, 0.0, LOWER, 0.5), True),
    ((1e-12, 1.0, 0.0, LOWER, 0.0), True),
    ((0.1265, 0.20, 0.0005, LOWER, 0.126), True),
]


@pytest.mark.parametrize(("args", "holds"), EDGES, ids=[f"{a[3][:5]}-{a}" for a, _ in EDGES])
def test_the_quality_rule_holds_exactly_at_its_edges(args: tuple[float, float, float, str, float],
                                                     holds: bool) -> None:
    assert quality_rule_holds(*args)[0] is holds


def test_the_degradation_is_positive_when_worse_in_either_direction() -> None:
    assert quality_rule_holds(0.5, 0.0, 1.0, HIGHER, 0.75)[1] == 0.25
    assert quality_rule_holds(0.75, 0.0, 1.0, HIGHER, 0.5)[1] == -0.25
    assert quality_rule_holds(0.75, 1.0, 1.0, LOWER, 0.5)[1] == 0.25
    assert quality_rule_holds(0.5, 1.0, 1.0, LOWER, 0.75)[1] == -0.25


def test_a_metric_over_the_declared_classes_needs_them_and_no_other_does() -> None:
    truth, pred = ["a", "b"], ["a", "a"]
    with pytest.raises(ValueError, match="computed over the declared classes"):
        compute_metric("macro_f1_declared", truth, pred)
    # a declared class absent from both counts 0: (1 x 2/3 + 0 + 0) / 3 over a, b, c
    assert compute_metric("macro_f1_declared", truth, pred, ["a", "b", "c"]) == pytest.approx((2 / 3 + 0) / 3)
    assert compute_metric("macro_f1", truth, pred) == pytest.approx(1 / 3)
    # a label outside the declared classes counts as another label
    assert compute_metric("accuracy", ["a", "z"], ["a", "z"], ["a", "b"]) == 1.0
    assert compute_metric("macro_f1_declared", ["a", "z"], ["a", "z"], ["a", "b"]) == pytest.approx(0.5)


@pytest.mark.parametrize(("slug", "span"), [("accuracy", 1.0), ("matthews_corrcoef", 2.0), ("cohen_kappa", 2.0)])
def test_the_largest_degradation_is_the_width_of_the_range(slug: str, span: float) -> None:
    assert metric(slug).span == span


def test_the_registry_is_not_changed_by_what_reads_it() -> None:
    with pytest.raises(FrozenInstanceError):
        METRICS["accuracy"].__setattr__("low", 0.5)
    assert len({*METRICS.values()}) == len(METRICS)
