"""Issue 48's seed rules (the registration sealed before the runs), in the form of tests/seed_rules.py: each plants a
change in a sealed copy of the example (setup "sealed") and the answer never rests on it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from seal_helpers import WINDOW_START, seal_in_place
from seed_rules import PROTOCOL, REFERENCE, TARIFFS, A, P, SeedRule, Where, edit_lines, edit_protocol

_SOURCE = f"{P} §1; {A} 'Festlegen, was als akzeptiertes Ergebnis zählt'"
_LOWERED = f"{A} 'Qualität nach einem Wechsel der Präzision prüfen'; {P} §1"  # never lowered afterwards
TOKEN = "registration.json.tsr"
LONG = "subgroups/long.csv"
FIRST_RUN = dt.datetime(2026, 10, 5, 7, 30, 2, 50000, tzinfo=dt.UTC)  # rtx4090-batch/b1's model_load starts


def _says(code: str, *words: str) -> Any:
    """A verify that the code's message names the change in words."""
    def verify(decision: dict[str, Any], findings: list[Any]) -> None:
        messages = [f.message for f in findings if f.code == code]
        assert any(all(w in m for w in words) for m in messages), messages
        assert decision["registration"]["status"] in ("seal-broken", "sealed-time-stamped"), decision["registration"]
    return verify


def m_threshold_loosened(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: p["quality"]["subgroups"][2].update(threshold=0.7))  # the long texts' own, looser
    return [Where(PROTOCOL, None, "/quality/subgroups/2/threshold")]


def m_ids_removed(c: Path) -> list[Where]:
    edit_lines(c, LONG, lambda ls: ls[:-9])  # the hard examples b4 might get wrong
    return [Where(LONG, None, None)]


def m_reference_value(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: p["quality"]["reference"].update(value=0.8))
    return [Where(PROTOCOL, None, "/quality/reference/value")]


def m_reference_label(c: Path) -> list[Where]:
    def relabel(lines: list[str]) -> list[str]:
        text_id, label = lines[1].split(",")
        return [lines[0], f"{text_id},{'games' if label != 'games' else 'net'}", *lines[2:]]
    edit_lines(c, REFERENCE, relabel)
    return [Where(REFERENCE, None, None)]


def m_tariff_row(c: Path) -> list[Where]:
    edit_lines(c, TARIFFS, lambda ls: [ls[0], ls[1].replace(",11000,", ",9000,"), *ls[2:]])
    return [Where(TARIFFS, None, None)]


def m_after_window(c: Path) -> list[Where]:
    seal_in_place(c, WINDOW_START)  # sealed again, at the window's start: not before it
    return [Where(TOKEN, None, None)]


def m_after_first_run(c: Path) -> list[Where]:
    seal_in_place(c, FIRST_RUN)
    return [Where(TOKEN, None, None)]


def m_forged(c: Path) -> list[Where]:
    # the attack a seal exists to show: the registration's record rewritten to match a changed file
    path = c / "registration.json"
    path.write_bytes(path.read_bytes().replace(b'"registered_at": "2026-09-30', b'"registered_at": "2026-09-29'))
    return [Where("registration.json", None, None)]


def m_declared(c: Path) -> list[Where]:
    return [Where(PROTOCOL, None, "/registered_at")]


def v_declared(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["registration"] == {"status": "declared", "signer": None, "time": None, "authority": None,
                                        "registration_sha256": None, "sealed_files": []}
    message = next(f.message for f in findings if f.code == "registration-not-sealed")
    assert "anyone could have changed the protocol's rule, thresholds, subgroups, reference" in message


RULES: list[SeedRule] = [
    SeedRule("seal-threshold-loosened", "a subgroup's threshold is never loosened after registration", _LOWERED,
             "sealed-file-changed", m_threshold_loosened, setup="sealed", protect="withheld",
             verify=_says("sealed-file-changed", "(absent) -> 0.7", "added after registration")),
    SeedRule("seal-ids-removed", "hard examples are never removed from a subgroup after registration", _LOWERED,
             "sealed-file-changed", m_ids_removed, setup="sealed", protect="withheld",
             verify=_says("sealed-file-changed", "9 IDs", "removed after registration")),
    SeedRule("seal-reference-value", "the reference value is fixed before the runs", _SOURCE, "sealed-file-changed",
             m_reference_value, setup="sealed", protect="withheld",
             verify=_says("sealed-file-changed", "0.84 -> 0.8")),
    SeedRule("seal-reference-label", "the reference labels are fixed before the runs", _SOURCE, "sealed-file-changed",
             m_reference_label, setup="sealed", protect="withheld",
             verify=_says("sealed-file-changed", "1 label", "changed after registration")),
    SeedRule("seal-tariff-row", "the tariffs are fixed before the runs", _SOURCE, "sealed-file-changed",
             m_tariff_row, setup="sealed", protect="withheld",
             verify=_says("sealed-file-changed", "line 2: price_per_lot_usd_minor 11000 -> 9000")),
    SeedRule("seal-before-window", "the registration is sealed before the window starts", _SOURCE,
             "sealed-after-window-start", m_after_window, setup="sealed", protect="withheld"),
    SeedRule("seal-before-first-run", "the registration is sealed before the first run", _SOURCE,
             "sealed-after-first-run", m_after_first_run, setup="sealed", protect="withheld"),
    SeedRule("seal-verifies", "a registration changed after it was signed proves nothing", _SOURCE, "seal-invalid",
             m_forged, setup="sealed", protect="withheld"),
    SeedRule("registration-declared", "a registration without a seal is the campaign's word, and says so", _SOURCE,
             "registration-not-sealed", m_declared, protect="warning", severity="warning", verify=v_declared),
]
