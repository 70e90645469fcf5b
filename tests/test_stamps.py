"""Issue 49 item 6: time stamps with their offsets compared as the instants they name; a date-only deadline."""

from __future__ import annotations

import html
import json
import re
import shutil
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from conftest import EXAMPLE

from generator.audit.check import check_campaign
from generator.audit.load.findings import Finding
from generator.audit.load.inputs.measurement import MeasurementDoc
from generator.audit.load.inputs.protocol import Protocol
from generator.audit.recompute.money import cost
from generator.audit.recompute.times import runtimes
from generator.audit.report import format_decision
from generator.audit.validate import protocol_rules
from generator.core import instants
from generator.render.page.note import render_html

PARIS = "Europe/Paris"
FIRST = "measurements/rtx4090-batch-b1.json"  # its model load is the campaign's first phase (07:30Z on Oct 5)
PROTOCOL_DATA = json.loads((EXAMPLE / "protocol.json").read_text(encoding="utf-8"))


def _in_offset(stamp: str, hours: int) -> str:
    """The instant of `stamp` written at the offset `hours` (0: with Z)."""
    text = datetime.fromisoformat(stamp).astimezone(timezone(timedelta(hours=hours))).isoformat()
    return text.replace("+00:00", "Z") if hours == 0 else text


def _paris_in_offset(local: str, hours: int) -> str:
    """A wall-clock time of the example's window zone, written as the same instant at the offset `hours`."""
    return _in_offset(datetime.fromisoformat(local).replace(tzinfo=ZoneInfo(PARIS)).isoformat(), hours)


def _edit(path: Path, change: Any) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def _example_at(target: Path, hours: int) -> Path:
    """inputs/example with every stamp of its measurements, its registered_at, its window and its deadline written
    at the offset `hours`: the same instants, other text."""
    shutil.copytree(EXAMPLE, target)

    def protocol(p: Any) -> None:
        p["registered_at"] = _in_offset(p["registered_at"], hours)
        p["window"]["start"], p["window"]["end"] = (_paris_in_offset(p["window"][k], hours) for k in ("start", "end"))
        p["deadline"] = _paris_in_offset(p["deadline"], hours)

    def measurement(doc: Any) -> None:
        for phase in doc["phases"]:
            phase["started_at"], phase["ended_at"] = (_in_offset(phase[k], hours) for k in ("started_at", "ended_at"))

    _edit(target / "protocol.json", protocol)
    for path in sorted((target / "measurements").glob("*.json")):
        _edit(path, measurement)
    return target


def _instants(value: Any) -> Any:
    """The decision with each stamp written with an offset replaced by the UTC instant it names."""
    if isinstance(value, dict):
        return {k: _instants(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_instants(v) for v in value]
    if isinstance(value, str) and re.match(r"^\d{4}-\d{2}-\d{2}T.*(Z|[+-]\d{2}:\d{2})$", value):
        return datetime.fromisoformat(value).astimezone(UTC).isoformat()
    return value


@pytest.fixture(scope="module")
def at_offsets(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Any]:
    root = tmp_path_factory.mktemp("offsets")
    return {hours: check_campaign(_example_at(root / f"at{hours}", hours)) for hours in (2, -4, 0)}


def test_the_same_instants_at_three_offsets_give_the_same_decision(at_offsets: dict[int, Any]) -> None:
    for result in at_offsets.values():
        assert [f.code for f in result.findings if f.is_error] == []
        assert result.decision["decision"]["answer"] == "rtx4090-batch/b4"
    # decision.json shows each stamp as the files write it: the window, the registration and every phase
    minus4 = at_offsets[-4].decision
    assert minus4["window"]["start"] == "2026-10-05T03:00:00-04:00"
    assert minus4["campaign"]["registered_at"] == "2026-09-30T04:00:00-04:00"
    assert minus4["configurations"][0]["measurement"]["phases"][0]["started_at"].endswith("-04:00")
    assert at_offsets[0].decision["window"]["deadline"] == "2026-10-09T16:00:00Z"
    # the file digests differ (other bytes) and so does the time of the decision; all else is the same instants
    parts = [_instants({k: v for k, v in r.decision.items() if k not in ("inputs", "generated_at")})
             for r in at_offsets.values()]
    assert parts[0] == parts[1] == parts[2]


def test_the_note_shows_every_moment_in_the_window_zone_whatever_the_offset(at_offsets: dict[int, Any]) -> None:
    def window_paragraph(decision: Any) -> str:
        body = render_html(decision, language="en")
        text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())
        return text[text.index("Campaign window and packages"):][:200]

    paragraphs = {hours: window_paragraph(r.decision) for hours, r in at_offsets.items()}
    assert paragraphs[2] == paragraphs[-4] == paragraphs[0]
    assert "Oct 5, 2026, 09:00 (Europe/Paris) to Oct 9, 2026, 09:00 (Europe/Paris)" in paragraphs[0]


