"""The protocol's metric in `check`: named from the registry, its rule in its range, and the same metric recomputed
for every run and every subgroup, as scikit-learn computes it."""

from __future__ import annotations

import csv
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from sklearn import metrics as skm

from generator.audit.check import check_campaign
from generator.audit.load.findings import Finding, Severity
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.readers.predictions import read_ids, read_labels
from generator.audit.recompute.quality.acceptance import assess_run, assess_run_reference, prepare_truth
from generator.audit.validate.validate import validate_campaign
from generator.core.metrics import METRICS


def _edit(campaign: Path, **quality: Any) -> None:
    path = campaign / "protocol.json"
    proto = json.loads(path.read_text(encoding="utf-8"))
    proto["quality"].update(quality)
    path.write_text(json.dumps(proto, ensure_ascii=False), encoding="utf-8")


def _codes(findings: list[Finding], code: str) -> list[Finding]:
    return [f for f in findings if f.code == code]


def test_an_unknown_metric_lists_the_known_ones(campaign: Path) -> None:
    _edit(campaign, metric="f1_macro")
    findings = validate_campaign(campaign).findings
    (only,) = _codes(findings, "metric-unknown")
    assert (only.severity, only.file, only.field, only.value) == (Severity.ERROR, "protocol.json",
                                                                  "/quality/metric", "f1_macro")
    assert '"f1_macro"' in only.message and "did you mean macro_f1 (macro-F1)?" in only.message
    for slug, m in METRICS.items():
        assert f"{slug} ({m.name}, {m.range_text()})" in (only.fix or "")
    assert not _codes(findings, "schema-violation")  # said once, by name


def test_a_metric_of_the_registry_is_accepted(campaign: Path) -> None:
    _edit(campaign, metric="matthews_corrcoef", threshold=-0.25, tolerance=1.5)
    findings = validate_campaign(campaign).findings
    assert not [f for f in findings if f.code in {"metric-unknown", "metric-range-exceeded", "schema-violation"}]


@pytest.mark.parametrize(("metric", "field", "value", "allowed"), [
    ("accuracy", "threshold", 0.0, True), ("accuracy", "threshold", 1.0, True),
    ("accuracy", "threshold", -0.01, False), ("matthews_corrcoef", "threshold", -1.0, True),
    ("cohen_kappa", "threshold", -0.5, True), ("macro_f1", "tolerance", 1.0, True),
    ("macro_f1", "tolerance", 1.01, False), ("cohen_kappa", "tolerance", 2.0, True),
    ("balanced_accuracy", "tolerance", 1.5, False), ("min_recall", "reference", -0.1, False),
    ("matthews_corrcoef", "reference", -0.1, True),
])
def test_the_rules_values_lie_in_the_metrics_range(campaign: Path, metric: str, field: str, value: float,
                                                   allowed: bool) -> None:
    path = campaign / "protocol.json"
    proto = json.loads(path.read_text(encoding="utf-8"))
    proto["quality"]["metric"] = metric
    if field == "reference":
        proto["quality"]["reference"]["value"] = value
    else:
        proto["quality"][field] = value
    path.write_text(json.dumps(proto), encoding="utf-8")
    findings = validate_campaign(campaign).findings
    found = _codes(findings, "metric-range-exceeded")
    if allowed:
        assert found == [] and not _codes(findings, "schema-violation")
        return
    (only,) = found
    pointer = "/quality/reference/value" if field == "reference" else f"/quality/{field}"
    assert (only.severity, only.field, only.value) == (Severity.ERROR, pointer, value)
    assert METRICS[metric].name in only.message and METRICS[metric].range_text() in only.message
    assert metric in (only.fix or "")


def test_a_subgroups_value_and_the_bound_lie_in_the_range_too(campaign: Path) -> None:
    path = campaign / "protocol.json"
    proto = json.loads(path.read_text(encoding="utf-8"))
    proto["quality"]["subgroups"][2].update(threshold=-0.2, reason="the bootstrap spread of the long texts")
    proto["quality"]["reproduction"] = {"target": "bounded", "bound": 1.2}
    path.write_text(json.dumps(proto), encoding="utf-8")
    found = _codes(validate_campaign(campaign).findings, "metric-range-exceeded")
    assert sorted(f.field or "" for f in found) == ["/quality/reproduction/bound", "/quality/subgroups/2/threshold"]
    result = check_campaign(campaign)
    assert result.decision["decision"]["answer"] is None and result.decision["decision"]["status"] == "withheld"


