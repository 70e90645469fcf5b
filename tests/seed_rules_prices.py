"""Issue 33's and 47's seed rules (where a price comes from, the Lab archive's structure), in the form of
tests/seed_rules.py; test_seed_rules.py runs them. Every price here is a test figure written by this file, not a
provider's: only the structure is real."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from seed_rules import (
    B200,
    B200_ALL,
    PROTOCOL,
    RTX,
    RTX_ALL,
    TARIFFS,
    A,
    L,
    P,
    SeedRule,
    Where,
    edit_protocol,
    edit_tariffs,
    set_rows,
)

MANIFEST = "lab/MANIFEST.json"
# A 7-day B200 lot at a price the catalogue snapshot does not hold: a test figure, cheaper than the RTX 4090's
# package, so that the B200 wins wherever the price is admitted.
SPOT = "b200-spot"
SPOT_ROW = f"{SPOT},B200,7,5000,2,2026-11-30,published"
QUOTE = "TEST quote Q-17 of 2026-11-30 (test figure)"


def _rent_spot(c: Path, source: str | None, status: str = "published") -> None:
    """The B200 experiment rents the spot lot; the tariffs file gets the source column and the spot row."""
    edit_protocol(c, lambda p: p["experiments"][1]["rental"].update(gpu=SPOT))
    row = SPOT_ROW.replace("published", status) + "," + (source or "")
    edit_tariffs(c, lambda ls: [ls[0] + ",source", *(t + "," for t in ls[1:] if t), row])
    set_rows(c, B200, None, package_total_usd_minor="5000")


# The Lab's tarifs-forfaits.csv has 45 prices, 15 models x 3 durations (004 Inhalt); its models other than the
# two the seeds quote, and every price but those two, are test figures. Lines 2 to 4 are the prices the example
# rents (the spot lot's on line 4); none of the test figures is 11000, 5000 or 4999 cents.
LAB_HEADER = "gpu,model_name,duration_days,price_per_lot_usd_minor,gpus_per_lot,snapshot_date,price_status"
_LAB_MODELS = [("rtx-4090", "GeForce RTX 4090", 1), ("b200", "B200", 2), (SPOT, "B200", 2),
               *((f"test-gpu-{n:02}", f"Test GPU {n:02}", 1) for n in range(1, 13))]


def lab_tariff_rows() -> list[str]:
    """The Lab-shaped tariffs' rows, in file order (line 2 first)."""
    rented = ["rtx-4090,GeForce RTX 4090,7,11000,1,2026-09-24,published", "b200,B200,7,207100,2,2026-09-24,published",
              SPOT_ROW]
    others = [f"{gpu},{name},{days},{60000 + 1000 * i + days},{per},2026-11-30,published"
              for i, (gpu, name, per) in enumerate(_LAB_MODELS) for days in (3, 7, 30)
              if (gpu, days) not in (("rtx-4090", 7), ("b200", 7), (SPOT, 7))]
    return rented + others


def _rent_spot_lab(c: Path, rows: list[str] | None = None) -> None:
    """The B200 experiment rents the spot lot, priced by a tariffs file of the Lab's shape (no source column)."""
    edit_protocol(c, lambda p: p["experiments"][1]["rental"].update(gpu=SPOT))
    lines = [LAB_HEADER, *(lab_tariff_rows() if rows is None else rows)]
    (c / TARIFFS).write_text("\n".join(lines) + "\n", encoding="utf-8")
    set_rows(c, B200, None, package_total_usd_minor="5000")


def lab_manifest_items(data: bytes) -> list[dict[str, Any]]:
    """The nine items of a Lab-style MANIFEST.json: the eight content files with a size and SHA-256 (the tariffs'
    real, the others test figures) and the manifest itself without a checksum, in the seeds' order."""
    names = ["README.md", "mesure-memoire.ipynb", "mesure_memoire.py", "protocole-qualite.md", "resultats-bruts.csv",
             "calcul_forfaits.py", "tarifs-forfaits.csv", "LICENSE.txt"]
    items: list[dict[str, Any]] = [
        {"path": f"iteragpu-lab-v1/{n}", "size": 1000 + i, "sha256": hashlib.sha256(n.encode()).hexdigest()}
        for i, n in enumerate(names)]
    items[6].update(size=len(data), sha256=hashlib.sha256(data).hexdigest())
    return [*items, {"path": "iteragpu-lab-v1/MANIFEST.json"}]