# --------------------------------------------------------------------------------- edges at other offsets


def _first_phase_at(tmp_path: Path, started: str) -> list[Finding]:
    folder = tmp_path / "c"
    shutil.copytree(EXAMPLE, folder)
    _edit(folder / FIRST, lambda doc: doc["phases"][0].update(started_at=started))
    return check_campaign(folder).findings


def test_a_run_on_the_window_start_written_at_minus_four_is_inside(tmp_path: Path) -> None:
    # the window opens 2026-10-05T09:00 Europe/Paris = 07:00Z = 03:00-04:00
    assert [f.code for f in _first_phase_at(tmp_path / "on", "2026-10-05T03:00:00.000000-04:00") if f.is_error] == []
    before = _first_phase_at(tmp_path / "before", "2026-10-05T02:59:59.999999-04:00")
    assert {(f.code, f.file, f.field) for f in before if f.is_error} == {
        ("run-outside-window", FIRST, "/phases/0/started_at")}


def _codes(window: dict[str, Any], deadline: str, started: str, ended: str) -> set[str]:
    counters = dict.fromkeys(("baseline_allocated_bytes", "baseline_reserved_bytes", "final_allocated_bytes",
                              "final_reserved_bytes", "peak_allocated_bytes", "peak_reserved_bytes"))
    doc = MeasurementDoc.of({
        "schema_version": "1", "environment": {"python_version": "3.11", "device": "cuda:0", "gpu_available": True},
        "configuration": {"device": "cuda:0", "batch": 1, "dtype": "float32", "warmup": 0, "repeats": 1},
        "phases": [{"phase": "cold_forward", "status": "ok", "elapsed_seconds": 1.0, **counters,
                    "started_at": started, "ended_at": ended}]})
    protocol = Protocol.of({**PROTOCOL_DATA, "registered_at": "2026-09-30T10:00:00+02:00", "deadline": deadline,
                            "window": window, "experiments": []})
    found = runtimes.run_time_findings(protocol, {"m.json": doc}, "grid.csv", [], [])
    return {f.code for f in found if f.is_error}


def test_a_window_written_with_offsets_has_its_edges_at_the_instants_they_name() -> None:
    window = {"start": "2026-10-05T03:00-04:00", "end": "2026-10-09T09:00+02:00", "timezone": PARIS}
    assert _codes(window, "2026-10-09T18:00", "2026-10-05T09:00:00.000000+02:00", "2026-10-09T07:00:00Z") == set()
    assert _codes(window, "2026-10-09T18:00", "2026-10-05T06:59:59.999999Z",
                  "2026-10-05T07:01:00Z") == {"run-outside-window"}
    assert _codes(window, "2026-10-09T18:00", "2026-10-09T06:00:00Z",
                  "2026-10-09T03:00:00.000001-04:00") == {"run-outside-window"}


NEW_YORK: dict[str, Any] = {"start": "2026-10-05T09:00", "end": "2026-10-09T09:00", "timezone": "America/New_York"}


def test_a_date_only_deadline_is_the_end_of_that_day_in_the_window_zone() -> None:
    # 23:30-04:00 on Oct 9 is 03:30Z on Oct 10, the next day in UTC; in New York it is still Oct 9
    late_evening = _codes(NEW_YORK, "2026-10-09", "2026-10-09T23:00:00-04:00", "2026-10-09T23:30:00-04:00")
    assert "run-after-deadline" not in late_evening
    assert "run-after-deadline" not in _codes(NEW_YORK, "2026-10-09", "2026-10-09T23:30:00-04:00",
                                              "2026-10-10T00:00:00-04:00")  # ends on the deadline: in time
    assert "run-after-deadline" in _codes(NEW_YORK, "2026-10-09", "2026-10-09T23:30:00-04:00",
                                          "2026-10-10T04:00:00.000001Z")


def test_the_deadline_day_is_the_window_zone_s_not_the_stamp_s() -> None:
    # the same 23:30-04:00 is 05:30 on Oct 10 in Paris: after the end of Oct 9 there; 15:30-04:00 is 21:30 in Paris
    paris = {**NEW_YORK, "timezone": PARIS}
    assert "run-after-deadline" not in _codes(paris, "2026-10-09", "2026-10-09T15:00:00-04:00",
                                              "2026-10-09T15:30:00-04:00")
    assert "run-after-deadline" in _codes(paris, "2026-10-09", "2026-10-09T23:00:00-04:00",
                                          "2026-10-09T23:30:00-04:00")


