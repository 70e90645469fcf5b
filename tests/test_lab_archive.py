"""Issue 47, item 5: a price the campaign's own files vouch for is stated, not authenticated; the Lab archive's
manifest and tariffs are held to the structure the seeds give (nine items, 15 models x 3 durations). The prices
here are test figures; only the structure is the seeds'."""

from __future__ import annotations

import hashlib
import html
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, CliResult
from seed_rules_prices import LAB_HEADER, SPOT, lab_manifest_items, lab_tariff_rows

from generator.audit.check import check_campaign
from generator.audit.load.labmanifest import list_items
from generator.audit.validate.labarchive import manifest_structure_findings, tariffs_structure_findings
from generator.render.page.note import render_html

H200 = REPO / "inputs" / "h200-campaign"
MANIFEST = "MANIFEST.json"
STATED = ("provider price as stated in this campaign (its tariffs file, listed by the Lab MANIFEST.json it carries; "
          "2026-11-30), not authenticated: only gpu-audit invoice check against the provider's invoice confirms it")


def _structure(document: Any) -> list[tuple[str | None, object]]:
    return [(f.field, f.claimed) for f in manifest_structure_findings(list_items(document), MANIFEST)]


NINE = lab_manifest_items(b"tariffs")


# ------------------------------------------------------------------------------------ the manifest's nine items


@pytest.mark.parametrize("document", [
    {"archive": "iteragpu-lab-v1", "files": NINE},
    # the items as keys, the manifest itself as null; names listed apart from their digests
    {"name": "IteraGPU Lab v1", "files": {i["path"].split("/")[-1]: {k: v for k, v in i.items() if k != "path"}
                                          for i in NINE[:8]} | {"MANIFEST.json": None}},
    {"items": [{"name": i["path"]} for i in NINE], "digests": NINE[:8]},
    {"files": [*NINE, dict(NINE[0])]},  # an item listed twice, alike, is one item
])
def test_the_nine_items_with_the_eight_checksums_are_the_labs_structure(document: Any) -> None:
    assert _structure(document) == []


@pytest.mark.parametrize(("items", "expected"), [
    ([NINE[6]], [("/files", "1 item")]),  # the one-entry manifest of issue 47
    (NINE[1:], [("/files", "8 items")]),  # 8 items: the README missing
    (NINE[:8], [("/files", "8 items")]),  # 8 items: no entry of itself
    ([*NINE, {"path": "iteragpu-lab-v1/extra.csv", "size": 1, "sha256": "0" * 64}],
     [("/files/9", "extra.csv")]),  # 10 items
    ([*NINE, {**NINE[0], "path": "iteragpu-lab-v1/readme.txt"}], [("/files/9", "readme.txt")]),  # a second README
    ([*NINE[:8], {**NINE[8], "sha256": "a" * 64}], [("/files/8/sha256", '"' + "a" * 64 + '"')]),  # its own checksum
    ([*NINE[:7], {"path": "LICENSE.txt", "size": 1}, NINE[8]], [("/files/7", "no SHA-256")]),
    ([{**NINE[0], "size": "1000"}, *NINE[1:]], [("/files/0/size", '"1000"')]),
    ([{**NINE[0], "size": True}, *NINE[1:]], [("/files/0/size", "true")]),
    ([{**NINE[0], "sha256": "a" * 63}, *NINE[1:]], [("/files/0/sha256", '"' + "a" * 63 + '"')]),
    ([*NINE, {**NINE[1], "size": 7}], [("/files/9", "twice, differently")]),  # a content file twice, differently
])
def test_each_departure_from_the_nine_items_is_named_with_its_pointer(items: list[Any],
                                                                     expected: list[tuple[str, object]]) -> None:
    assert _structure({"files": items}) == expected


def test_the_missing_items_are_named() -> None:
    [finding] = manifest_structure_findings(list_items({"files": [NINE[6]]}), "lab/MANIFEST.json")
    assert finding.code == "lab-manifest-structure" and finding.file == "lab/MANIFEST.json"
    assert finding.message == ("lab/MANIFEST.json lists 1 of the Lab archive's nine items; missing: README, "
                               "mesure-memoire.ipynb, mesure_memoire.py, protocole-qualite.md, resultats-bruts.csv, "
                               "calcul_forfaits.py, LICENSE.txt, MANIFEST.json")


