"""Small formatting filters for the templates: each returns plain text (autoescaped), never HTML."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Any

GIB = 2**30
DASH = "\u2014"


def usd(cents: Any) -> str:
    """Integer cents as '110.00 USD'; None as 'undefined'."""
    if cents is None:
        return "undefined"
    with localcontext() as ctx:
        ctx.prec = max(28, len(str(cents)) + 4)  # exact at any size
        value = (Decimal(str(cents)) / 100).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        return f"{value:,.2f} USD"


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


FILTERS = {"usd": usd, "seconds": seconds, "gib": gib, "nbytes": nbytes, "metric": metric, "yesno": yesno,
           "count": count, "plain": plain}
