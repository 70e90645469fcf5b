"""One rental, several series (issue 49 item 3): a MiniLM-style campaign whose batch and precision series ran in one
3-day H200 rental commits one package, its invoice for one package reconciles, and the note says so.

The campaign is a copy of inputs/minilm-campaign (never edited itself) with an H200 price added to its tariffs (a
test figure, stated as a provider's quote) and, for the shared rental, its two experiments naming one rental of
`rentals`. The seed rules of the new findings are in tests/seed_rules_rentals.py.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from invoices import Invoice, Line, cii_xml

from generator.audit.check import CheckResult, check_campaign
from generator.invoice.check import committed_packages, committed_total, reconcile
from generator.invoice.read import read_invoice
from generator.render.page.note import render_html

MINILM = Path(__file__).resolve().parents[1] / "inputs" / "minilm-campaign"
EXPERIMENTS = ["minilm-batch", "minilm-precision"]
RENTAL = {"id": "h200-3d", "gpu": "h200", "duration_days": 3, "lots": 1}
QUOTE = "TEST quote Q-49 of 2026-12-01 (test figure)"
PRICE = 30000  # cents for a 3-day H200 lot: a test figure, not a provider's
ONE_PACKAGE = [Line("h200", 3, Decimal("1"), Decimal("300.00"), name="IteraGPU H200, 3-day package")]


def _protocol(folder: Path, change: Any) -> None:
    path = folder / "protocol.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _share(doc: dict[str, Any]) -> None:
    doc["rentals"] = [dict(RENTAL)]
    for exp in doc["experiments"]:
        exp["rental"] = RENTAL["id"]


def _copy(base: Path, *, priced: bool = True, shared: bool = True) -> Path:
    """inputs/minilm-campaign copied, with the H200 price added and its two series in one rental, as asked."""
    folder = base / "campaign"
    shutil.copytree(MINILM, folder)
    if priced:
        tariffs = folder / "tarifs-forfaits.csv"
        header, *rows = tariffs.read_text(encoding="utf-8").splitlines()
        tariffs.write_text("\n".join([header + ",source", *(r + "," for r in rows),
                                      f"h200,H200,3,{PRICE},1,2026-12-01,published,{QUOTE}"]) + "\n", encoding="utf-8")
    if shared:
        _protocol(folder, _share)
    return folder


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> CheckResult:
    return check_campaign(_copy(tmp_path_factory.mktemp("shared")))


@pytest.fixture(scope="module")
def apart(tmp_path_factory: pytest.TempPathFactory) -> CheckResult:
    """The shipped campaign's shape: each series its own 3-day rental, with the H200 price added."""
    return check_campaign(_copy(tmp_path_factory.mktemp("apart"), shared=False))


def _codes(result: CheckResult, severity: str = "error") -> list[str]:
    return [f.code for f in result.findings if f.severity.value == severity]


def test_one_rental_two_series_commits_one_package(shared: CheckResult) -> None:
    d = shared.decision
    assert _codes(shared) == []
    assert d["campaign"]["rentals"] == [{"id": "h200-3d", "experiments": EXPERIMENTS}]
    assert [e["package"]["rental"] for e in d["experiments"]] == ["h200-3d", "h200-3d"]
    committed = committed_packages(d)
    assert [(c.gpu, c.days, c.lots, c.total_usd_minor, c.experiments) for c in committed] == [
        ("h200", 3, 1, PRICE, tuple(EXPERIMENTS))]
    assert committed_total(committed) == PRICE
    # every configuration is compared at the rental's whole budget: they tie on it, the time orders them
    assert {c["committed_budget_usd_minor"] for c in d["configurations"]} == {PRICE}
    assert d["decision"]["status"] == "answered"
    assert d["decision"]["ranking"][0]["configuration"] == d["decision"]["answer"]
    assert [e["warm_median_seconds"] for e in d["decision"]["ranking"]] == sorted(
        e["warm_median_seconds"] for e in d["decision"]["ranking"])


def test_two_own_rentals_commit_two_packages_as_before(apart: CheckResult) -> None:
    committed = committed_packages(apart.decision)
    assert [(c.lots, c.total_usd_minor) for c in committed] == [(2, 2 * PRICE)]
    assert "rentals" not in apart.decision["campaign"]
    assert all("rental" not in e["package"] for e in apart.decision["experiments"])


def test_an_invoice_for_the_one_package_reconciles(tmp_path: Path, shared: CheckResult, apart: CheckResult) -> None:
    xml = tmp_path / "invoice.xml"
    xml.write_bytes(cii_xml(Invoice(ONE_PACKAGE)))
    invoice = read_invoice(xml)
    assert reconcile(invoice, committed_packages(shared.decision)) == []
    # registered as two rentals, the same invoice bills one lot of two: the lots-differ and total-differs
    assert {f.code for f in reconcile(invoice, committed_packages(apart.decision))} == {"lots-differ",
                                                                                        "total-differs"}


