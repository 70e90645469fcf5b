"""Issue 49 item 3's seed rules (a rental that several experiments ran in, listed once in the protocol's `rentals`),
in the form of tests/seed_rules.py; test_seed_rules.py runs them. The edge cases and the MiniLM-style campaign with
one shared rental are in tests/test_shared_rentals.py."""

from __future__ import annotations

from pathlib import Path

from seed_rules import PROTOCOL, A, SeedRule, Where, edit_protocol

COST = f"{A} 'Die gebundenen Kosten mit unseren Paketen berechnen'"
RTX_WEEK = {"gpu": "rtx-4090", "duration_days": 7, "lots": 1}


def m_rental_unknown(c: Path) -> list[Where]:
    # the RTX experiment names a shared rental the protocol does not list: its package is unknown
    edit_protocol(c, lambda p: p["experiments"][0].update(rental="rtx-week"))
    return [Where(PROTOCOL, None, "/experiments/0/rental")]


def m_rental_id_twice(c: Path) -> list[Where]:
    # two shared rentals under one id: the experiment naming it could mean either
    def change(p: dict[str, object]) -> None:
        p["rentals"] = [{"id": "week", **RTX_WEEK}, {"id": "week", **RTX_WEEK, "lots": 2}]
        p["experiments"][0]["rental"] = "week"  # type: ignore[index]
    edit_protocol(c, change)
    return [Where(PROTOCOL, None, "/rentals/1/id")]


def m_rental_unused(c: Path) -> list[Where]:
    # a shared rental listed but named by no experiment: it commits nothing
    edit_protocol(c, lambda p: p.update(rentals=[{"id": "spare", **RTX_WEEK}]))
    return [Where(PROTOCOL, None, "/rentals/0")]


RULES = [
    SeedRule("rental-named-is-listed", "an experiment's rental is its own or one listed in `rentals`, by its id",
             COST, "rental-unknown", m_rental_unknown, protect="withheld"),
    SeedRule("rental-id-once", "each rental of `rentals` has its own id", COST, "rental-id-duplicate",
             m_rental_id_twice, protect="withheld"),
    SeedRule("rental-listed-is-used", "a rental listed in `rentals` is named by the experiments that ran in it; "
             "one named by none commits nothing", COST, "rental-unused", m_rental_unused, protect="warning",
             severity="warning"),
]
