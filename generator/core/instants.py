"""Time stamps as instants: a stamp and its offset, a protocol's local time in its zone, a date-only deadline.

Every time gpu-audit compares is an instant, never text. A stamp of a run or of the registration carries its
offset (`Z`, `+02:00`, `-04:00`): without one it names no moment. A window time or a deadline is the wall clock
of the window's IANA zone, or, written with an offset, the instant it names. A deadline written as a date alone
is the end of that day in the window's zone: the runs must end before the next day starts there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from generator.core.errors import LocalTimeError

# `YYYY-MM-DDTHH:MM:SS[.fraction]` and its offset; the fraction beyond microseconds is not compared.
_STAMP = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_utc(text: object) -> datetime | None:
    """A `YYYY-MM-DDTHH:MM:SS[.ffffff]` stamp with `Z` or an offset (`+02:00`) as the UTC instant it names;
    None when it is no such moment (no offset included). Two stamps are compared as instants, never as text."""
    match = _STAMP.match(text) if isinstance(text, str) else None
    if match is None:
        return None
    y, mo, d, h, mi, s, frac, zone = match.groups()
    try:
        offset = UTC if zone == "Z" else timezone((-1 if zone[0] == "-" else 1)
                                                  * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
        return datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), int((frac or "0")[:6].ljust(6, "0")),
                        tzinfo=offset).astimezone(UTC)
    except (ValueError, OverflowError):  # 2026-02-30 matches the pattern but is no date; +24:00 is no offset
        return None


def has_offset(text: str) -> bool:
    """Whether a date-time is written with its offset (`Z`, `+02:00`): it names an instant, whatever the zone."""
    try:
        return not is_date(text) and datetime.fromisoformat(text).tzinfo is not None
    except ValueError:
        return False


def is_date(text: str) -> bool:
    """Whether the text is a date alone (`YYYY-MM-DD`), as a deadline may be written."""
    return _DATE.match(text) is not None


def zone_of(tz: str) -> ZoneInfo:
    """The IANA zone by name; LocalTimeError when there is none of that name."""
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise LocalTimeError(f"{tz!r} is not an IANA time zone; use a name such as Europe/Paris or UTC") from None


def parse_local(text: str, tz: str) -> datetime:
    """A window time as an aware datetime in its zone: the zone's wall clock, or the instant an offset names."""
    zone = zone_of(tz)
    try:
        written = None if is_date(text) else datetime.fromisoformat(text)
    except ValueError:
        written = None
    if written is None:
        raise LocalTimeError(f"{text!r} is not a local date-time; write YYYY-MM-DDTHH:MM (the wall clock of {tz}), "
                             "or add the offset it was read in (YYYY-MM-DDTHH:MM+02:00)")
    if written.tzinfo is not None:
        try:
            return written.astimezone(zone)
        except OverflowError:
            raise LocalTimeError(f"{text!r} cannot be placed in {tz}") from None
    return written.replace(tzinfo=zone)


def deadline_instant(text: str, tz: str) -> datetime:
    """The deadline as an aware datetime in the window's zone: a date alone is the end of that day there (the
    first instant of the next day, 24:00), any other value a window time (parse_local)."""
    if not is_date(text):
        return parse_local(text, tz)
    zone = zone_of(tz)
    try:
        day = date.fromisoformat(text)
        return datetime.combine(day + timedelta(days=1), time(0), tzinfo=zone)
    except (ValueError, OverflowError):
        raise LocalTimeError(f"{text!r} is not a real date; write YYYY-MM-DD") from None


@dataclass(frozen=True)
class LocalTimeIssue:
    """A local time that the zone's clocks skip (`nonexistent`) or show twice (`ambiguous`)."""

    kind: str
    utc_offsets: tuple[str, str]  # the offsets the two readings (fold 0 and fold 1) would give
    read_as: str  # nonexistent: the wall time the instant of fold 0 really shows; ambiguous: the UTC instants


def local_time_issue(text: str, tz: str) -> LocalTimeIssue | None:
    """Whether a local wall-clock time falls in a daylight-saving gap or overlap of its IANA zone.

    Python places such a time silently (PEP 495: fold 0 takes the offset before the change), which made a
    window across the spring gap 1 h shorter and one in the autumn overlap 1 h longer than meant. A time is
    nonexistent when it does not come back from UTC unchanged, ambiguous when fold 0 and fold 1 give
    different offsets. A time written with its offset names one instant: no issue. Unparseable input is None
    here: parse_local names it.
    """
    if has_offset(text):
        return None
    try:
        naive = parse_local(text, tz).replace(tzinfo=None)
        zone = ZoneInfo(tz)
        first, second = naive.replace(tzinfo=zone, fold=0), naive.replace(tzinfo=zone, fold=1)
        if first.utcoffset() == second.utcoffset():
            return None
        offsets = (_offset(first), _offset(second))
        back = first.astimezone(UTC).astimezone(zone)
        if back.replace(tzinfo=None) != naive:
            return LocalTimeIssue("nonexistent", offsets, back.replace(tzinfo=None).isoformat(timespec="minutes"))
        instants = [d.astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ") for d in (first, second)]
        return LocalTimeIssue("ambiguous", offsets, " or ".join(instants))
    except (LocalTimeError, OverflowError, ValueError):
        return None


def _offset(moment: datetime) -> str:
    """The moment's UTC offset as ISO 8601 writes it: `+01:00`, `-05:00`, `+00:00` for UTC itself, and the seconds
    of a local mean time in full (`-00:16:08` in Abidjan until 1912), so that the offset a message suggests writing
    names the very instant meant."""
    return moment.isoformat(timespec="seconds")[len("YYYY-MM-DDTHH:MM:SS"):]
