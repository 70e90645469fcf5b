"""The note's words without internals (issue 50 item 3): GPU model names, code only in the technical appendix,
plurals, a sentence where a table would show dashes, an improvement said as one, the protocol's values and the
labels around the registered title and question in the reader's language."""

from __future__ import annotations

import copy
import functools
import html
import json
import re
from pathlib import Path
from typing import Any

import jinja2
import pytest

from generator.audit.check import check_campaign
from generator.audit.recompute.decision.decisionfile import read_decision
from generator.render.page.note import TEMPLATE, environment
from generator.render.view import finance
from generator.render.view.filters import DASH, degradation
from generator.render.view.view import ReadDecision, build_view

REPO = Path(__file__).resolve().parents[1]
APPENDIX = {"en": "Technical appendix", "de": "Technischer Anhang", "fr": "Annexe technique", "zh": "技术附录"}


@pytest.fixture(scope="module")
def example() -> dict[str, Any]:
    return check_campaign(REPO / "inputs" / "example").decision


@pytest.fixture(scope="module")
def minilm() -> dict[str, Any]:
    return check_campaign(REPO / "inputs" / "minilm-campaign").decision


@functools.cache
def _template(language: str) -> jinja2.Template:
    return environment(language).get_template(TEMPLATE)


def render_html(decision: dict[str, Any], language: str) -> str:
    """The HTML note as generator.render.page.note.render_html makes it, without its charts (drawing them is what
    costs; these tests read the words), the template compiled once per language."""
    view = build_view(ReadDecision.of(decision), language=language)
    return _template(language).render(**view.context(), durations_chart=None, memory_chart=None)


def words(body: str) -> str:
    """The text of HTML (the body's, for a whole page) as a reader sees it: tags dropped, white space and no-break
    spaces read as one space."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body.split("<body>")[-1])).split())


def parts(body: str, lang: str) -> tuple[str, str]:
    """The note's text before the technical appendix, and the appendix."""
    head, appendix = body.split(f"<h2>{APPENDIX[lang]}</h2>")
    return words(head), words(appendix)


def table(body: str, header: str) -> str:
    """The HTML of the first table whose header row holds `header`."""
    return next(t for t in body.split("<table") if header in t.split("</thead>")[0])


# --- GPU model names, not the rental's slug ---------------------------------------------------------------------


@pytest.mark.parametrize(("lang", "unpriced", "header"), [
    ("en", "there is no published price for NVIDIA H200", ">GPU<"),
    ("de", "für NVIDIA H200", ">GPU<")])
def test_a_gpu_without_a_tariff_is_named_by_the_model_the_runs_measured(
        minilm: dict[str, Any], lang: str, unpriced: str, header: str) -> None:
    body = render_html(minilm, language=lang)
    answer = words(body.split('<div class="answer">')[1].split("</div>")[0])
    assert unpriced in answer and "h200" not in answer
    packages = table(body, header)
    assert packages.count("<td>NVIDIA H200</td>") == 2 and "<td>h200</td>" not in packages


def test_the_gpu_name_comes_from_the_tariffs_then_the_measurement_then_the_grid(minilm: dict[str, Any]) -> None:
    """Never invented: each source in turn, and the slug only when no file names the model."""
    changed = copy.deepcopy(minilm)
    config = changed["configurations"][0]
    config["measurement"]["environment"]["gpu_name"] = "NVIDIA H200 NVL"
    assert finance.gpu_names(read_decision(changed))[config["id"]] == "NVIDIA H200 NVL"  # measured, before the grid
    changed["experiments"][0]["package"]["model_name"] = "H200 SXM (tariff)"
    assert finance.gpu_names(read_decision(changed))[config["id"]] == "H200 SXM (tariff)"
    changed["experiments"][0]["package"]["model_name"] = None
    config["measurement"]["environment"]["gpu_name"] = None
    assert finance.gpu_names(read_decision(changed))[config["id"]] == "NVIDIA H200"  # the grid's gpu_model
    config["environment"]["gpu_model"] = None
    assert finance.gpu_names(read_decision(changed))[config["id"]] == "h200"  # no file names it


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_example_note_names_no_gpu_by_its_slug(example: dict[str, Any], lang: str) -> None:
    text = words(render_html(example, language=lang))
    assert "rtx-4090" not in text
    assert "NVIDIA GeForce RTX 4090 lot" in text  # the experiment's description (inputs/make_example.py)


