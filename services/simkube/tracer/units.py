"""Durations, sizes and points in time as users write them on command lines and in config.

``7d``, ``90m``, ``10GiB``, ``-15m``, ``now`` and RFC 3339 timestamps: every parser says what
it expected when it gets something else, so a typo in a retention flag or an export window is
an error at once, not a surprise a week later.
"""

from __future__ import annotations

import re
from datetime import datetime

from simkube.core.durations import parse_seconds
from simkube.core.errors import ConfigError
from simkube.core.kubeapi import unix_s

_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB|K|M|G|T)?$",
                   re.IGNORECASE)
_SIZE_FACTOR = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
                "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
                "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def parse_duration(text: str, *, what: str) -> float:
    """Seconds in ``1h30m``, ``7d``, ``500ms``; ``0`` means zero (``core.durations``)."""
    return parse_seconds(str(text), field=what)


def parse_size(text: str, *, what: str) -> int:
    """Bytes in ``10GiB``, ``500MB``, ``1048576``."""
    match = _SIZE.match(str(text).strip())
    if match is None:
        raise ConfigError(f"{what} {text!r} is not a size; write e.g. 512MiB, 10GiB or a number "
                          "of bytes")
    return int(float(match[1]) * _SIZE_FACTOR[(match[2] or "b").lower()])


def parse_time_ms(text: str, *, what: str, now_ms: int) -> int:
    """Unix milliseconds of ``now``, ``-15m`` (relative to now) or an RFC 3339 timestamp."""
    value = text.strip()
    if value.lower() == "now":
        return now_ms
    if value.startswith("-"):
        return now_ms - round(parse_duration(value[1:], what=what) * 1000)
    try:
        moment = datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        raise ConfigError(f"{what} {text!r} is not a time; write now, a relative time such as "
                          "-15m or -2h, or an RFC 3339 timestamp such as "
                          "2026-01-31T12:00:00Z") from None
    if moment.tzinfo is None:
        raise ConfigError(f"{what} {text!r} has no time zone; add Z or an offset such as "
                          "+02:00")
    return round(moment.timestamp() * 1000)


def rfc3339_ms(text: object) -> int | None:
    """Milliseconds of a Kubernetes timestamp field, ``None`` when absent or malformed."""
    seconds = unix_s(text)
    return None if seconds is None else round(seconds * 1000)
