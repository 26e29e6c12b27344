"""How every view of a report writes a number: one function, so the terminal table, the HTML
page, the headlines and the callouts can never disagree on a value's text."""

from __future__ import annotations

import math

_FORMATS = {"usd": "${:,.2f}", "hours": "{:,.2f} h", "seconds": "{:,.1f} s", "ms": "{:,.1f} ms",
            "speed": "{:,.2f}x"}


def format_value(value: float | None, *, kind: str) -> str:
    """Dollars with cents, hours with two decimals, counts without decimals; '-' for None."""
    if value is None:
        return "-"
    if math.isinf(value):
        return "∞"
    if kind in _FORMATS:
        return _FORMATS[kind].format(value)
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"