# --- code only in the technical appendix ------------------------------------------------------------------------


@pytest.mark.parametrize(("lang", "covers", "fixed"), [
    ("en", "The timer covers reading the corpus, tokenization, transfer to the GPU, inference, the predictions "
           "brought back to the host.",
     "Held fixed: precision bfloat16; context of 512 tokens; seed 1234; input order: expected-ids.csv order; "
     "padding: right, to the longest input of the batch; truncation: none needed"),
    ("de", "Der Zeitmesser umfasst Lesen des Korpus, Tokenisierung, Übertragung auf die GPU, Inferenz, Rückholen der "
           "Vorhersagen auf den Host.",
     "Konstant gehalten: Präzision bfloat16; Kontext von 512 Token; Seed 1234; Eingabereihenfolge: expected-ids.csv "
     "order; Auffüllen (Padding): right")])
def test_code_is_only_in_the_technical_appendix(example: dict[str, Any], lang: str, covers: str, fixed: str) -> None:
    reader, appendix = parts(render_html(example, language=lang), lang)
    assert covers in reader and fixed in reader
    for code in ("torch.cuda.synchronize()", "read_corpus", "materialize_predictions", "model_revision",
                 "corpus_revision =", "precision = ", "context = "):
        assert code not in reader, code
        assert code in appendix, code
    assert "synthetic-classifier-r1" in appendix  # the revisions, as written


@pytest.mark.parametrize("lang", ["en", "de"])
def test_a_warning_on_page_one_says_the_metric_direction_in_words(minilm: dict[str, Any], lang: str) -> None:
    body = render_html(minilm, language=lang)
    page_one = words(body.split('<div class="answer">')[0])
    assert "(higher is better: a lower threshold accepts worse runs)" in page_one
    assert "higher_is_better" not in page_one


# --- no "Errors (0) None." --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("lang", "none_found", "warnings"), [
    ("en", ["No error finding.", "No finding for information."], "Warnings (1)"),
    ("de", ["Kein Fehlerbefund.", "Kein Befund zur Information."], "Warnungen (1)")])
def test_an_empty_severity_is_one_sentence(example: dict[str, Any], lang: str, none_found: list[str],
                                           warnings: str) -> None:
    reader, _ = parts(render_html(example, language=lang), lang)
    findings = reader.split("Findings" if lang == "en" else "Befunde")[-1]
    assert all(sentence in findings for sentence in none_found)
    assert warnings in findings
    assert "(0)" not in findings and "None." not in findings and "Keine." not in findings


# --- plurals and sentences where a table would show dashes ------------------------------------------------------


@pytest.mark.parametrize(("lang", "idle"), [
    ("en", "B200 (b200-batch): 2 GPUs were paid for (2 x 1 GPU per lot), but its runs used 1."),
    ("de", "B200 (b200-batch): 2 GPUs wurden bezahlt (2 × 1 GPU pro Los), aber seine Durchläufe verwendeten 1.")])
def test_gpus_paid_for_take_their_plural_from_the_count(example: dict[str, Any], lang: str, idle: str) -> None:
    two_lots = copy.deepcopy(example)
    package = two_lots["experiments"][1]["package"]
    package.update(lots=2, gpus_per_lot=1, gpus=2)
    assert idle in words(render_html(two_lots, language=lang))
    assert "1 GPUs" not in words(render_html(two_lots, language=lang))


@pytest.mark.parametrize(("lang", "sentence"), [
    ("en", "not in the tariffs: how many GPUs a lot holds, its price and the amount committed are unknown"),
    ("de", "nicht in den Tarifen: wie viele GPUs ein Los umfasst, sein Preis und der gebundene Betrag sind unbekannt")])
