"""Small formatting filters for the templates: each returns plain text (autoescaped), never HTML."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import SupportsInt

from markupsafe import Markup

from generator.audit.load.textsafety import visible as _visible
from generator.audit.recompute.decision.model import FindingRef
from generator.render.view.fields import fixed_in_words, held_fixed

DASH = "\u2014"
# The note's layout time grows with the square of an unbroken run of characters (WeasyPrint's overflow-wrap
# tries every break point; the measured cost is in docs/performance.md). So the note shows at most this much
# of any one text; the whole text stays in decision.json (and the grid), and the note says so.
TEXT_CHARS = 2000
ELLIPSIS = "\u2026"


def plain(value: object) -> str:
    """Any value as text; None as a dash."""
    if value is None:
        return DASH
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def visible(value: object) -> str:
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


def _english(text: str) -> str:
    return text


def shortened(length: str | SupportsInt, where: str = "decision.json", gettext: Callable[[str], str] = _english,
              count: Callable[[object], str] = "{:,}".format) -> str:
    """What the note says after a text it cut: how long the whole text is and where to read it (in the note's
    language with its `gettext` and `count`)."""
    _ = gettext
    words = _("[shortened: %(length)s characters; the whole text is in %(where)s]")
    return f"{ELLIPSIS} " + words % {"length": count(int(length)), "where": where}


_CHART_SOURCE = re.compile(r"data:image/(png|svg\+xml);base64,[A-Za-z0-9+/]*={0,2}")


def chart_source(value: object) -> object:
    """A chart's image source (the tool's own data URL, PNG or SVG) as Markup, so that the cut
    of long texts in `shown` leaves it whole; its characters are only those checked here. Anything else is
    returned as it is, and is cut and escaped like any text."""
    if isinstance(value, str) and _CHART_SOURCE.fullmatch(value):
        return Markup(value)
    return value


def shown(value: object, gettext: Callable[[str], str] = _english,
          count: Callable[[object], str] = "{:,}".format) -> object:
    """The environment's finalize: every value the templates print passes here, so that no input text can
    reorder or hide what the note shows ("50.00 USD" displayed for other bytes). Markup (a macro's output,
    already shown this way) gets the tag as HTML entities; other values are left to autoescaping. A text
    longer than TEXT_CHARS is cut there, with a word saying so (a grid note is cut shorter, in the view)."""
    if isinstance(value, Markup):
        return Markup(_visible(str(value), "&lt;U+{:04X}&gt;"))
    if isinstance(value, str):
        text, length = shorten(value, TEXT_CHARS)
        return text if length is None else text + " " + shortened(length, gettext=gettext, count=count)
    return value


def finding_where(ref: FindingRef) -> str:
    """A finding reference as its code and place: 'ids-mismatch (resultats-bruts.csv:4)'."""
    place = f"{ref.file}:{ref.line}" if ref.line else str(ref.file)
    return f"{ref.code} ({place})"


_CSS_PLACES = {"{bundle}": "string(bundle)", "{page}": "counter(page)", "{pages}": "counter(pages)"}
_CSS_SPLIT = re.compile("(" + "|".join(re.escape(k) for k in _CSS_PLACES) + ")")


def css_content(text: object) -> Markup:
    """A translated running footer as a CSS `content` value: its words as CSS strings in which every character
    but letters, digits and spaces is a hex escape (nothing can close the string or the style element), and
    {bundle}, {page} and {pages} as the bundle ID and the page counters."""
    words = text.unescape() if isinstance(text, Markup) else str(text)
    parts = []
    for part in _CSS_SPLIT.split(words):
        if part in _CSS_PLACES:
            parts.append(_CSS_PLACES[part])
        elif part:
            parts.append('"' + "".join(c if c.isalnum() or c == " " else f"\\{ord(c):06x}" for c in part) + '"')
    return Markup(" ".join(parts) or '""')


def finalize_in(gettext: Callable[[str], str], count: Callable[[object], str]) -> Callable[[object], object]:
    """`shown` in the note's language: the word after a cut text is the language's, its count grouped its way."""
    return functools.partial(shown, gettext=gettext, count=count)


def worded(gettext: Callable[[str], str], count: Callable[[object], str]) -> dict[str, Callable[[object], object]]:
    """The filters that need words of the note's language (`gettext` of its catalogue, its `count` format):
    yes/no, and `cut`, for a text placed into a translated sentence, cut at TEXT_CHARS as every printed text
    is (the sentence is Markup, which `shown` leaves whole)."""
    _ = gettext
    finalize = finalize_in(gettext, count)

    def cut(value: object) -> object:
        return finalize(value) if isinstance(value, str) and not isinstance(value, Markup) else value

    def yesno(value: object) -> str:
        """Booleans as yes/no; None as a dash (not recorded)."""
        if value is None:
            return DASH
        return str(_("yes") if value else _("no"))

    return {"yesno": yesno, "cut": cut}


def degradation(value: object, gettext: Callable[[str], str] = _english,
                metric: Callable[[object], str] = "{:.4f}".format) -> str:
    """A degradation against the reference (positive: worse) as the reader says it: a negative one is an
    improvement, worded so ("0.0327 better than the reference"), never "-0.0327"; one that rounds to zero at the
    metric's four decimals is no change either way; None as a dash (no completed run)."""
    _ = gettext
    if value is None:
        return DASH
    shown = metric(abs(_number(value)))
    if _number(value) >= 0 or shown == metric(0):
        return metric(max(_number(value), 0.0))
    return _("%(value)s better than the reference") % {"value": shown}


def _number(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise TypeError(f"a degradation is a number, not {value!r}")


FILTERS = {"chart_source": chart_source, "visible": visible, "plain": plain, "finding_where": finding_where,
           "css_content": css_content, "held_fixed": held_fixed,
           "fixed_in_words": fixed_in_words}
