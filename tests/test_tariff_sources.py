"""Where a price comes from, end to end: the real H200 campaign answered with a provider's price and its source,
the optional source column, and `cost` applying the same rule as `check`. The H200 price below is a test figure."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO, CliResult

from generator.audit.check import check_campaign
from generator.audit.validate.tariffrules import Price, as_written, price_source, published_catalogue, row_findings

H200 = REPO / "inputs" / "h200-campaign"
HEADER = "gpu,model_name,duration_days,price_per_lot_usd_minor,gpus_per_lot,snapshot_date,price_status"
CATALOGUE = ["rtx-4090,GeForce RTX 4090,7,11000,1,2026-09-24,published", "b200,B200,7,207100,2,2026-09-24,published"]
QUOTE = "TEST quote Q-1 of 2026-11-30 - a test figure"


def _h200(tmp_path: Path, row: str | None, source: str | None = "") -> Path:
    """A copy of the H200 campaign whose tariffs add `row` (an h200 7-day price) with the source column."""
    folder = tmp_path / "h200"
    shutil.copytree(H200, folder)
    lines = [HEADER + ",source", *(c + "," for c in CATALOGUE)]
    if row is not None:
        lines.append(f"{row},{source}")
    (folder / "tarifs-forfaits.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_the_h200_campaign_is_answered_with_a_provider_price_and_its_source(tmp_path: Path) -> None:
    result = check_campaign(_h200(tmp_path, "h200,H200,7,123400,1,2026-11-30,published", QUOTE))
    assert not result.errors
    assert result.decision["decision"]["status"] == "answered"
    package = result.decision["experiments"][0]["package"]
    assert (package["price_source"], package["price_source_detail"]) == ("provider", QUOTE)


def test_an_illustrative_h200_price_stays_unanswerable(tmp_path: Path) -> None:
    result = check_campaign(_h200(tmp_path, "h200,H200,7,123400,1,2026-11-30,illustrative", QUOTE))
    decision = result.decision["decision"]
    assert decision["answer"] is None and decision["status"] == "unanswerable", decision


def test_a_published_h200_price_without_source_is_an_error(tmp_path: Path) -> None:
    result = check_campaign(_h200(tmp_path, "h200,H200,7,123400,1,2026-11-30,published", ""))
    codes = [(f.code, f.file, f.line, f.field) for f in result.errors]
    assert codes == [("tariff-not-catalogue", "tarifs-forfaits.csv", 4, "source")], codes
    assert result.decision["decision"]["status"] == "withheld"


def test_the_tariffs_file_without_the_source_column_is_still_read(tmp_path: Path) -> None:
    folder = _h200(tmp_path, None)
    (folder / "tarifs-forfaits.csv").write_text("\n".join([HEADER, *CATALOGUE]) + "\n", encoding="utf-8")
    assert not [f for f in check_campaign(folder).findings if f.file == "tarifs-forfaits.csv" and f.is_error]


def test_another_extra_column_is_still_unknown(tmp_path: Path) -> None:
    folder = _h200(tmp_path, None)
    (folder / "tarifs-forfaits.csv").write_text(HEADER + ",quote\n", encoding="utf-8")
    codes = {f.code for f in check_campaign(folder).findings if f.file == "tarifs-forfaits.csv"}
    assert "unknown-column" in codes


@pytest.mark.parametrize(("row", "source", "code", "words"), [
    ("h200,H200,7,123400,1,2026-11-30,published", QUOTE, 0,
     f"provider price as stated in the tariffs file (source: {QUOTE}; 2026-11-30), not authenticated: only gpu-audit "
     "invoice check against the provider's invoice confirms it"),
    ("h200,H200,7,123400,1,2026-11-30,published", "", 2, "names no source"),
    ("h200,H200,7,123400,1,2026-11-30,published", "\u00a0\t ", 2, "'<U+00A0><U+0009> ', which names nothing"),
    ("h200,H200,7,123400,1,2026-11-30,illustrative", "", 0, "illustrative, not a price this decision can use"),
])
def test_cost_applies_the_rule_check_applies(tmp_path: Path, run_cli: Callable[..., CliResult], row: str,
                                             source: str, code: int, words: str) -> None:
    tariffs = _h200(tmp_path, row, source) / "tarifs-forfaits.csv"
    result = run_cli("cost", "--gpu", "h200", "--days", "7", "--lots", "1", "--tariffs", str(tariffs))
    assert result.code == code, result
    assert words in result.out + result.err


def test_cost_names_the_catalogue_for_a_catalogue_price(run_cli: Callable[..., CliResult]) -> None:
    result = run_cli("cost", "--gpu", "b200", "--days", "7", "--lots", "2")
    assert result.code == 0
    assert "price: published, catalogue snapshot of 2026-09-24" in result.out


def test_the_h200_campaign_warns_that_a_three_day_package_would_have_covered_its_window(tmp_path: Path) -> None:
    result = check_campaign(_h200(tmp_path, "h200,H200,7,123400,1,2026-11-30,published", QUOTE))
    warned = [f for f in result.findings if f.code == "package-longer-than-needed"]
    assert len(warned) == 1 and warned[0].severity.value == "warning"
    assert "a 3-day package (72 h) covers the 8.3 h window" in warned[0].message
    assert "the difference is unknown" in warned[0].message  # the tariffs price no 3-day H200
    package = result.decision["experiments"][0]["package"]
    assert package["needed_days"] == 3 and "needed_total_usd_minor" not in package  # unknown: left out
    assert result.decision["decision"]["status"] == "answered"  # a warning never gates


def test_the_difference_in_money_when_both_packages_are_priced(tmp_path: Path) -> None:
    folder = _h200(tmp_path, "h200,H200,7,123400,1,2026-11-30,published", QUOTE)
    with (folder / "tarifs-forfaits.csv").open("a", encoding="utf-8") as tariffs:
        tariffs.write(f"h200,H200,3,60000,1,2026-11-30,published,{QUOTE}\n")
    warned = [f for f in check_campaign(folder).findings if f.code == "package-longer-than-needed"]
    assert warned and "600.00 USD instead of 1234.00 USD, 634.00 USD more than needed" in warned[0].message


def test_other_expenses_are_listed_apart_and_never_budgeted(tmp_path: Path) -> None:
    import json

    folder = _h200(tmp_path, "h200,H200,7,123400,1,2026-11-30,published", QUOTE)
    protocol = json.loads((folder / "protocol.json").read_text(encoding="utf-8"))
    protocol["other_expenses"] = [{"what": "object storage, 200 GB for 7 days", "amount_usd_minor": 1250,
                                   "why": "the corpus and predictions kept beside the GPU"}]
    (folder / "protocol.json").write_text(json.dumps(protocol, indent=2), encoding="utf-8")
    result = check_campaign(folder)
    assert not result.errors
    expenses = result.decision["campaign"]["other_expenses"]
    assert expenses == [{"what": "object storage, 200 GB for 7 days", "amount_usd_minor": 1250,
                         "why": "the corpus and predictions kept beside the GPU"}]
    budgets = {c["committed_budget_usd_minor"] for c in result.decision["configurations"]}
    assert budgets == {123400}  # never added to a configuration's budget


def test_invoice_check_commits_one_package_per_period() -> None:
    from generator.invoice.check import committed_packages, other_expenses

    period = {"price_status": "published", "price_source": "provider", "snapshot_date": "2026-11-30"}
    decision = {"campaign": {"other_expenses": [{"what": "egress", "amount_usd_minor": 900, "why": "results out"}]},
                "experiments": [{"id": "rtx", "package": {
                    "gpu": "rtx-4090", "duration_days": 10, "lots": 1, "gpus_per_lot": 1, "total_usd_minor": 16000,
                    "price_per_lot_usd_minor": 16000, "price_source": "provider", "price_source_detail": "Q-18",
                    "periods": [{**period, "duration_days": 7, "price_per_lot_usd_minor": 11000,
                                 "total_usd_minor": 11000, "price_source": "catalogue",
                                 "price_source_detail": "2026-09-24"},
                                {**period, "duration_days": 3, "price_per_lot_usd_minor": 5000,
                                 "total_usd_minor": 5000, "price_source_detail": "Q-18"}]}}]}
    committed = committed_packages(decision)
    assert [(c.gpu, c.days, c.lots, c.total_usd_minor, c.price_source) for c in committed] == [
        ("rtx-4090", 7, 1, 11000, "catalogue"), ("rtx-4090", 3, 1, 5000, "provider")]
    assert other_expenses(decision) == [("egress", 900)]


BLANKS = [" ", "\t", "  \t ", "\u00a0", "\u200b", "\ufeff", "\u2007\u202f", "\u3000", "\u2060", "\u00ad", "\u3164"]


@pytest.mark.parametrize("source", BLANKS, ids=[ascii(s) for s in BLANKS])
def test_a_source_of_blanks_and_invisible_characters_is_no_source(source: str) -> None:
    # issue 47: a cell that shows nothing names nothing; the finding shows the cell as the file writes it
    price = Price("h200", 7, 123400, 1, "2026-11-30", "published", source)
    assert price_source(price, published_catalogue(), None) is None
    [finding] = row_findings(price, 4, "tarifs-forfaits.csv", published_catalogue(), None)
    assert (finding.code, finding.line, finding.field) == ("tariff-not-catalogue", 4, "source")
    assert finding.claimed == as_written(source) and "<U+" in finding.claimed or set(source) == {" "}
    assert "U+" in finding.message or set(source) == {" "}
    assert "\u200b" not in finding.message and "None" not in finding.message


@pytest.mark.parametrize("source", ["Q", "\u200bQ\u00a0", "\u00e9", "\u4ef7"])
def test_a_source_of_one_visible_character_is_a_source(source: str) -> None:
    price = Price("h200", 7, 123400, 1, "2026-11-30", "published", source)
    assert price_source(price, published_catalogue(), None) == ("provider", source)
    assert row_findings(price, 4, "tarifs-forfaits.csv", published_catalogue(), None) == []


def test_a_blank_source_in_the_campaign_withholds_and_one_character_answers(tmp_path: Path) -> None:
    row = "h200,H200,7,123400,1,2026-11-30,published"
    result = check_campaign(_h200(tmp_path / "blank", row, "\u00a0 \u200b"))
    [finding] = [f for f in result.errors if f.code == "tariff-not-catalogue"]
    assert (finding.file, finding.line, finding.field) == ("tarifs-forfaits.csv", 4, "source")
    assert "'<U+00A0> <U+200B>'" in finding.message, finding.message
    assert result.decision["decision"]["status"] == "withheld"
    result = check_campaign(_h200(tmp_path / "one", row, "Q"))
    assert not result.errors, result.errors
    assert result.decision["experiments"][0]["package"]["price_source_detail"] == "Q"