def test_a_package_without_a_tariff_is_a_sentence_not_dashes(minilm: dict[str, Any], lang: str,
                                                              sentence: str) -> None:
    body = render_html(minilm, language=lang)
    packages = table(body, ">GPU<")
    assert packages.count(f'<td colspan="4">{html.escape(sentence, quote=False)}</td>') == 2
    assert f">{DASH}<" not in packages


# --- an improvement said as one ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("lang", "better", "worse"), [
    ("en", "0.0327 better than the reference", "0.0124"),
    ("de", "0,0327 besser als die Referenz", "0,0124")])
def test_a_negative_degradation_is_said_as_an_improvement(example: dict[str, Any], lang: str, better: str,
                                                          worse: str) -> None:
    subgroups = table(render_html(example, language=lang), "subgroup" if lang == "en" else "Untergruppe")
    assert f'<td class="num wrap">{better}</td>' in subgroups  # its words wrap in the column, never overflow it
    assert f'<td class="num wrap">{worse}</td>' in subgroups  # a degradation stays a figure
    assert "-0," not in subgroups and "-0." not in subgroups


@pytest.mark.parametrize(("value", "expected"), [
    (-0.0327, "0.0327 better than the reference"), (0.0124, "0.0124"), (0, "0.0000"), (0.0, "0.0000"),
    (-0.00004, "0.0000"),  # rounds to no change: neither better nor "-0.0000"
    (-0.0001, "0.0001 better than the reference"), (None, DASH)])
def test_degradation_words(value: float | None, expected: str) -> None:
    assert degradation(value) == expected


# --- the protocol's values and the labels around the registered text, in the reader's language ------------------


@pytest.mark.parametrize(("lang", "rotated", "drawn", "unregistered"), [
    ("en", "order: rotated.", "order: drawn in advance.", "order: not registered."),
    ("de", "Reihenfolge: abwechselnd.", "Reihenfolge: im Voraus gezogen.", "Reihenfolge: nicht festgelegt."),
    ("fr", "ordre : alterné.", "ordre : tiré à l'avance.", "ordre : non enregistré."),  # words(): one space
    ("zh", "顺序：交替。", "顺序：事先抽定。", "顺序：未登记。")])
def test_the_run_order_is_in_the_readers_language(example: dict[str, Any], lang: str, rotated: str, drawn: str,
                                                  unregistered: str) -> None:
    text = words(render_html(example, language=lang))
    assert text.count(rotated) == 2
    if lang != "en":
        assert "rotated" not in text
    other = copy.deepcopy(example)
    other["experiments"][0]["order"], other["experiments"][1]["order"] = "drawn", None
    text = words(render_html(other, language=lang))
    assert drawn in text and unregistered in text


@pytest.mark.parametrize(("lang", "batch", "precision"), [
    ("en", "Experiment minilm-batch: the declared variable is the batch size",
     "Experiment minilm-precision: the declared variable is the precision"),
    ("de", "Experiment minilm-batch: Die deklarierte Variable ist die Batchgröße",
     "Experiment minilm-precision: Die deklarierte Variable ist die Präzision")])
def test_the_declared_variable_is_named_in_words(minilm: dict[str, Any], lang: str, batch: str,
                                                 precision: str) -> None:
    text = words(render_html(minilm, language=lang))
    assert batch in text and precision in text


@pytest.mark.parametrize(("lang", "labels"), [
    ("en", ["<strong>Signature and how to check it:</strong>", "<strong>Registration:</strong>",
            "<strong>Warnings (10):</strong>"]),
    ("fr", ["<strong>Signature et vérification\u00a0:</strong>", "<strong>Enregistrement\u00a0:</strong>",
            "<strong>Avertissements (10)\u00a0:</strong>"]),
    ("zh", ["<strong>签名及其校验方法：</strong>", "<strong>登记：</strong>", "<strong>警告（10）：</strong>"])])
def test_the_labels_around_the_registered_title_and_question_are_the_readers(
        minilm: dict[str, Any], lang: str, labels: list[str]) -> None:
    head = render_html(minilm, language=lang).split('<div class="answer">')[0]
    for label in labels:
        assert label in head, label
    assert json.dumps(minilm["campaign"]["question"])[1:-1] in head  # the question itself stays as registered
