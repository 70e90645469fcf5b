"""The Lab archive's MANIFEST.json read tolerantly: the shapes a manifest may take, and the ones refused."""

from __future__ import annotations

import pytest

from generator.audit.load.labmanifest import Json, ManifestEntry, read_manifest

HEX = "ab" * 32
OTHER = "cd" * 32


@pytest.mark.parametrize("document", [
    {"files": [{"path": "iteragpu-lab-v1/tarifs-forfaits.csv", "size": 2417, "sha256": HEX}]},
    {"items": [{"name": "tarifs-forfaits.csv", "bytes": 2417, "sha-256": "sha256:" + HEX.upper()}]},
    {"tarifs-forfaits.csv": {"size_bytes": 2417, "SHA256": HEX}, "LICENSE.txt": {"size": 1, "sha256": OTHER}},
    {"archive": "iteragpu-lab-v1.zip", "self_checksum": None, "contents": {"items": [
        {"file": "MANIFEST.json", "note": "no checksum of itself"},
        {"file": "tarifs-forfaits.csv", "length": 2417, "sha256": HEX}]}},
    # the nine items named, and the digests listed apart: the complete entry is taken
    {"items": [{"name": "tarifs-forfaits.csv"}], "digests": [{"name": "tarifs-forfaits.csv", "size": 2417,
                                                              "sha256": HEX}]},
])
def test_the_tariffs_entry_is_found_in_the_shapes_a_manifest_may_take(document: object) -> None:
    reading = read_manifest(document)  # type: ignore[arg-type]
    assert reading.refused is None
    assert reading.entry is not None and (reading.entry.size, reading.entry.sha256) == (2417, HEX)


@pytest.mark.parametrize(("document", "reason"), [
    ({"files": [{"path": "LICENSE.txt", "size": 1, "sha256": HEX}]}, "names no file tarifs-forfaits.csv"),
    ({"files": [{"path": "tarifs-forfaits.csv", "size": 2417}]}, "has no 64-hex SHA-256"),
    ({"files": [{"path": "tarifs-forfaits.csv", "size": 2417, "sha256": HEX[:-1]}]}, "has no 64-hex SHA-256"),
    ({"files": [{"path": "tarifs-forfaits.csv", "sha256": HEX}]}, "has no size in bytes"),
    ({"files": [{"path": "tarifs-forfaits.csv", "size": "2417", "sha256": HEX}]}, "has no size in bytes"),
    ({"files": [{"path": "tarifs-forfaits.csv", "size": True, "sha256": HEX}]}, "has no size in bytes"),
    ({"files": [{"path": "tarifs-forfaits.csv", "size": 2417, "sha256": HEX},
                {"path": "copy/tarifs-forfaits.csv", "size": 2417, "sha256": OTHER}]}, "more than once, differently"),
    ("tarifs-forfaits.csv", "names no file"),
])
def test_a_manifest_without_one_clear_entry_is_refused_with_its_reason(document: object, reason: str) -> None:
    reading = read_manifest(document)  # type: ignore[arg-type]
    assert reading.entry is None and reading.refused is not None and reason in reading.refused


def test_the_same_entry_listed_twice_alike_is_one_entry() -> None:
    entry: dict[str, Json] = {"path": "tarifs-forfaits.csv", "size": 2417, "sha256": HEX}
    reading = read_manifest({"files": [entry, dict(entry)]})
    assert reading.entry == ManifestEntry("tarifs-forfaits.csv", 2417, HEX)