def _text(decision: dict[str, Any], language: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", render_html(decision, language=language))).split())


SAID = {
    "en": ("minilm-batch, minilm-precision ran in one rental, h200-3d: each of their configurations is compared at "
           "that rental's whole budget, USD 300.00, so they tie on budget and the median warm time decides",
           "rental h200-3d: minilm-batch, minilm-precision",
           "USD 300.00 for its one package"),
    "de": ("liefen in einer Anmietung, h200-3d: Jede ihrer Konfigurationen wird mit dem ganzen Budget",
           "Anmietung h200-3d: minilm-batch, minilm-precision", "für ihr einziges Paket"),
    "fr": ("ont été exécutées dans une même location, h200-3d : chacune de leurs configurations est comparée",
           "location h200-3d : minilm-batch, minilm-precision", "pour son seul forfait"),
    "zh": ("在同一次租用 h200-3d 中运行：它们的每个配置都按该租用的全部预算",
           "租用 h200-3d：minilm-batch，minilm-precision", "套餐只承诺一次"),
}


@pytest.mark.parametrize("language", sorted(SAID))
def test_page_one_and_the_finance_page_name_the_rental_once(shared: CheckResult, language: str) -> None:
    text = _text(shared.decision, language)
    for words in SAID[language]:
        assert words in text, (words, text[:3000])


def test_a_shared_rental_without_a_price_is_said_once_for_all_its_configurations(tmp_path: Path) -> None:
    result = check_campaign(_copy(tmp_path, priced=False))
    unpriced = [f for f in result.findings if f.code == "no-tariff"]
    assert len(unpriced) == 1, unpriced  # the shipped campaign, two own rentals, says it twice
    assert len(unpriced[0].configurations) == 7
    assert _codes(result) == []


def _overlap_planted(folder: Path) -> None:
    """Batch 1's warm-up moved to start while the float16 variant's cold run of the precision series runs."""
    path = folder / "measurements" / "minilm-batch-b1.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    warmup = next(p for p in doc["phases"] if p["phase"] == "warmup")
    assert warmup["started_at"] == "2026-12-03T12:56:52.959743Z"
    warmup["started_at"] = "2026-12-03T12:56:42.000000Z"  # fp16's cold_forward ran 12:56:38.38 to 12:56:43.57
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


@pytest.mark.parametrize("share", [True, False], ids=["one-rental", "two-rentals"])
def test_two_series_in_one_rental_do_not_run_at_once(tmp_path: Path, share: bool) -> None:
    folder = _copy(tmp_path, shared=share)
    _overlap_planted(folder)
    found = [f for f in check_campaign(folder).findings if f.code == "runs-overlap"]
    if not share:
        assert found == []  # two rentals: two GPUs, runs at once are allowed
        return
    assert {f.file for f in found} == {"measurements/minilm-batch-b1.json", "measurements/minilm-precision-fp16.json"}
    assert all("same device (cuda:0, rental h200-3d)" in f.message for f in found), found


def test_an_unknown_rental_names_the_field_the_value_and_the_ids_listed(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    _protocol(folder, lambda doc: doc["experiments"][1].update(rental="h200-3days"))
    result = check_campaign(folder)
    (f,) = [f for f in result.findings if f.is_error]
    assert (f.code, f.file, f.field, f.claimed) == ("rental-unknown", "protocol.json", "/experiments/1/rental",
                                                    "h200-3days")
    assert "rentals listed: 'h200-3d'" in f.message and '"id": "h200-3days"' in (f.fix or "")
    assert result.decision["decision"]["status"] == "withheld"


def test_an_experiments_own_rental_has_no_id(tmp_path: Path) -> None:
    folder = _copy(tmp_path, shared=False)
    _protocol(folder, lambda doc: doc["experiments"][0]["rental"].update(id="h200-3d"))
    found = [(f.code, f.field) for f in check_campaign(folder).findings if f.is_error]
    assert found == [("schema-violation", "/experiments/0/rental/id")]


def test_a_shared_rentals_own_rules_point_at_its_entry_and_its_configurations(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    _protocol(folder, lambda doc: doc["rentals"][0].update(periods=[3, 3], duration_days=7))
    result = check_campaign(folder)
    (f,) = [f for f in result.findings if f.code == "rental-periods-mismatch"]
    assert f.field == "/rentals/0/duration_days" and "the rental 'h200-3d'" in f.message
    assert len(f.configurations) == 7 and not f.shared_input