def test_a_value_beyond_every_metrics_range_is_refused_by_the_schema(campaign: Path) -> None:
    _edit(campaign, metric="matthews_corrcoef", threshold=-1.5)
    (only,) = _codes(validate_campaign(campaign).findings, "schema-violation")
    assert only.field == "/quality/threshold"


def _sklearn(slug: str, truth: list[str], pred: list[str], classes: list[str]) -> float:
    names: dict[str, Any] = {name: getattr(skm, name) for name in dir(skm) if not name.startswith("_")}
    names.update(truth=truth, pred=pred, classes=classes, sorted=sorted, set=set)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(eval(METRICS[slug].sklearn, {"__builtins__": {}}, names))  # noqa: S307


def _labels(path: Path) -> dict[str, str]:
    with path.open(encoding="utf-8", newline="") as fh:
        return {row["id"]: row["label"] for row in csv.DictReader(fh)}


@pytest.mark.parametrize("metric", ["matthews_corrcoef", "cohen_kappa", "macro_f1_declared", "min_recall"])
def test_every_run_and_subgroup_is_judged_by_the_registered_metric(campaign: Path, metric: str) -> None:
    _edit(campaign, metric=metric, threshold=0.5, tolerance=0.5, reference={"name": "r", "value": 0.8})
    proto = json.loads((campaign / "protocol.json").read_text(encoding="utf-8"))
    classes = list(proto["classes"])
    reference = _labels(campaign / "reference.csv")
    groups = {g["id"]: list(_labels_ids(campaign / g["ids"])) for g in proto["quality"]["subgroups"]}
    for fast in (True, False):
        decision = check_campaign(campaign, fast=fast).decision
        run = decision["configurations"][1]["runs"][3]["recomputed"]
        assert run["quality_metric"] == metric
        predicted = _labels(campaign / run["prediction_file"])
        ids = list(reference)
        whole = _sklearn(metric, [reference[i] for i in ids], [predicted[i] for i in ids], classes)
        assert abs(run["quality_value"] - whole) <= 1e-12
        for g in run["subgroups"]:
            members = groups[g["id"]]
            expected = _sklearn(metric, [reference[i] for i in members], [predicted[i] for i in members], classes)
            assert abs(g["quality_value"] - expected) <= 1e-12


def _labels_ids(path: Path) -> list[str]:
    with path.open(encoding="utf-8", newline="") as fh:
        return [row["id"] for row in csv.DictReader(fh)]


def _one_class_run(tmp_path: Path, metric: str) -> tuple[Any, Any]:
    """A corpus whose reference holds one class, predicted right everywhere: both recomputation paths."""
    ids = [f"t{i}" for i in range(4)]
    (tmp_path / "expected.csv").write_text("id\n" + "".join(f"{i}\n" for i in ids), encoding="utf-8")
    for name in ("reference.csv", "warm-1.csv"):
        (tmp_path / name).write_text("id,label\n" + "".join(f"{i},games\n" for i in ids), encoding="utf-8")
    classes = ("games", "net")
    expected = read_ids(tmp_path / "expected.csv", "expected.csv")
    reference = read_labels(tmp_path / "reference.csv", "reference.csv", set(classes), Severity.ERROR)
    predictions = read_labels(tmp_path / "warm-1.csv", "warm-1.csv", set(classes), Severity.WARNING)
    example = json.loads((Path(__file__).parent.parent / "inputs" / "example" / "protocol.json").read_text("utf-8"))
    example["classes"] = list(classes)
    example["quality"] = {"metric": metric, "threshold": 0.5, "tolerance": 0.5, "direction": "higher_is_better",
                          "reference": {"name": "r", "value": 0.8}}
    protocol = Protocol.of(example)
    fast = assess_run(prepare_truth(expected.ids, True, reference, classes), predictions, protocol)
    plain = read_labels(tmp_path / "warm-1.csv", "warm-1.csv", set(classes), Severity.WARNING, fast=False)
    slow = assess_run_reference(ids, dict.fromkeys(ids, "games"), plain, protocol)
    return fast, slow


