"""Durations as users write them (``90s``, ``15m``, ``2h``, ``1h30m``, ``250ms``, ``7d``).

Flags, config files, Simulation specs, gRPC fields and the annotations KWOK reads all use one
syntax, a superset of Go's ``time.ParseDuration`` numbers-with-units (plus days and weeks for
retention-like settings): one parser for the whole project, so ``10m`` means the same in a
node-groups file, a tracer config and a Simulation. A number without a unit is refused rather
than guessed (only a bare ``0`` is accepted where zero is), because "90" could mean seconds or
minutes and a wrong guess silently distorts a whole simulation.
"""

from __future__ import annotations

import re

from simkube.core.errors import ConfigError

UNIT_MS = {"ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0, "d": 86_400_000.0,
           "w": 604_800_000.0}
MAX_MS = 366 * 24 * 3_600_000  # a year: anything longer is a typo, not a simulation
_PART = r"(\d+(?:\.\d+)?)(ms|h|m|s|d|w)"
_WHOLE = re.compile(rf"(?:{_PART})+")
_PARTS = re.compile(_PART)
EXAMPLES = "for example 90s, 15m, 2h, 1h30m or 500ms"


class DurationError(ConfigError):
    """A value is not a duration we accept; ``field`` names where it came from."""

    def __init__(self, message: str, *, field: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.field = field


def parse_duration(text: str, *, field: str, allow_zero: bool = False) -> int:
    """Milliseconds in ``text``; a ``DurationError`` naming ``field`` if it is not one."""
    value = str(text).strip()
    if not value:
        raise DurationError(f"{field} is empty; give a duration, {EXAMPLES}", field=field)
    if value.startswith("-"):
        raise DurationError(f"{field} {text!r} is negative; durations count forward",
                            field=field)
    if value == "0" and allow_zero:
        return 0
    if not _WHOLE.fullmatch(value):
        hint = ("add a unit: s, m, h or ms" if value.replace(".", "", 1).isdigit()
                else None)
        raise DurationError(f"{field} {text!r} is not a duration; use numbers with units, "
                            f"{EXAMPLES}", field=field, hint=hint)
    total = sum(float(number) * UNIT_MS[unit] for number, unit in _PARTS.findall(value))
    if total > MAX_MS:
        raise DurationError(f"{field} {text!r} is longer than a year", field=field)
    milliseconds = round(total)
    if milliseconds <= 0 and not allow_zero:
        raise DurationError(f"{field} {text!r} is zero; it must be positive", field=field)
    return milliseconds


def parse_seconds(text: str, *, field: str, allow_zero: bool = True) -> float:
    """``parse_duration`` in seconds, for settings kept as float seconds."""
    return parse_duration(text, field=field, allow_zero=allow_zero) / 1000


def go_duration(milliseconds: float) -> str:
    """``milliseconds`` in a form Go's ``time.ParseDuration`` (and so KWOK and CA) reads."""
    return f"{max(0, round(milliseconds))}ms"


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
