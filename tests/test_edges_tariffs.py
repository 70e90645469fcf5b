"""Issue 51's edges of the tariff rule and the Lab manifest: a character on each side of an invisible range, a
manifest that does not stand, a SHA-256 differing in its last hex digit, a name in another case, a size of 0
(the mutation command's survivors in audit/tariffrules and audit/labmanifest)."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, replace

import pytest

from generator.audit.load.findings import FOLLOWS_FROM
from generator.audit.load.inputs.rows import TariffRow
from generator.audit.load.labmanifest import (
    Json,
    ManifestEntry,
    ManifestItem,
    ManifestReading,
    as_json,
    is_lab_name,
    list_items,
    read_manifest,
)
from generator.audit.validate.tariffrules import (
    LAB_MANIFEST,
    ManifestProof,
    Price,
    as_written,
    blank,
    manifest_findings,
    price_of,
    price_source,
    published_catalogue,
    row_findings,
    table_findings,
)
from generator.core.jsonvalue import JsonScalar

CATALOGUE = published_catalogue()
B200 = Price("b200", 7, 207100, 2, "2026-09-24", "published")  # the catalogue's, unchanged
H200 = Price("h200", 7, 123400, 1, "2026-11-30", "published")  # no catalogue key
STANDS, FAILS = ManifestProof(True), ManifestProof(False, ("lab-manifest-refused", "MANIFEST.json"))
HEX = "ab" * 32

# --------------------------------------------------------------------------------------------- blanks


@pytest.mark.parametrize(("text", "is_blank"), [
    (None, True), ("", True), (" ", True), ("\u3164", True), ("\u200b", True), ("\t\u00a0", True),
    ("\ufe00", True), ("\ufe0f", True),  # the first and last variation selectors
    ("\ufdff", False), ("\ufe10", False),  # the characters either side of them show something
    ("a", False), (" a", False), ("a\u200b", False), ("\u3164Q", False),
])
def test_a_cell_is_blank_only_when_no_character_shows(text: str | None, is_blank: bool) -> None:
    assert blank(text) is is_blank


def test_a_blank_cell_is_shown_as_the_file_writes_it() -> None:
    assert as_written(" \u00a0 \u200b") == " <U+00A0> <U+200B>"


# ----------------------------------------------------------------------------------------- price terms

ROW: dict[str, JsonScalar] = {"gpu": "b200", "model_name": "B200", "duration_days": 7,
                              "price_per_lot_usd_minor": 207100, "gpus_per_lot": 2,
                              "snapshot_date": "2026-09-24", "price_status": "published"}


@pytest.mark.parametrize("missing", ["gpu", "duration_days", "price_per_lot_usd_minor", "gpus_per_lot",
                                     "snapshot_date", "price_status"])
def test_a_row_lacking_a_term_has_no_price(missing: str) -> None:
    assert price_of(TariffRow.of({**ROW, missing: None})) is None
    assert price_of(TariffRow.of(ROW)) == B200


# ----------------------------------------------------------------------------------------- price source


@pytest.mark.parametrize(("price", "proof", "source"), [
    (H200, None, None), (H200, FAILS, None), (H200, STANDS, ("provider", LAB_MANIFEST)),
    (replace(H200, source="Q-1"), FAILS, ("provider", "Q-1")), (replace(H200, source="Q-1"), None, ("provider", "Q-1")),
    (B200, STANDS, ("catalogue", "2026-09-24")), (replace(B200, price_status="illustrative"), STANDS,
                                                  ("illustrative", None)),
])
def test_a_price_comes_from_the_catalogue_a_standing_manifest_or_its_source(
        price: Price, proof: ManifestProof | None, source: tuple[str, str | None] | None) -> None:
    assert price_source(price, CATALOGUE, proof) == source


def test_a_published_price_without_support_names_what_is_missing() -> None:
    [alone] = row_findings(H200, 4, "t.csv", CATALOGUE, None)
    assert alone.message == ("h200 for 7 days is marked published, but the catalogue snapshot publishes no such price "
                             "and the row names no source")
    assert (alone.claimed, alone.recomputed, alone.extra.get(FOLLOWS_FROM)) == ("published", "a source", None)
    [failed] = row_findings(replace(H200, source=" "), 4, "t.csv", CATALOGUE, FAILS)
    assert failed.message.endswith("the row names a source cell of ' ', which names nothing, and the Lab manifest "
                                   "named supports nothing (lab-manifest-refused)")
    assert (failed.claimed, failed.extra[FOLLOWS_FROM]) == (" ", {"code": "lab-manifest-refused",
                                                                  "file": "MANIFEST.json"})
    assert row_findings(H200, 4, "t.csv", CATALOGUE, STANDS) == []


def _findings(price: Price, proof: ManifestProof | None) -> list[tuple[str | None, str, str]]:
    return [(f.field, f.message, f.fix or "") for f in row_findings(price, 4, "t.csv", CATALOGUE, proof)]


def test_a_catalogue_key_must_keep_the_catalogue_price() -> None:
    assert _findings(B200, None) == [] and _findings(B200, STANDS) == []
    assert _findings(replace(B200, price_per_lot_usd_minor=207101), None) == [(
        "price_per_lot_usd_minor", "price_per_lot_usd_minor 207101 of b200 for 7 days: the catalogue snapshot of "
        "2026-09-24 says 207100", "write 207100, or mark the row illustrative")]
    # in a file a standing Lab manifest lists, no way out through "illustrative": the file claims to be the Lab's
    assert _findings(replace(B200, gpus_per_lot=1, price_status="illustrative"), STANDS) == [(
        "gpus_per_lot", "gpus_per_lot 1 of b200 for 7 days: the Lab archive's manifest lists this file, and the "
        "catalogue snapshot of 2026-09-24 says 2", "write 2")]
    assert _findings(replace(B200, snapshot_date="2026-09-25"), STANDS) == [(
        "snapshot_date", "snapshot_date '2026-09-25' of b200 for 7 days: the catalogue snapshot of 2026-09-24 says "
        "'2026-09-24'", "write 2026-09-24")]


@pytest.mark.parametrize("proof", [None, FAILS])
def test_an_illustrative_row_outside_a_standing_manifest_is_never_held_to_the_catalogue(
        proof: ManifestProof | None) -> None:
    assert _findings(replace(B200, price_per_lot_usd_minor=1, price_status="illustrative"), proof) == []
    assert _findings(replace(H200, price_status="illustrative"), STANDS) == []


def test_a_table_is_judged_row_by_row_and_a_row_without_its_terms_is_skipped() -> None:
    rows = [TariffRow.of({**ROW, "gpus_per_lot": None}), TariffRow.of({**ROW, "price_per_lot_usd_minor": 1}),
            TariffRow.of(ROW)]
    assert [(f.line, f.field) for f in table_findings(rows, [2, 3, 4], "t.csv")] == [(3, "price_per_lot_usd_minor")]


# --------------------------------------------------------------------------------------- manifest proof


def test_a_refused_manifest_proves_nothing() -> None:
    proof, [found] = manifest_findings("t.csv", 10, HEX, "MANIFEST.json", None, "it names no file")
    assert proof == ManifestProof(False) and found.code == "lab-manifest-refused"
    assert found.message == "the Lab archive's manifest cannot support t.csv: it names no file"


@pytest.mark.parametrize(("size", "sha256", "differ"), [
    (10, HEX, []), (11, HEX, [("size", 10, 11)]), (10, HEX[:-1] + "c", [("sha256", HEX, HEX[:-1] + "c")]),
    (0, HEX, [("size", 10, 0)]),
])
def test_the_tariffs_file_is_the_one_listed_byte_for_byte(size: int, sha256: str,
                                                         differ: list[tuple[str, object, object]]) -> None:
    proof, found = manifest_findings("t.csv", size, sha256, "M.json", (10, HEX), None)
    assert [(f.field, f.claimed, f.recomputed) for f in found] == differ
    assert proof.stands is (differ == [])
    if differ:
        has = f"{size} bytes" if differ[0][0] == "size" else f"SHA-256 {sha256}"
        listed = "10 bytes" if differ[0][0] == "size" else f"SHA-256 {HEX}"
        assert found[0].message == f"t.csv has {has}; M.json lists {listed}"


@pytest.mark.parametrize("record", [B200, STANDS], ids=lambda r: type(r).__name__)
def test_a_tariff_record_is_a_value_nobody_changes_afterwards(record: object) -> None:
    assert hash(record) == hash(replace(record))  # type: ignore[type-var]
    with pytest.raises(FrozenInstanceError):
        record.__setattr__("source" if isinstance(record, Price) else "stands", None)


# ------------------------------------------------------------------------------------- the Lab manifest


def _item(size: Json = 1, sha256: Json = HEX, keys: tuple[str, str] = ("size", "sha256")) -> ManifestItem:
    return ManifestItem("LICENSE.txt", "/0", (keys[0], size), (keys[1], sha256))


@pytest.mark.parametrize(("size", "ok"), [(0, True), (1, True), (-1, False), (True, False), (False, False),
                                          ("12", False), (1.0, False), (None, False)])
def test_an_item_size_is_a_whole_number_of_bytes_zero_included(size: Json, ok: bool) -> None:
    assert _item(size).size_ok() is ok
    assert (_item(size).checksum() == (size, HEX)) is ok
    assert ManifestItem("LICENSE.txt", "/0", None, ("sha256", HEX)).size_ok() is False


@pytest.mark.parametrize(("sha256", "lower"), [
    (HEX, HEX), (f" {HEX.upper()}\n", HEX), (f"sha256:{HEX.upper()}", HEX), (f"sha-256:{HEX}", HEX),
    (HEX[:-1], None), (HEX + "a", None), (12, None), (None, None), (HEX[:-1] + "g", None)])
def test_an_item_sha256_is_64_hex_digits_read_in_lower_case(sha256: Json, lower: str | None) -> None:
    item = _item(sha256=sha256)
    assert item.sha256_ok() is (lower is not None)
    assert item.checksum() == (None if lower is None else (1, lower))
    assert ManifestItem("LICENSE.txt", "/0", ("size", 1), None).checksum() is None
    assert ManifestItem("LICENSE.txt", "/0", ("size", -1), ("sha256", HEX)).checksum() is None


def test_a_manifest_value_is_quoted_as_json_writes_it() -> None:
    assert [as_json(v) for v in (True, None, "12", "\u00e9", 1.5)] == ["true", "null", '"12"', '"\u00e9"', "1.5"]


@pytest.mark.parametrize(("name", "lab"), [
    ("LICENSE.txt", True), ("a/b\\LICENSE.txt", True), ("MANIFEST.json", True), ("README", True), ("readme.md", True),
    ("manifest.json", False), ("license.txt", False), ("Tarifs-forfaits.csv", False), ("README.md.bak", False),
    ("notes.txt", False)])
def test_a_lab_item_is_named_in_the_archive_own_case(name: str, lab: bool) -> None:
    assert is_lab_name(name) is lab


@pytest.mark.parametrize(("document", "entry"), [
    ({"f": [{"path": "TARIFS-FORFAITS.CSV", "size": 1, "sha256": HEX}]}, None),  # another case: another file
    ({"f": [{"path": "x/tarifs-forfaits.csv", "Size": 0, "Sha256": f" {HEX.upper()} "}]}, (0, HEX)),
    ({"f": [{"path": "tarifs-forfaits.csv", "FILE_SIZE": 7, "SHA-256": HEX}]}, (7, HEX)),
    ({"tarifs-forfaits.csv": {"bytes": 7, "sha256sum": HEX}}, (7, HEX)),
    ({"f": [{"path": "tarifs-forfaits.csv", "size": -1, "sha256": HEX}]}, None),
    ({"f": [{"path": "tarifs-forfaits.csv", "size": False, "sha256": HEX}]}, None),
    ({"f": [{"path": "tarifs-forfaits.csv", "size": 7, "sha256": True}]}, None),
    ({"f": [{"path": "tarifs-forfaits.csv", "size": 7, "sha256": HEX},
            {"path": "b/tarifs-forfaits.csv", "size": 7, "sha256": HEX.upper()}]}, (7, HEX)),  # alike: one entry
    ({"f": [{"path": "tarifs-forfaits.csv", "size": 7, "sha256": HEX},
            {"path": "b/tarifs-forfaits.csv", "size": 7, "sha256": HEX[:-1] + "c"}]}, None),  # last hex digit
    ({"f": [{"path": "tarifs-forfaits.csv", "size": 7, "sha256": HEX},
            {"path": "b/tarifs-forfaits.csv", "size": 8, "sha256": HEX}]}, None),
])
def test_the_tariffs_entry_is_matched_exactly(document: Json, entry: tuple[int, str] | None) -> None:
    reading = read_manifest(document)
    assert (None if reading.entry is None else (reading.entry.size, reading.entry.sha256)) == entry
    assert (reading.refused is None) is (entry is not None)


def test_a_manifest_naming_no_tariffs_file_says_so_and_one_naming_it_badly_says_how() -> None:
    assert read_manifest({"f": []}).refused == "it names no file tarifs-forfaits.csv"
    assert read_manifest({"f": [{"path": "tarifs-forfaits.csv", "size": "7", "sha256": HEX}]}).refused == \
        "its entry for 'tarifs-forfaits.csv' has no size in bytes"
    assert read_manifest({"f": [{"path": "tarifs-forfaits.csv", "size": 7}, {"path": "tarifs-forfaits.csv",
                                                                             "size": 7, "sha256": HEX}]}).entry \
        == ManifestEntry("tarifs-forfaits.csv", 7, HEX)


def _items(document: Json) -> list[tuple[str, str, tuple[str, Json] | None, tuple[str, Json] | None]]:
    return [(i.name, i.pointer, i.size, i.sha256) for i in list_items(document)]


@pytest.mark.parametrize(("document", "items"), [
    ({"files": [{"path": "lab/LICENSE.txt", "size": 1, "sha256": HEX}]},
     [("LICENSE.txt", "/files/0", ("size", 1), ("sha256", HEX))]),
    ({"LICENSE.txt": None, "MANIFEST.json": {}}, [("LICENSE.txt", "/LICENSE.txt", None, None),
                                                  ("MANIFEST.json", "/MANIFEST.json", None, None)]),
    ({"a/b.bin": {"Bytes": 3}}, [("b.bin", "/a~1b.bin", ("Bytes", 3), None)]),  # a file-like key names its item
    ({"note.bin": {"text": "x"}}, []),  # a file-like key over no size or digest names nothing
    ({"x": {"Path": "LICENSE.txt"}}, [("LICENSE.txt", "/x", None, None)]),
    ({"LICENSE.txt": {"path": "other/LICENSE.txt", "SHA256": HEX}}, [("LICENSE.txt", "/LICENSE.txt", None,
                                                                      ("SHA256", HEX))]),
    ({"name": "notes.txt"}, []),  # not a Lab item, and no size or digest: no item
    ({"name": "notes.txt", "size": 3}, [("notes.txt", "", ("size", 3), None)]),
    ({"File_Name": "notes.txt", "SIZE": 3}, [("notes.txt", "", ("SIZE", 3), None)]),
    ({"name": 5, "file": "LICENSE.txt"}, [("LICENSE.txt", "", None, None)]),
    ({"name": "notes.txt", "see": "LICENSE.txt"}, [("LICENSE.txt", "", None, None)]),  # a Lab name first
    ({"name": "notes.txt", "path": "LICENSE.txt"}, [("LICENSE.txt", "", None, None)]),
    ({"items": ["LICENSE.txt", None, 3]}, []),  # bare values are no items
    ({"x": None}, []), ([{"file": "README.md"}], [("README.md", "/0", None, None)]),
    # an object's own name goes before the key it stands under, whatever the case of its name key
    ({"LICENSE.txt": {"path": "README.md", "size": 1}}, [("README.md", "/LICENSE.txt", ("size", 1), None)]),
    ({"LICENSE.txt": {"Name": "README.md"}}, [("README.md", "/LICENSE.txt", None, None)]),
    ({"README": {}}, [("README", "/README", None, None)]),  # a Lab name without an extension still names
    ({"x": {"size": 3}}, []),  # a key that is no file name names nothing
    ({"notes.txt": None, "LICENSE.txt": 5}, []),
])
def test_each_item_a_manifest_lists_is_read_with_its_pointer(document: Json, items: list[object]) -> None:
    assert _items(document) == items


@pytest.mark.parametrize("record", [ManifestEntry("t", 1, HEX), _item(), ManifestReading(None, "x")],
                         ids=lambda r: type(r).__name__)
def test_a_manifest_record_is_a_value_nobody_changes_afterwards(record: object) -> None:
    assert hash(record) == hash(replace(record))  # type: ignore[type-var]
    with pytest.raises(FrozenInstanceError):
        record.__setattr__("name" if not isinstance(record, ManifestReading) else "refused", None)