def test_a_date_only_deadline_in_the_decision_the_terminal_and_the_note(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    shutil.copytree(EXAMPLE, folder)
    _edit(folder / "protocol.json", lambda p: p.update(deadline="2026-10-09"))
    result = check_campaign(folder)
    assert [f.code for f in result.findings if f.is_error] == []
    assert result.decision["decision"]["answer"] == "rtx4090-batch/b4"
    assert result.decision["window"]["deadline"] == "2026-10-09"  # as written
    assert result.decision["window"]["ends_before_deadline"] is True  # the window ends at 09:00 that day
    assert "deadline 2026-10-09 (the end of that day) (met)" in format_decision(result.document)
    for lang, words in (("en", "deadline the end of Oct 9, 2026 (Europe/Paris)"),
                        ("de", "Frist Ende des 9. Okt. 2026 (Europe/Paris)")):
        body = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", render_html(result.decision, language=lang))).split())
        assert words in body, lang
    _edit(folder / "protocol.json", lambda p: p.update(deadline="2026-10-08"))
    assert check_campaign(folder).decision["window"]["ends_before_deadline"] is False


# --------------------------------------------------------------------------- what cannot be read as an instant


def test_a_stamp_without_offset_is_refused_with_what_to_write(tmp_path: Path) -> None:
    naive = "2026-10-05T07:30:02.050000"
    found = [f for f in _first_phase_at(tmp_path, naive) if f.field == "/phases/0/started_at"]
    assert [(f.code, f.file, f.value) for f in found] == [("schema-violation", FIRST, naive)]
    assert "offset" in str(found[0].fix) and "Z" in str(found[0].fix)
    folder = tmp_path / "registered"
    shutil.copytree(EXAMPLE, folder)
    _edit(folder / "protocol.json", lambda p: p.update(registered_at="2026-09-30T10:00:00"))
    found = [f for f in check_campaign(folder).findings if f.field == "/registered_at" and f.is_error]
    assert [(f.code, f.value) for f in found] == [("schema-violation", "2026-09-30T10:00:00")]
    assert "without offset" in str(found[0].fix)


def test_the_window_s_order_is_that_of_its_instants(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    shutil.copytree(EXAMPLE, folder)

    def window(start: str, end: str) -> list[str]:
        _edit(folder / "protocol.json", lambda p: p["window"].update(start=start, end=end))
        return [f.code for f in check_campaign(folder).findings if f.code == "empty-window"]

    # 09:30+05:00 (04:30Z) sorts after 09:00+02:00 (07:00Z) as text, and is before it
    assert window("2026-10-05T09:00+02:00", "2026-10-05T09:30+05:00") == ["empty-window"]
    # 08:30-04:00 (12:30Z) sorts before it as text, and is after it
    assert window("2026-10-05T09:00+02:00", "2026-10-09T08:30-04:00") == []


def test_an_offset_settles_a_time_the_zone_shows_twice() -> None:
    # 02:30 occurs twice in Paris on 2026-10-25; with its offset it is one instant
    assert instants.local_time_issue("2026-10-25T02:30", PARIS) is not None
    assert instants.local_time_issue("2026-10-25T02:30+01:00", PARIS) is None
    assert cost.window_hours("2026-10-25T02:30+02:00", "2026-10-26T02:30+01:00", PARIS, strict=True) == Decimal(25)
    out: list[Finding] = []
    protocol_rules.check_local_time("/window/start", "2026-10-25T02:30", PARIS, "protocol.json", out)
    assert [f.code for f in out] == ["window-time-ambiguous"]
    assert "2026-10-25T02:30+02:00 or 2026-10-25T02:30+01:00" in str(out[0].fix)


def test_stamps_are_parsed_as_instants() -> None:
    assert instants.parse_utc("2026-10-05T03:00:00-04:00") == datetime(2026, 10, 5, 7, tzinfo=UTC)
    assert instants.parse_utc("2026-10-05T07:00:00.0000009Z") == datetime(2026, 10, 5, 7, tzinfo=UTC)
    assert instants.parse_utc("2026-10-05T07:00:00") is None  # no offset: no instant
    assert instants.parse_utc("2026-10-05T07:00:00+24:00") is None
    end_of_day = instants.deadline_instant("2026-10-09", "America/New_York")
    assert end_of_day.astimezone(UTC) == datetime(2026, 10, 10, 4, tzinfo=UTC)
