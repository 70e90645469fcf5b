"""Issue 47 item 4: the reproduction target by default: applied, recorded in decision.json as the default, warned
about, and shown in the note in every language."""

from __future__ import annotations

import copy
import html
import json
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import EXAMPLE, REPO
from seed_rules import edit_protocol

from generator.audit.check import check_campaign
from generator.audit.load.findings import Finding
from generator.audit.recompute.decision import model
from generator.render.page.note import render_html

DEFAULT_TEXT = {
    "en": "acceptable quality: acceptance alone (the default; not registered in the protocol)",
    "de": "akzeptable fachliche Qualität: nur die Akzeptanz (die Voreinstellung; im Protokoll nicht festgelegt)",
    "fr": "qualité acceptable : l'acceptation seule (la valeur par défaut ; non enregistrée dans le protocole)",
    "zh": "可接受的质量：仅检查验收（默认值；协议中未登记）",
}
REGISTERED_QUALITY = "acceptable quality: acceptance alone"


def _text(body: str) -> str:
    """The note's words, tags removed and every white space (no-break spaces included) read as one space."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def _checked(tmp_path: Path, target: dict[str, Any] | None) -> tuple[dict[str, Any], list[Finding]]:
    """The example checked with `target` as its quality.reproduction (None: left out)."""
    folder = tmp_path / "campaign"
    shutil.copytree(EXAMPLE, folder)
    edit_protocol(folder, lambda p: p["quality"].pop("reproduction") if target is None else
                  p["quality"].update(reproduction=target))
    result = check_campaign(folder)
    return result.decision, result.findings


@pytest.fixture(scope="module")
def unregistered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _checked(tmp_path_factory.mktemp("unregistered"), None)[0]


def test_an_absent_target_is_the_default_recorded_and_warned(tmp_path: Path) -> None:
    decision, findings = _checked(tmp_path, None)
    rule = decision["rule"]
    assert (rule["reproduction"], rule["reproduction_registered"]) == ("quality", False)
    warned = [(f.code, f.severity.value, f.file, f.line, f.field, f.shared_input) for f in findings
              if f.code == "reproduction-not-registered"]
    assert warned == [("reproduction-not-registered", "warning", "protocol.json", None, "/quality/reproduction",
                       "protocol")]
    assert [f for f in findings if f.is_error] == [] and decision["decision"]["answer"] == "rtx4090-batch/b4"
    schema = json.loads((REPO / "schemas" / "decision.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(decision)
    assert model.DecisionDocument.from_json_dict(decision).to_json_dict() == decision


@pytest.mark.parametrize("target", [{"target": "identical"}, {"target": "bounded", "bound": 0.05},
                                   {"target": "quality"}])
def test_a_registered_target_is_recorded_as_registered(tmp_path: Path, target: dict[str, Any]) -> None:
    decision, findings = _checked(tmp_path, target)
    assert decision["rule"]["reproduction"] == target["target"] and decision["rule"]["reproduction_registered"] is True
    assert decision["rule"].get("reproduction_bound") == target.get("bound")
    assert not [f for f in findings if f.code == "reproduction-not-registered"]


@pytest.mark.parametrize("campaign", ["h200-campaign", "minilm-campaign"])
def test_the_registered_campaigns_keep_no_error_under_the_default(campaign: str) -> None:
    # registered before the target was asked for, and never edited: the default holds them to acceptance alone
    result = check_campaign(REPO / "inputs" / campaign)
    assert [f.code for f in result.findings if f.is_error] == []
    assert result.decision["rule"]["reproduction_registered"] is False
    assert "reproduction-not-registered" in {f.code for f in result.findings}


@pytest.mark.parametrize("lang", sorted(DEFAULT_TEXT))
def test_the_note_says_the_default_applied(unregistered: dict[str, Any], lang: str) -> None:
    assert DEFAULT_TEXT[lang] in _text(render_html(unregistered, language=lang))


def test_the_note_says_a_registered_quality_target_as_registered() -> None:
    text = _text(render_html(check_campaign(EXAMPLE).decision))
    assert REGISTERED_QUALITY in text and DEFAULT_TEXT["en"] not in text


def test_a_decision_from_before_the_default_reads_and_shows_it(unregistered: dict[str, Any]) -> None:
    # decision.json written before the default was recorded: no reproduction keys at all (quality applied then too)
    old = copy.deepcopy(unregistered)
    for key in ("reproduction", "reproduction_registered"):
        del old["rule"][key]
    assert DEFAULT_TEXT["en"] in _text(render_html(old))
