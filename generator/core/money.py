"""Money as text: integer (or exact decimal) cents to a USD amount, exact at any size, one rounding rule."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, localcontext

__all__ = ["usd_amount", "usd_decimal"]


def usd_decimal(cents: int | Decimal | str) -> Decimal:
    """Cents (whole, or a fraction of a cent such as a cost per result of "2062.50") as US dollars rounded to the
    cent, half up (the commercial rule): 2062.50 cents -> 20.63. The terminal and the note both round here, so
    that they never show two amounts for one figure (Babel alone would round half to even: 20.62).

    The precision grows with the number, so that no amount is ever rounded to a float's digits.
    """
    with localcontext() as ctx:
        ctx.prec = max(28, len(str(cents)) + 4)
        return (Decimal(str(cents)) / 100).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def usd_amount(cents: int | Decimal | str, *, grouping: bool = False) -> str:
    """Cents as a USD amount with two decimals, half up: 207100 -> "2071.00" ("2,071.00" with grouping)."""
    value = usd_decimal(cents)
    return f"{value:,.2f}" if grouping else f"{value:.2f}"