# --------------------------------------------------------------------------- the Lab's tariffs: 15 models x 3


def _keys(rows: list[str]) -> list[tuple[str, int, int]]:
    return [(r.split(",")[0], int(r.split(",")[2]), line) for line, r in enumerate(rows, start=2)]


def test_the_labs_45_prices_have_its_structure() -> None:
    assert len(lab_tariff_rows()) == 45 and tariffs_structure_findings(_keys(lab_tariff_rows()), "t.csv") == []


@pytest.mark.parametrize(("rows", "expected"), [
    (lab_tariff_rows()[:-1], [(44, "gpu", "3, 7")]),  # 44 rows: test-gpu-12 has no 30-day price
    ([*lab_tariff_rows(), "test-gpu-01,Test GPU 01,14,1,1,2026-11-30,published"],
     [(47, "duration_days", 14)]),  # 46 rows: a duration the Lab does not sell
    ([*lab_tariff_rows(), "test-gpu-13,Test GPU 13,7,1,1,2026-11-30,published"],
     [(None, "gpu", "16 models"), (47, "gpu", "7")]),  # 46 rows: a 16th model
    ([r for r in lab_tariff_rows() if not r.startswith("test-gpu-12,")], [(None, "gpu", "14 models")]),  # 42 rows
])
def test_a_missing_or_extra_row_is_named(rows: list[str], expected: list[tuple[int | None, str, object]]) -> None:
    found = tariffs_structure_findings(_keys(rows), "tarifs-forfaits.csv")
    assert [(f.line, f.field, f.claimed) for f in found] == expected
    assert {f.code for f in found} == {"lab-tariffs-structure"}


# ----------------------------------------------------------------- the price each way, in a copy of the H200 run


def _h200_lab(tmp_path: Path, rows: list[str], items: Callable[[bytes], list[Any]] | None) -> Path:
    """A copy of the H200 campaign whose tariffs file is `rows` (the Lab's columns, no source), with a
    MANIFEST.json of `items(tariffs bytes)` named in its protocol (None: no manifest)."""
    folder = tmp_path / "h200"
    shutil.copytree(H200, folder)
    tariffs = folder / "tarifs-forfaits.csv"
    tariffs.write_text("\n".join([LAB_HEADER, *rows]) + "\n", encoding="utf-8")
    if items is not None:
        (folder / MANIFEST).write_text(json.dumps({"files": items(tariffs.read_bytes())}, indent=2), encoding="utf-8")
        protocol = json.loads((folder / "protocol.json").read_text(encoding="utf-8"))
        protocol["files"]["lab_manifest"] = MANIFEST
        (folder / "protocol.json").write_text(json.dumps(protocol, indent=2), encoding="utf-8")
    return folder


def _says_proven(text: str) -> bool:
    """Whether a line about the price or the Lab manifest calls it proven (the seal's warning may say what a seal
    proves: that is not about the price)."""
    return any("proven" in line for line in text.splitlines() if "price" in line or "MANIFEST" in line)


def _h200_rows() -> list[str]:
    """The Lab-shaped tariffs with the spot lot's three prices made the H200's (7 days: 5000 cents)."""
    return [re.sub(rf"^{SPOT},B200,(\d+),(\d+),2,", r"h200,H200,\1,\2,1,", r) for r in lab_tariff_rows()]


