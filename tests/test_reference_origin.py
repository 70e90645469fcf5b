"""The reference's origin registered (issue 47 item 4): `quality.reference.source` as a registered split, a
publication or an earlier bundle, its boundaries, and page 1 of the note when the origin is unregistered."""

from __future__ import annotations

import copy
import html
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE
from seed_rules import edit_protocol
from seed_rules_corpora import _second_corpus, _second_texts
from seed_rules_origin import SPLIT_IDS, set_source, unregister

from generator.audit.check import check_campaign
from generator.audit.load.findings import Finding
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.load.schemacheck import validate_document
from generator.audit.validate.reforigin import origin_findings
from generator.render.page.note import render_html

PROTOCOL = json.loads((EXAMPLE / "protocol.json").read_text(encoding="utf-8"))
AT = "/quality/reference"
BUNDLE_ID, SHA = "GA-0123456789ABCDEF", "0123456789abcdef" * 4


def _with(reference: dict[str, Any], splits: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The example's protocol with another reference (name and value kept) and, when given, other splits."""
    data = copy.deepcopy(PROTOCOL)
    data["quality"]["reference"] = {"name": "reference", "value": 0.84, **reference}
    if splits is not None:
        data["splits"] = splits
    return data


def _schema(reference: dict[str, Any]) -> list[tuple[str | None, str]]:
    return [(f.field, f.message) for f in validate_document("protocol", _with(reference), file="protocol.json")]


def _rules(reference: dict[str, Any], splits: list[dict[str, Any]] | None = None) -> list[Finding]:
    data = _with(reference, splits)
    assert _schema(reference) == [] or splits is not None
    return origin_findings(Protocol.of(data))


def _codes(findings: list[Finding]) -> list[tuple[str, str, str | None]]:
    return [(f.code, f.severity.value, f.field) for f in findings]


# ----------------------------------------------------------------------------------- the scenario


def test_a_reference_on_the_tuning_split_with_no_split_registered_is_a_warning_and_the_answer_stays(
        campaign: Path) -> None:
    # Issue 47: "The example's reference is 'on the tuning split' with no split registered, and it passes".
    unregister(campaign)
    assert "on the tuning split" in json.loads((campaign / "protocol.json").read_text())["quality"]["reference"]["name"]
    result = check_campaign(campaign)
    mine = [f for f in result.findings if f.code == "reference-origin-unregistered"]
    assert _codes(mine) == [("reference-origin-unregistered", "warning", AT)]
    assert mine[0].file == "protocol.json" and "quality.reference.source" in (mine[0].fix or "")
    assert [f for f in result.findings if f.is_error] == []  # a warning: campaigns already run keep their registration
    assert result.decision["decision"]["answer"] == "rtx4090-batch/b4"


def _page_one(body: str) -> str:
    head = body.split("<body>")[1].split('<div class="answer">')[0]
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", head)).split())


def _text(body: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


@pytest.fixture(scope="module")
def unregistered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("unregistered") / "campaign"
    shutil.copytree(EXAMPLE, folder)
    unregister(folder)
    return check_campaign(folder).decision


@pytest.mark.parametrize(("lang", "says"), [
    ("en", "The reference's origin is unregistered: the protocol names no split, publication or earlier gpu-audit "
           "bundle that the reference value (0.8400) comes from, so it may include evaluation data."),
    ("de", "Die Herkunft der Referenz ist nicht registriert:"),
    ("fr", "L'origine de la référence n'est pas enregistrée :"),
    ("zh", "参考结果的来源未登记：")])
def test_page_one_says_the_reference_origin_is_unregistered_in_each_language(
        unregistered: dict[str, Any], lang: str, says: str) -> None:
    body = render_html(unregistered, language=lang)
    assert says in _page_one(body)


def test_page_one_of_a_registered_origin_says_nothing_and_the_rule_names_the_split() -> None:
    decision = check_campaign(EXAMPLE).decision
    body = render_html(decision)
    assert "origin is unregistered" not in body
    text = _text(body)
    assert "SYNTHETIC: 0.8400 (measured on the tuning split, kept apart from the corpus)" in text


@pytest.mark.parametrize(("source", "says"), [
    ({"kind": "publication", "citation": "Doe et al. (2025), doi:10.5555/12345678"},
     "0.8400 (taken from a publication: Doe et al. (2025), doi:10.5555/12345678; gpu-audit cannot check"),
    ({"kind": "bundle", "id": BUNDLE_ID, "fingerprint": SHA},
     f"0.8400 (taken from the earlier gpu-audit bundle {BUNDLE_ID}, whose decision.json has the SHA-256 {SHA};")])
def test_the_rule_section_names_a_publication_or_a_bundle(unregistered: dict[str, Any], source: dict[str, Any],
                                                          says: str) -> None:
    decision = copy.deepcopy(unregistered)
    decision["rule"]["reference"]["source"] = source
    body = render_html(decision)
    assert "origin is unregistered" not in _page_one(body)
    assert says in _text(body)


# --------------------------------------------------------------------------------------------- boundaries


def test_a_split_sharing_exactly_one_id_with_the_corpus_is_refused(campaign: Path) -> None:
    assert [f for f in check_campaign(campaign).findings if f.code == "split-overlaps-evaluation"] == []
    first = (campaign / "expected-ids.csv").read_text(encoding="utf-8").split()[1]
    with (campaign / SPLIT_IDS).open("a", encoding="utf-8") as fh:
        fh.write(first + "\n")
    found = [f for f in check_campaign(campaign).findings if f.code == "split-overlaps-evaluation"]
    assert [(f.field, f.recomputed, f.is_error) for f in found] == [("/splits/0/ids", 1, True)]
    assert repr(first) in found[0].message


def test_a_split_is_kept_apart_from_every_corpus_and_its_reference_checked_once(campaign: Path) -> None:
    # The second corpus is the first 300 texts of train.jsonl: a tuning split holding one of them is refused on
    # that corpus; an unregistered split the reference names is one finding, however many corpora there are.
    _second_corpus(campaign)
    with (campaign / SPLIT_IDS).open("a", encoding="utf-8") as fh:
        fh.write(_second_texts()[7][0] + "\n")
    edit_protocol(campaign, lambda p: p["quality"]["reference"].update(split="training"))
    findings = check_campaign(campaign).findings
    overlaps = [f for f in findings if f.code == "split-overlaps-evaluation"]
    assert [(f.field, f.recomputed) for f in overlaps] == [("/splits/0/ids", 1)]
    assert "corpus2/expected-ids.csv" in overlaps[0].message
    assert _codes([f for f in findings if f.code == "reference-split-unknown"]) == [
        ("reference-split-unknown", "error", f"{AT}/split")]


@pytest.mark.parametrize(("citation", "blank"), [
    ("x", False), ("\u00a0", True), (" \u200b\u00a0\t", True), ("\ufeffx", False)])
def test_a_citation_blank_after_trimming_invisible_characters_is_no_citation(citation: str, blank: bool) -> None:
    found = _rules({"source": {"kind": "publication", "citation": citation}})
    assert _codes(found) == ([("reference-citation-blank", "error", f"{AT}/source/citation")] if blank else [])
    if blank:
        assert "<U+00A0>" in found[0].message  # the value as the file writes it, every invisible character named


def test_an_empty_citation_is_refused_by_the_schema() -> None:
    assert _schema({"source": {"kind": "publication", "citation": ""}}) == [
        (f"{AT}/source/citation", "'' should be non-empty")]


@pytest.mark.parametrize(("fingerprint", "ok"), [
    (SHA, True), (SHA[:63], False), (SHA + "0", False), (SHA.upper(), False), ("sha256:" + SHA, False)])
def test_a_bundle_fingerprint_is_64_lower_case_hex_digits(fingerprint: str, ok: bool) -> None:
    errors = _schema({"source": {"kind": "bundle", "id": BUNDLE_ID, "fingerprint": fingerprint}})
    assert [e[0] for e in errors] == ([] if ok else [f"{AT}/source/fingerprint"])


@pytest.mark.parametrize(("bundle", "ok"), [
    (BUNDLE_ID, True), (BUNDLE_ID[:-1], False), (BUNDLE_ID + "0", False), (BUNDLE_ID.lower(), False)])
def test_a_bundle_is_named_by_its_id(bundle: str, ok: bool) -> None:
    errors = _schema({"source": {"kind": "bundle", "id": bundle, "fingerprint": SHA}})
    assert [e[0] for e in errors] == ([] if ok else [f"{AT}/source/id"])


@pytest.mark.parametrize(("source", "message"), [
    ({"kind": "bundle", "id": BUNDLE_ID}, "'fingerprint' is a required property"),
    ({"kind": "publication"}, "'citation' is a required property"),
    ({"kind": "split", "split": "tuning", "citation": "x"}, "Additional properties are not allowed ('citation' was "
                                                            "unexpected)"),
    ({"split": "tuning"}, "'kind' is a required property")])
def test_each_kind_has_its_own_fields(source: dict[str, Any], message: str) -> None:
    assert _schema({"source": source}) == [(f"{AT}/source", message)]


def test_a_split_source_names_a_registered_split() -> None:
    assert _rules({"source": {"kind": "split", "split": "tuning"}}) == []
    found = _rules({"source": {"kind": "split", "split": "training"}})
    assert _codes(found) == [("reference-split-unknown", "error", f"{AT}/source/split")]
    assert "(registered: tuning)" in found[0].message


def test_the_older_split_field_registers_a_split_origin() -> None:
    # A protocol written before `source` existed, with `split`, keeps its registration (and no warning).
    assert _rules({"split": "tuning"}) == []
    assert _rules({"split": "tuning", "source": {"kind": "split", "split": "tuning"}}) == []


@pytest.mark.parametrize("source", [{"kind": "split", "split": "other"},
                                    {"kind": "publication", "citation": "Doe et al. (2025)"}])
def test_split_and_source_naming_two_origins_are_refused(source: dict[str, Any]) -> None:
    other = [{"name": "tuning", "revision": "r1", "ids": SPLIT_IDS},
             {"name": "other", "revision": "r1", "ids": "other-ids.csv"}]
    assert _codes(_rules({"split": "tuning", "source": source}, other)) == [
        ("reference-origin-conflict", "error", f"{AT}/split")]


def test_no_origin_is_a_warning_naming_what_to_add() -> None:
    found = _rules({})
    assert _codes(found) == [("reference-origin-unregistered", "warning", AT)]
    assert all(kind in (found[0].fix or "") for kind in ('"split"', '"publication"', '"bundle"'))


def test_a_registered_source_is_recorded_in_decision_json(campaign: Path) -> None:
    set_source(campaign, {"kind": "bundle", "id": BUNDLE_ID, "fingerprint": SHA})
    result = check_campaign(campaign)
    assert [f for f in result.findings if f.is_error] == []
    assert result.decision["rule"]["reference"]["source"] == {"kind": "bundle", "id": BUNDLE_ID, "fingerprint": SHA}