def _manifest(c: Path, tariffs: bytes | None = None, change: Any = None, **extra: Any) -> None:
    """A Lab-style MANIFEST.json listing the campaign's tariffs file (or other bytes), named in the protocol;
    `change` edits its item list first."""
    items = lab_manifest_items(tariffs if tariffs is not None else (c / TARIFFS).read_bytes())
    if change is not None:
        items = change(items)
    (c / MANIFEST).parent.mkdir(exist_ok=True)
    (c / MANIFEST).write_text(json.dumps({"archive": "iteragpu-lab-v1", "files": items, **extra}, indent=2) + "\n",
                              encoding="utf-8")
    edit_protocol(c, lambda p: p["files"].update(lab_manifest=MANIFEST))


def m_published_without_source(c: Path) -> list[Where]:
    _rent_spot(c, None)
    return [Where(TARIFFS, 4, "source")]


def m_provider_with_source(c: Path) -> list[Where]:
    _rent_spot(c, QUOTE)
    return []


def v_provider_answers(decision: dict[str, Any], findings: list[Any]) -> None:
    d = decision["decision"]
    assert d["status"] == "answered" and d["answer"] in B200_ALL, d
    package = decision["experiments"][1]["package"]
    assert (package["price_source"], package["price_source_detail"]) == ("provider", QUOTE), package


def m_provider_illustrative(c: Path) -> list[Where]:
    _rent_spot(c, QUOTE, status="illustrative")
    return [Where(TARIFFS, None, "price_status")]


def m_manifest_stated(c: Path) -> list[Where]:
    _rent_spot_lab(c)  # no source column: the manifest the campaign carries lists the whole file
    _manifest(c)
    return []


def v_manifest_answers(decision: dict[str, Any], findings: list[Any]) -> None:
    d = decision["decision"]
    assert d["status"] == "answered" and d["answer"] in B200_ALL, d
    package = decision["experiments"][1]["package"]
    assert (package["price_source"], package["price_source_detail"]) == ("provider", "lab-manifest"), package


def m_manifest_one_byte_changed(c: Path) -> list[Where]:
    _rent_spot_lab(c)
    _manifest(c)
    edit_tariffs(c, lambda ls: [t.replace(",5000,", ",4999,") for t in ls])  # after the manifest was written
    set_rows(c, B200, None, package_total_usd_minor="4999")
    return [Where(TARIFFS, None, "sha256")]


def m_manifest_other_catalogue_price(c: Path) -> list[Where]:
    # The Lab's catalogue says 11000 cents for the RTX 4090's week; a file the manifest lists says less.
    _rent_spot_lab(c)
    edit_tariffs(c, lambda ls: [t.replace(",11000,", ",9000,") for t in ls])
    _manifest(c)
    return [Where(TARIFFS, 2, "price_per_lot_usd_minor")]


def m_manifest_ambiguous(c: Path) -> list[Where]:
    _rent_spot_lab(c)
    _manifest(c, extra=[{"path": "tarifs-forfaits.csv", "size": 1, "sha256": "f" * 64}])
    return [Where(MANIFEST, None, "files.lab_manifest")]


def m_manifest_one_entry(c: Path) -> list[Where]:
    # issue 47: a one-entry MANIFEST.json the user wrote, listing the tariffs file byte for byte, "proved" its prices
    _rent_spot_lab(c)
    _manifest(c, change=lambda items: [items[6]])
    return [Where(MANIFEST, None, "/files")]


def m_manifest_one_entry_no_support(c: Path) -> list[Where]:
    # the same, with the campaign's own two rows and the spot row: the price has no support left
    _rent_spot_lab(c, lab_tariff_rows()[:3])
    _manifest(c, change=lambda items: [items[6]])
    return [Where(TARIFFS, 4, "source")]


def m_manifest_self_checksum(c: Path) -> list[Where]:
    _rent_spot_lab(c)
    _manifest(c, change=lambda items: [*items[:8], {**items[8], "sha256": "0" * 64}])
    return [Where(MANIFEST, None, "/files/8/sha256")]