def test_a_one_entry_manifest_written_by_the_user_supports_no_price(tmp_path: Path,
                                                                    run_cli: Callable[..., CliResult]) -> None:
    # issue 47: a MANIFEST.json of one entry, written for the tariffs, "proved" an invented H200 price at 10 USD
    rows = [*lab_tariff_rows()[:2], "h200,H200,7,1000,1,2026-11-30,published"]
    folder = _h200_lab(tmp_path, rows, lambda data: [{"path": "tarifs-forfaits.csv", "size": len(data),
                                                      "sha256": hashlib.sha256(data).hexdigest()}])
    result = check_campaign(folder)
    errors = {(f.code, f.file, f.line, f.field) for f in result.errors}
    assert ("lab-manifest-structure", MANIFEST, None, "/files") in errors
    assert ("lab-tariffs-structure", "tarifs-forfaits.csv", None, "gpu") in errors
    assert ("tariff-not-catalogue", "tarifs-forfaits.csv", 4, "source") in errors  # no support is left
    assert result.decision["decision"]["status"] == "withheld" and result.decision["decision"]["answer"] is None
    assert result.decision["experiments"][0]["package"]["price_source"] is None
    out = run_cli("check", str(folder))
    assert out.code == 1 and not _says_proven(out.out + out.err)
    assert "the Lab manifest named supports nothing (lab-manifest-structure)" in out.out


def test_a_lab_manifest_price_is_the_providers_as_stated_not_authenticated(tmp_path: Path,
                                                                           run_cli: Callable[..., CliResult]) -> None:
    folder = _h200_lab(tmp_path, _h200_rows(), lab_manifest_items)
    result = check_campaign(folder)
    assert not result.errors, [f.code for f in result.errors]
    package = result.decision["experiments"][0]["package"]
    assert (package["price_source"], package["price_source_detail"]) == ("provider", "lab-manifest")
    assert result.decision["decision"]["status"] == "answered"
    out = run_cli("check", str(folder))
    assert out.code == 0 and f"price: {STATED}" in out.out and not _says_proven(out.out)


def test_the_same_price_without_the_manifest_needs_its_source(tmp_path: Path) -> None:
    # the Lab's structure alone (no manifest named) supports nothing; a campaign's own file needs no 45 rows
    result = check_campaign(_h200_lab(tmp_path, _h200_rows()[:3], None))
    assert {(f.code, f.line, f.field) for f in result.errors} == {("tariff-not-catalogue", 4, "source")}


def test_nine_items_with_the_tariffs_size_off_by_one_byte(tmp_path: Path) -> None:
    def items(data: bytes) -> list[Any]:
        listed = lab_manifest_items(data)
        listed[6]["size"] += 1
        return listed
    result = check_campaign(_h200_lab(tmp_path, _h200_rows(), items))
    assert {(f.code, f.file, f.field) for f in result.errors} >= {("tariffs-not-in-manifest", "tarifs-forfaits.csv",
                                                                   "size")}
    assert result.decision["decision"]["status"] == "withheld"


# ------------------------------------------------------------------------------------------ the note's words

NOTE_WORDS = {  # the stated price (page 1 and the packages table), the confirmation, and the old word never shown
    "en": ("provider price as stated in this campaign (its tariffs file, listed by the Lab MANIFEST.json it carries;",
           "Only gpu-audit invoice check against the provider's invoice confirms it.", "proven by"),
    "de": ("Anbieterpreis laut Angabe dieser Kampagne (ihre Tariftabelle",
           "Nur gpu-audit invoice check anhand der Rechnung des Anbieters bestätigt ihn.", "belegt durch das MANIFEST"),
    "fr": ("prix du fournisseur tel que déclaré dans cette campagne (son fichier",
           "Seul gpu-audit invoice check le confirme sur la facture du fournisseur.", "prouvé par le MANIFEST"),
    "zh": ("本测试活动自行声明的供应商价格（其价目文件",
           "只有 gpu-audit invoice check 根据供应商的发票核对后才能确认此价格。", "MANIFEST.json 证明"),
}


@pytest.fixture(scope="module")
def stated_decision(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = _h200_lab(tmp_path_factory.mktemp("stated"), _h200_rows(), lab_manifest_items)
    return check_campaign(folder).decision


@pytest.mark.parametrize("lang", sorted(NOTE_WORDS))
def test_the_note_says_stated_not_authenticated_and_names_the_confirmation(stated_decision: dict[str, Any],
                                                                           lang: str) -> None:
    stated, confirmation, never = NOTE_WORDS[lang]
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", render_html(stated_decision, language=lang))).split())
    assert text.count(stated) == 2  # page 1 and the packages table
    assert confirmation in text and never not in text
