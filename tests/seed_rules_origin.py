"""Issue 47 item 4's seed rules for the reference's origin (`quality.reference.source`), in the form of
tests/seed_rules.py; test_seed_rules.py runs them. The example registers its tuning split (inputs/corpora's
tune.jsonl, 500 texts) as the origin of its reference value; each mutation changes that registration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from seed_rules import B4, PROTOCOL, A, P, SeedRule, Where, edit_protocol

ORIGIN = f"{P} §1; {A} 'Eingaben, Referenz und Manifest vorbereiten'"
AT = "/quality/reference"
SPLIT_IDS = "splits/tuning-ids.csv"  # the example's tuning split (inputs/make_example.py)


def set_source(c: Path, source: dict[str, Any] | None) -> None:
    """The reference's origin replaced (None: removed, with the `split` shorthand)."""
    def change(p: Any) -> None:
        reference = p["quality"]["reference"]
        reference.pop("split", None)
        reference.pop("source", None)
        if source is not None:
            reference["source"] = source
    edit_protocol(c, change)


def unregister(c: Path) -> list[Where]:
    """The example as it was before the origin could be registered: "on the tuning split", no split registered."""
    set_source(c, None)
    edit_protocol(c, lambda p: p.pop("splits", None))
    (c / SPLIT_IDS).unlink(missing_ok=True)
    return [Where(PROTOCOL, None, AT)]


def v_unregistered(decision: dict[str, Any], findings: list[Any]) -> None:
    mine = [f for f in findings if f.code == "reference-origin-unregistered"]
    assert len(mine) == 1 and mine[0].shared_input == "protocol", mine
    assert "may include evaluation data" in mine[0].message and '"kind": "split"' in (mine[0].fix or "")
    assert "source" not in decision["rule"]["reference"]


def v_registered(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == B4
    assert decision["rule"]["reference"]["source"] == {"kind": "split", "split": "tuning"}
    assert SPLIT_IDS in {i["path"] for i in decision["inputs"]}  # the split's IDs are evidence of the decision
    assert not [f for f in findings if f.code.startswith("reference-")], findings


def m_registered(c: Path) -> list[Where]:
    return []


def m_split_not_registered(c: Path) -> list[Where]:
    set_source(c, {"kind": "split", "split": "training"})
    return [Where(PROTOCOL, None, f"{AT}/source/split")]


def m_split_shares_one_id(c: Path) -> list[Where]:
    first = (c / "expected-ids.csv").read_text(encoding="utf-8").split()[1]
    with (c / SPLIT_IDS).open("a", encoding="utf-8") as fh:
        fh.write(first + "\n")
    return [Where(PROTOCOL, None, "/splits/0/ids")]


def m_citation_blank(c: Path) -> list[Where]:
    set_source(c, {"kind": "publication", "citation": "\u00a0"})
    return [Where(PROTOCOL, None, f"{AT}/source/citation")]


def m_publication(c: Path) -> list[Where]:
    set_source(c, {"kind": "publication", "citation": "x"})
    return []


def v_publication(decision: dict[str, Any], findings: list[Any]) -> None:
    assert decision["decision"]["answer"] == B4
    assert decision["rule"]["reference"]["source"] == {"kind": "publication", "citation": "x"}


def m_fingerprint_short(c: Path) -> list[Where]:
    set_source(c, {"kind": "bundle", "id": "GA-0123456789ABCDEF", "fingerprint": "a" * 63})
    return [Where(PROTOCOL, None, f"{AT}/source/fingerprint")]


def m_two_origins(c: Path) -> list[Where]:
    edit_protocol(c, lambda p: p["quality"]["reference"].update(
        split="tuning", source={"kind": "publication", "citation": "Doe et al. (2025), doi:10.5555/12345678"}))
    return [Where(PROTOCOL, None, f"{AT}/split")]


RULES = [
    SeedRule("reference-origin-registered", "a reference value measured on a registered split kept apart from the "
             "corpus leaves the decision as it is, and decision.json records its origin", ORIGIN, None, m_registered,
             protect="decision", verify=v_registered),
    SeedRule("reference-origin-unregistered", "a reference value whose origin is not registered may include "
             "evaluation data: a warning, so that campaigns already run keep their registration", ORIGIN,
             "reference-origin-unregistered", unregister, protect="warning", severity="warning",
             verify=v_unregistered),
    SeedRule("reference-source-split-registered", "a reference's split origin is a split the protocol registers",
             ORIGIN, "reference-split-unknown", m_split_not_registered, protect="withheld"),
    SeedRule("reference-source-split-apart", "the split a reference was measured on shares no ID with the "
             "comparison corpus, not even one", ORIGIN, "split-overlaps-evaluation", m_split_shares_one_id,
             protect="withheld"),
    SeedRule("reference-citation", "a publication a reference comes from is cited: a no-break space is no "
             "citation", ORIGIN, "reference-citation-blank", m_citation_blank, protect="withheld"),
    SeedRule("reference-publication", "a reference taken from a publication with its citation is a registered "
             "origin", ORIGIN, None, m_publication, protect="decision", verify=v_publication),
    SeedRule("reference-bundle-fingerprint", "an earlier bundle a reference comes from is named by its ID and the "
             "64-hex SHA-256 of its decision.json", ORIGIN, "schema-violation", m_fingerprint_short,
             protect="withheld"),
    SeedRule("reference-one-origin", "a reference has one origin: `split` and `source` name the same split",
             ORIGIN, "reference-origin-conflict", m_two_origins, protect="withheld"),
]