def test_kappa_undefined_on_one_class_gives_no_value_and_no_acceptance(tmp_path: Path) -> None:
    # scikit-learn: kappa is undefined (NaN) when truth and predictions hold one and the same class; no value can
    # meet a rule, so the run is not accepted (and no NaN reaches decision.json)
    for acc in _one_class_run(tmp_path, "cohen_kappa"):
        assert acc.ids_match and acc.format_valid
        assert acc.quality_value is None and not acc.quality_ok and not acc.corpus_accepted
    for acc in _one_class_run(tmp_path, "matthews_corrcoef"):  # scikit-learn's 0 there: a value, below 0.5
        assert acc.quality_value == 0.0 and not acc.corpus_accepted
    for acc in _one_class_run(tmp_path, "accuracy"):
        assert acc.quality_value == 1.0 and acc.corpus_accepted


NAMES = {"en": "Matthews correlation", "de": "Matthews-Korrelation", "fr": "corrélation de Matthews",
         "zh": "马修斯相关系数"}


@pytest.mark.parametrize("lang", sorted(NAMES))
def test_the_note_names_the_metric_as_a_reader_says_it(example_decision: Path, lang: str) -> None:
    from generator.render.page.note import render_html
    from generator.render.view.i18n import metric_names, translations

    decision = json.loads(example_decision.read_text(encoding="utf-8"))
    decision["rule"]["metric"] = "matthews_corrcoef"
    html = render_html(decision, language=lang)
    assert f"<dd>{NAMES[lang]}</dd>" in html and "matthews_corrcoef" not in html
    names = metric_names(translations(lang))
    assert set(names) == set(METRICS)  # every registered metric has its words in every catalogue
    if lang == "en":
        assert names == {slug: m.name for slug, m in METRICS.items()}
    else:
        assert all(names[slug] != slug for slug in METRICS)


@pytest.mark.parametrize("metric", ["cohen_kappa", "macro_f1_declared", "matthews_corrcoef"])
def test_campaign_run_writes_the_registered_metric_as_check_recomputes_it(metric: str) -> None:
    from types import SimpleNamespace

    from generator.gpu.campaign import campaign_rows
    from generator.gpu.campaign.campaign_inputs import Subgroup

    ids = [f"t{i}" for i in range(6)]
    truth = ["a", "a", "b", "b", "c", "a"]
    pred = ["a", "b", "b", "b", "a", "a"]
    classes = ["a", "b", "c", "d"]  # "d" declared, in no run
    quality = {"metric": metric, "threshold": 0.1, "tolerance": 0.9, "direction": "higher_is_better",
               "reference": {"name": "r", "value": 0.5}, "subgroups": [{"id": "first"}]}
    plan = SimpleNamespace(protocol={"quality": quality}, classes=classes, ids=ids,
                           reference=dict(zip(ids, truth, strict=True)),
                           subgroups=[Subgroup("first", "first.csv", ("t0", "t1", "t2"))])
    plan.corpora = [SimpleNamespace(ids=ids, reference=plan.reference)]
    cells = campaign_rows._assess(plan, plan.corpora[0], list(zip(ids, pred, strict=True)))  # type: ignore[arg-type]
    assert cells["quality_value"] == round(_sklearn(metric, truth, pred, classes), 6)
    assert cells["corpus_accepted"] is (_sklearn(metric, truth[:3], pred[:3], classes) >= 0.1)
    one = SimpleNamespace(**{**vars(plan), "reference": dict.fromkeys(ids, "a"), "subgroups": []})
    one.corpora = [SimpleNamespace(ids=ids, reference=one.reference)]
    cells = campaign_rows._assess(one, one.corpora[0], [(i, "a") for i in ids])  # type: ignore[arg-type]
    if metric == "cohen_kappa":  # undefined: no value written (never "nan"), not accepted
        assert (cells["quality_value"], cells["corpus_accepted"]) == (None, False)