def m_manifest_content_without_digest(c: Path) -> list[Where]:
    _rent_spot_lab(c)
    _manifest(c, change=lambda items: [*items[:7], {"path": items[7]["path"], "size": items[7]["size"]}, items[8]])
    return [Where(MANIFEST, None, "/files/7")]


def m_manifest_extra_item(c: Path) -> list[Where]:
    _rent_spot_lab(c)
    _manifest(c, change=lambda items: [*items, {"path": "iteragpu-lab-v1/prices-2027.csv", "size": 10,
                                                 "sha256": "1" * 64}])
    return [Where(MANIFEST, None, "/files/9")]


def m_lab_tariffs_row_missing(c: Path) -> list[Where]:
    rows = lab_tariff_rows()
    last = rows.pop()  # test-gpu-12's 30-day price
    _rent_spot_lab(c, rows)
    _manifest(c)
    assert last.startswith("test-gpu-12,") and ",30," in last
    return [Where(TARIFFS, next(n for n, r in enumerate(rows, start=2) if r.startswith("test-gpu-12,")), "gpu")]


_SOURCE = f"{A} 'Die gebundenen Kosten mit unseren Paketen berechnen'; {L} Inhalt, §4; {P} §5"
_COST = f"{A} 'Die gebundenen Kosten mit unseren Paketen berechnen'"
RULES: list[SeedRule] = [
    SeedRule("price-published-needs-source", "a published price the catalogue snapshot does not hold names its "
             "source (or a Lab manifest in the campaign lists its file): gpu-audit never takes a price on the word "
             "alone",
             _SOURCE, "tariff-not-catalogue", m_published_without_source, setup="example", protect="withheld"),
    SeedRule("price-provider-answers", "a provider's price with its source commits a budget and can answer",
             _SOURCE, None, m_provider_with_source, protect="decision", verify=v_provider_answers),
    SeedRule("price-provider-illustrative", "an illustrative price never answers, whatever its source",
             f"{_COST}; {L} §4", "illustrative-price", m_provider_illustrative, protect="unpriced", targets=B200_ALL,
             severity="info"),
    SeedRule("price-manifest-stated", "a tariffs file a Lab-structured MANIFEST.json in the campaign lists with its "
             "size and SHA-256 gives the provider's prices as stated in this campaign, not authenticated",
             f"{L} Inhalt; {_COST}", None, m_manifest_stated, protect="decision", verify=v_manifest_answers),
    SeedRule("price-manifest-byte-changed", "one byte changed in a tariffs file the manifest lists is an error "
             "naming the manifest", f"{L} Inhalt; {_COST}", "tariffs-not-in-manifest",
             m_manifest_one_byte_changed, protect="withheld"),
    SeedRule("price-manifest-catalogue", "a tariffs file presented as the Lab's agrees with the prices the seeds "
             "quote", f"{L} Inhalt; {_COST}", "tariff-not-catalogue", m_manifest_other_catalogue_price,
             protect="withheld"),
    SeedRule("price-manifest-ambiguous", "a manifest that lists the tariffs file twice, differently, supports "
             "nothing", f"{L} Inhalt", "lab-manifest-refused", m_manifest_ambiguous, protect="withheld"),
    SeedRule("price-manifest-nine-items", "a manifest that is not the archive's list of nine items (a one-entry "
             "manifest written for the tariffs) is not the Lab's", f"{L} Inhalt", "lab-manifest-structure",
             m_manifest_one_entry, protect="withheld"),
    SeedRule("price-manifest-no-support", "a price whose only support is a manifest refused for its structure has "
             "no source", f"{L} Inhalt; {_COST}", "tariff-not-catalogue", m_manifest_one_entry_no_support,
             protect="withheld"),
    SeedRule("price-manifest-no-self-checksum", "the Lab's manifest declares itself without a checksum",
             f"{L} Inhalt", "lab-manifest-structure", m_manifest_self_checksum, protect="withheld"),
    SeedRule("price-manifest-content-checksums", "the manifest gives the size and SHA-256 of each of the eight "
             "content files", f"{L} Inhalt", "lab-manifest-structure", m_manifest_content_without_digest,
             protect="withheld"),
    SeedRule("price-manifest-no-extra-item", "the manifest lists the archive's nine items and no other",
             f"{L} Inhalt", "lab-manifest-structure", m_manifest_extra_item, protect="withheld"),
    SeedRule("price-lab-tariffs-15x3", "a tariffs file presented as the Lab's prices 15 models for 3, 7 and 30 days",
             f"{L} Inhalt; {L} §4", "lab-tariffs-structure", m_lab_tariffs_row_missing, protect="withheld"),
]


