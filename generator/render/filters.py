"""Small formatting filters for the templates: each returns plain text (autoescaped), never HTML."""

from __future__ import annotations

import re
from typing import Any

from markupsafe import Markup

from generator.audit.textsafety import visible as _visible
from generator.core.money import usd_amount

GIB = 2**30
DASH = "\u2014"
# The note's layout time grows with the square of an unbroken run of characters (WeasyPrint's overflow-wrap
# tries every break point): 100,000 characters took minutes. So the note shows at most this much of any one
# text; the whole text stays in decision.json (and the grid), and the note says so.
TEXT_CHARS = 2000
ELLIPSIS = "\u2026"


def usd(cents: Any) -> str:
    """Integer cents as '110.00 USD'; None as 'undefined'."""
    return "undefined" if cents is None else f"{usd_amount(cents, grouping=True)} USD"


def seconds(value: Any, digits: int = 3) -> str:
    """Seconds with a unit; None as a dash (not recorded)."""
    if value is None:
        return DASH
    return f"{float(value):,.{digits}f} s"


def gib(value: Any) -> str:
    """Bytes as GiB (2**30) with two decimals; None as a dash."""
    if value is None:
        return DASH
    return f"{int(value) / GIB:,.2f} GiB"


def nbytes(value: Any) -> str:
    """Exact bytes with thousands separators; None as a dash."""
    if value is None:
        return DASH
    return f"{int(value):,} B"


def metric(value: Any) -> str:
    """A metric value with four decimals; None as a dash."""
    if value is None:
        return DASH
    return f"{float(value):.4f}"


def yesno(value: Any) -> str:
    """Booleans as yes/no; None as a dash (not recorded)."""
    if value is None:
        return DASH
    return "yes" if value else "no"


def count(value: Any) -> str:
    """An integer with thousands separators; None as a dash."""
    if value is None:
        return DASH
    return f"{int(value):,}"


def plain(value: Any) -> str:
    """Any value as text; None as a dash."""
    if value is None:
        return DASH
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def decides(value: Any) -> str:
    """Whether the timing series decides: yes/no, or 'not applicable' when no order rests on time."""
    if value is None:
        return "not applicable (no order rests on time)"
    return "yes" if value else "no"


def visible(value: Any) -> str:
    """Text with its invisible and bidirectional control characters shown as `<U+202E>`, never applied."""
    return _visible(plain(value))


def shorten(text: str, limit: int) -> tuple[str, int | None]:
    """The visible form of text cut to at most `limit` characters, and the length of the whole text when it
    was cut (None when it was not). The cut is made after the controls are tagged (one `<U+202E>` is eight
    characters) and never inside a tag."""
    seen = _visible(text)
    if len(seen) <= limit:
        return seen, None
    cut = seen[:limit]
    opened = cut.rfind("<U+")
    if opened != -1 and ">" not in cut[opened:]:
        cut = cut[:opened]  # a tag cut in half would read as text of its own
    return cut, len(text)


def shortened(length: Any, where: str = "decision.json") -> str:
    """What the note says after a text it cut: how long the whole text is and where to read it."""
    return f"{ELLIPSIS} [shortened: {int(length):,} characters; the whole text is in {where}]"


_CHART_SOURCE = re.compile(r"data:image/(png|svg\+xml);base64,[A-Za-z0-9+/]*={0,2}")


def chart_source(value: Any) -> Any:
    """A chart's image source (the tool's own data URL, PNG or SVG) as Markup, so that the cut
    of long texts in `shown` leaves it whole; its characters are only those checked here. Anything else is
    returned as it is, and is cut and escaped like any text."""
    if isinstance(value, str) and _CHART_SOURCE.fullmatch(value):
        return Markup(value)
    return value


def shown(value: Any) -> Any:
    """The environment's finalize: every value the templates print passes here, so that no input text can
    reorder or hide what the note shows ("50.00 USD" displayed for other bytes). Markup (a macro's output,
    already shown this way) gets the tag as HTML entities; other values are left to autoescaping. A text
    longer than TEXT_CHARS is cut there, with a word saying so (a grid note is cut shorter, in the view)."""
    if isinstance(value, Markup):
        return Markup(_visible(str(value), "&lt;U+{:04X}&gt;"))
    if isinstance(value, str):
        text, length = shorten(value, TEXT_CHARS)
        return text if length is None else text + " " + shortened(length)
    return value


FILTERS = {"chart_source": chart_source, "visible": visible, "decides": decides, "usd": usd, "seconds": seconds,
           "gib": gib, "nbytes": nbytes, "metric": metric, "yesno": yesno, "count": count, "plain": plain}
