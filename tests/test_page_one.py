"""Page 1 for the reader who pays: the signer named in words, and every warning under the banner (issue 37, item 1)."""

from __future__ import annotations

import copy
import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from generator.audit.check import check_campaign
from generator.render.page.note import render_html
from generator.render.view import view
from generator.render.view.finance import Signature

REPO = Path(__file__).resolve().parents[1]
FINGERPRINT = "ab" * 32


@pytest.fixture(scope="module")
def h200() -> dict[str, Any]:
    return check_campaign(REPO / "inputs" / "h200-campaign").decision


def page_one(body: str) -> str:
    """The text before the answer: the title, the banners and the signature (white space, no-break spaces
    included, read as one space)."""
    head = body.split("<body>")[1].split('<div class="answer">')[0]
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", head)).split())


@pytest.mark.parametrize(("lang", "signed_by", "subject"), [
    ("en", "Signed by Acme GmbH (PAdES", "Certificate subject: O=Acme GmbH,CN=build server"),
    ("de", "Signiert von Acme GmbH (PAdES", "Inhaber laut Zertifikat: O=Acme GmbH,CN=build server"),
    ("fr", "Signée par Acme GmbH (certification", "Titulaire selon le certificat : O=Acme GmbH,CN=build server"),
    ("zh", "由 Acme GmbH 签名", "证书主体：O=Acme GmbH,CN=build server")])
def test_the_signer_is_named_by_its_organisation_and_the_subject_is_in_the_details(
        h200: dict[str, Any], lang: str, signed_by: str, subject: str) -> None:
    signature = Signature("certified", "O=Acme GmbH,CN=build server", FINGERPRINT, "Acme GmbH")
    text = page_one(render_html(h200, signature=signature, language=lang))
    assert signed_by in text and subject in text
    assert "O=Acme GmbH,CN=build server" not in text.split(subject)[0]  # the certificate's syntax only as detail


def test_a_built_note_names_the_organisation_of_its_certificate(example_bundle: Path) -> None:
    text = page_one((example_bundle / "data" / "decision-note.html").read_text(encoding="utf-8"))
    assert "Signed by Example Org (PAdES" in text and "Certificate subject: O=Example Org,CN=Example Org" in text


def test_every_warning_is_on_page_one(h200: dict[str, Any]) -> None:
    text = page_one(render_html(h200))
    assert "Warnings (4):" in text
    # the fifth, registration-not-sealed, is said once, in the reader's language, by the registration banner
    assert "Registration: declared, not sealed" in text and "registration-not-sealed (" not in text
    assert "reference-origin-unregistered (protocol.json): the reference value 0.830808" in text
    assert "package-longer-than-needed (protocol.json): the 7-day package (168 h) was rented" in text
    assert "reproduction-not-registered (protocol.json): the protocol registers no reproduction target" in text
    assert "no-tariff (tarifs-forfaits.csv): no tariff for h200 over 7 days" in text


def test_warnings_beyond_the_first_few_are_counted_on_page_one(h200: dict[str, Any]) -> None:
    many = copy.deepcopy(h200)
    # registration-not-sealed is said by the registration banner, never in this list (issue 48)
    many["findings"] = [f for f in many["findings"] if f["code"] != "registration-not-sealed"]
    extra = view.WARNINGS_ON_PAGE_ONE + 2 - len(many["findings"])
    many["findings"] += [dict(many["findings"][-1], message=f"copy {k}") for k in range(extra)]
    many["finding_counts"]["warning"] = len(many["findings"])
    text = page_one(render_html(many))
    assert f"Warnings ({view.WARNINGS_ON_PAGE_ONE + 2}):" in text
    # listed first: protocol.json's (registration-not-sealed left out above)
    others = sum(f["code"] != "no-tariff" for f in h200["findings"] if f["code"] != "registration-not-sealed")
    assert text.count("no-tariff (") == view.WARNINGS_ON_PAGE_ONE - others
    assert '2 more are listed under "Findings".' in text


def test_a_note_without_warnings_lists_none_on_page_one(example_decision: Path) -> None:
    text = page_one(render_html(json.loads(example_decision.read_text(encoding="utf-8"))))
    assert "Warnings (" not in text


@pytest.mark.parametrize(("lang", "answer", "other"), [
    ("en", "Answer: GeForce RTX 4090, batch 4", "same budget as GeForce RTX 4090, batch 1 (rtx4090-batch/b1)"),
    ("de", "Antwort: GeForce RTX 4090, Batchgröße 4", "GeForce RTX 4090, Batchgröße 1 (rtx4090-batch/b1)"),
    ("zh", "答案：GeForce RTX 4090，批大小 4", "它与 GeForce RTX 4090，批大小 1（rtx4090-batch/b1）")])
def test_configurations_on_page_one_are_named_by_gpu_and_setting_with_their_id_beside(
        example_decision: Path, lang: str, answer: str, other: str) -> None:
    body = render_html(json.loads(example_decision.read_text(encoding="utf-8")), language=lang)
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body.split("<body>")[1].split("<section>")[1])).split())
    assert answer in text and "rtx4090-batch/b4" in text and other in text
    assert "batch = 4" not in text and "rtx-4090)" not in text


def test_the_tables_name_configurations_by_gpu_and_setting_with_the_id_in_small_print(example_decision: Path) -> None:
    """Past page 1 too: the ranking, the list of all configurations and the timing table (issue 37, item 1)."""
    body = render_html(json.loads(example_decision.read_text(encoding="utf-8")), language="de")
    cell = ('<td>GeForce RTX 4090, <span class="whole">Batchgröße 4</span><br>'
            '<span class="small cid">rtx4090-batch/b4</span></td>')
    tables = [t for t in body.split("<table") if cell in t]
    assert len(tables) == 3  # ranking, all configurations, timing
    assert "<td>rtx4090-batch/b4</td>" not in "".join(tables)
    assert "<strong>GeForce RTX 4090, Batchgröße 8 (rtx4090-batch/b8)</strong>:" in body  # excluded


def test_a_gpu_without_a_catalogue_name_is_labelled_by_the_name_the_runtime_reported(h200: dict[str, Any]) -> None:
    """The H200 has no tariff, so no catalogue model name: the label takes the measured "NVIDIA H200", not the
    rental's ID "h200"."""
    body = render_html(h200)
    assert '<td>NVIDIA H200, <span class="whole">batch 1</span><br><span class="small cid">h200-batch/b1</span>' \
        in body
    assert "h200, batch" not in body


@pytest.mark.parametrize(("lang", "words"), [("en", "Test run: no decision"), ("de", "Testlauf: keine Entscheidung"),
                                             ("fr", "Exécution de test : aucune décision"),
                                             ("zh", "测试运行：不作决定")])
def test_a_campaign_of_test_runs_says_no_decision_on_page_one(h200: dict[str, Any], lang: str, words: str) -> None:
    # issue 47 item 2: every configuration rests on a test run (campaign run --allow-cpu-for-tests)
    decision = copy.deepcopy(h200)
    for c in decision["configurations"]:
        c["test_run"] = True
    body = render_html(decision, language=lang)
    assert words in page_one(body)
    answer = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body.split('<div class="answer">')[1])).split())
    assert answer.startswith(words)  # the headline, where an answer would stand
    assert 'class="big test-run-title"' in body


def test_a_campaign_with_one_real_configuration_is_no_test_run(h200: dict[str, Any]) -> None:
    decision = copy.deepcopy(h200)
    decision["configurations"][0]["test_run"] = True
    assert "Test run" not in render_html(decision)
    assert "Test run" not in render_html(h200)