# ---------------------------------------------------------------- periods, the package needed, other expenses

RTX3 = "rtx-4090,GeForce RTX 4090,3,5000,1,2026-11-30,published,TEST quote Q-18 (test figure)"


def _ten_days(c: Path) -> None:
    """A 10-day window (and a deadline after it); the runs stay where they were, inside it."""
    edit_protocol(c, lambda p: (p["window"].update(end="2026-10-15T09:00"), p.update(deadline="2026-10-15T18:00")))


def _rtx_periods(c: Path, periods: list[int], total: int) -> None:
    edit_protocol(c, lambda p: p["experiments"][0]["rental"].update(periods=periods))
    edit_tariffs(c, lambda ls: [ls[0] + ",source", *(t + "," for t in ls[1:] if t), RTX3])
    set_rows(c, RTX, None, package_total_usd_minor=str(total))


def _b200_month(c: Path) -> None:
    """The B200 experiment on a 30-day package, which the tariffs do not price: it stays unpriced."""
    edit_protocol(c, lambda p: p["experiments"][1]["rental"].update(duration_days=30))
    set_rows(c, B200, None, duration_days="30", package_total_usd_minor="")


def m_periods_cover_ten_days(c: Path) -> list[Where]:
    _ten_days(c)
    _rtx_periods(c, [7, 3], 16000)
    _b200_month(c)
    return []


def v_periods_summed(decision: dict[str, Any], findings: list[Any]) -> None:
    package = decision["experiments"][0]["package"]
    assert (package["duration_days"], package["total_usd_minor"]) == (10, 16000), package
    assert [(p["duration_days"], p["total_usd_minor"]) for p in package["periods"]] == [(7, 11000), (3, 5000)]
    assert decision["decision"]["answer"] in RTX_ALL, decision["decision"]


def m_one_period_short(c: Path) -> list[Where]:
    # 10 days of runs registered on one 7-day package: no automatic extension
    _ten_days(c)
    _rtx_periods(c, [7], 11000)
    _b200_month(c)
    return [Where(PROTOCOL, None, f"/experiments/{RTX}/rental")]


def m_periods_first_not_duration(c: Path) -> list[Where]:
    _ten_days(c)
    _rtx_periods(c, [3, 7], 16000)
    _b200_month(c)
    return [Where(PROTOCOL, None, "/experiments/0/rental/duration_days")]


def m_longer_than_needed(c: Path) -> list[Where]:
    # the 96 h window is covered by the 7-day package, never by a 3-day one: rent 30 days for the B200
    _b200_month(c)
    return [Where(PROTOCOL, None, f"/experiments/{B200}/rental")]


RULES += [
    SeedRule("price-periods-summed", "consecutive packages cover the window together and commit the sum of their "
             "prices", f"{A} 'Die Dauer mit dem vollständigen Zeitplan wählen'", None, m_periods_cover_ten_days,
             protect="decision", verify=v_periods_summed),
    SeedRule("price-no-automatic-extension", "a window longer than the registered package is not covered: no "
             "automatic extension", f"{A} 'Die Dauer mit dem vollständigen Zeitplan wählen'",
             "package-does-not-cover-window", m_one_period_short, targets=RTX_ALL, reason="package"),
    SeedRule("price-periods-first", "a rental's duration_days is the first of its periods",
             f"{A} 'Die Dauer mit dem vollständigen Zeitplan wählen'", "rental-periods-mismatch",
             m_periods_first_not_duration, targets=RTX_ALL),
    SeedRule("price-package-needed", "a package longer than the smallest one covering the window is named, with "
             "the difference in money", f"{A} 'Die Dauer mit dem vollständigen Zeitplan wählen'",
             "package-longer-than-needed", m_longer_than_needed, protect="warning", severity="warning"),
]
