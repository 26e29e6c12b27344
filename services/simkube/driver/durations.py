"""Durations as users write them (``90s``, ``15m``, ``2h``, ``1h30m``, ``250ms``).

Flags, gRPC fields and the annotations KWOK reads all use one syntax, a subset of Go's
``time.ParseDuration`` (KWOK parses the annotations with it): a sequence of numbers, each with
a unit. A number without a unit is refused rather than guessed, because "90" could mean
seconds or minutes and a wrong guess silently distorts a whole simulation.
"""

from __future__ import annotations

import re

from simkube.driver.errors import DriverInputError

UNIT_MS = {"ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}
MAX_MS = 366 * 24 * 3_600_000  # a year: anything longer is a typo, not a simulation
_PART = r"(\d+(?:\.\d+)?)(ms|h|m|s)"
_WHOLE = re.compile(rf"(?:{_PART})+")
_PARTS = re.compile(_PART)
EXAMPLES = "for example 90s, 15m, 2h, 1h30m or 500ms"


def parse_duration(text: str, *, field: str, allow_zero: bool = False) -> int:
    """Milliseconds in ``text``; a ``DriverInputError`` naming ``field`` if it is not one."""
    value = text.strip()
    if not value:
        raise DriverInputError(f"{field} is empty; give a duration, {EXAMPLES}", field=field)
    if value.startswith("-"):
        raise DriverInputError(f"{field} {text!r} is negative; durations count forward",
                               field=field)
    if not _WHOLE.fullmatch(value):
        hint = ("add a unit: s, m, h or ms" if value.replace(".", "", 1).isdigit()
                else None)
        raise DriverInputError(f"{field} {text!r} is not a duration; use numbers with units, "
                               f"{EXAMPLES}", field=field, hint=hint)
    total = sum(float(number) * UNIT_MS[unit] for number, unit in _PARTS.findall(value))
    if total > MAX_MS:
        raise DriverInputError(f"{field} {text!r} is longer than a year", field=field)
    milliseconds = round(total)
    if milliseconds <= 0 and not allow_zero:
        raise DriverInputError(f"{field} {text!r} is zero; it must be positive", field=field)
    return milliseconds


def go_duration(milliseconds: int) -> str:
    """``milliseconds`` in a form Go's ``time.ParseDuration`` (and so KWOK) reads exactly."""
    return f"{max(0, milliseconds)}ms"


def human_duration(milliseconds: float) -> str:
    """``1h02m03s`` / ``4.2s`` / ``12ms``: short, for progress lines and errors."""
    if milliseconds < 1000:
        return f"{milliseconds:.0f}ms"
    seconds = milliseconds / 1000
    if seconds < 60:
        return f"{seconds:.1f}s"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"
