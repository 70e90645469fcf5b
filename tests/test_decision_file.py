"""decision.json's one loader: its bytes or JSON read back as the typed DecisionDocument, and the reader beneath it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import EXAMPLE

from generator.audit.check import check_campaign
from generator.audit.recompute.decision.decisionfile import read_decision
from generator.audit.recompute.decision.model import DecisionDocument
from generator.core.jsonrecord import JsonRecord, from_json_value, to_json_value


@dataclass(frozen=True)
class _Inner(JsonRecord):
    name: str
    size: int | None


@dataclass(frozen=True)
class _Outer(JsonRecord):
    value: str | int | float | bool | None
    inner: _Inner
    maybe: _Inner | None
    either: _Inner | tuple[str, ...] | None
    pair: tuple[str, int]
    by_name: dict[str, _Inner]
    many: tuple[_Inner, ...]
    listed: list[int]


def test_records_of_every_kind_of_field_round_trip() -> None:
    for value in ("a", 1, 1.5, True, None):
        record = _Outer(value, _Inner("x", None), None, ("a", "b"), ("p", 2), {"k": _Inner("y", 3)},
                        (_Inner("z", 1),), [1, 2])
        data = json.loads(json.dumps(record.to_json_dict()))
        assert _Outer.from_json_dict(data) == record
        assert type(_Outer.from_json_dict(data).value) is type(value)
    either = _Outer(0, _Inner("x", 1), _Inner("m", None), _Inner("e", 2), ("p", 2), {}, (), [])
    assert _Outer.from_json_dict(to_json_value(either)) == either


def test_a_part_of_the_wrong_kind_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="JSON object"):
        from_json_value(_Inner, ["x", 1])
    with pytest.raises(ValueError, match="holds 2 values"):
        from_json_value(tuple[str, int], ["p"])


def test_the_loader_reads_bytes_and_json_alike(tmp_path: Path) -> None:
    decision = check_campaign(EXAMPLE).decision
    data = (json.dumps(decision, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
    document = read_decision(data)
    assert isinstance(document, DecisionDocument)
    assert document == read_decision(decision) == read_decision(b"\xef\xbb\xbf" + data)
    assert document.to_json_dict() == decision


def test_a_decision_from_before_the_note_language_reads_in_english() -> None:
    decision = check_campaign(EXAMPLE).decision
    del decision["campaign"]["language"]
    document = read_decision(decision)
    assert document.campaign is not None and document.campaign.language == "en"
