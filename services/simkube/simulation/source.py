"""What a Simulation replays: ``spec.trace``, one of a path, a URL or a tracer's window.

sk-driver reads a path on its own host, an http(s):// or file:// URL, or streams a window from
an sk-tracer. Exactly one must be given; each is checked here the way sk-driver will use it
(an absolute path, a URL scheme it speaks, HOST:PORT and RFC 3339 times with a zone), so a
mistake is a ``SpecError`` naming the field before a run starts rather than a failed run.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from simkube.simulation.errors import SpecError

URL_SCHEMES = re.compile(r"(https?|file)://")
HOST_PORT = re.compile(r"\[?[^\s/]+\]?:\d{1,5}")


class TraceSource(StrEnum):
    """The keys of ``spec.trace``, exactly one of which a Simulation sets."""

    PATH = "path"  # a file on sk-driver's host
    URL = "url"  # http(s):// or file://
    TRACER = "tracer"  # a window of an sk-tracer


@dataclass(frozen=True, kw_only=True)
class TracerWindow:
    address: str
    start_ms: int  # 0: the oldest the tracer keeps
    end_ms: int  # 0: now
    namespaces: tuple[str, ...]
    tls: bool


def mapping(value: Any, *, field: str) -> dict[str, Any]:
    """``value`` as a mapping (absent: empty); ``SpecError`` naming ``field`` otherwise."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SpecError(f"{field} must be a mapping")
    return value


def parse_time(value: Any, *, field: str) -> int:
    """RFC 3339 as Unix milliseconds; empty means 0 (the driver's "unbounded")."""
    if value in (None, ""):
        return 0
    try:
        parsed = datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise SpecError(f"{field} {value!r} is not an RFC 3339 time "
                        "(for example 2026-11-21T10:00:00Z)") from None
    if parsed.tzinfo is None:
        raise SpecError(f"{field} {value!r} has no time zone; add Z or an offset")
    return int(parsed.timestamp() * 1000)


def parse_source(trace: dict[str, Any]) -> tuple[str | None, TracerWindow | None]:
    """(the path or URL sk-driver reads, None) or (None, the tracer's window)."""
    given = [key for key in TraceSource if trace.get(key) not in (None, "", {})]
    if len(given) != 1:
        found = ", ".join(given) or "none"
        raise SpecError(f"spec.trace needs exactly one of path, url or tracer (found: {found})")
    if TraceSource.PATH in given:
        path = str(trace[TraceSource.PATH])
        if not path.startswith("/"):
            raise SpecError(f"spec.trace.path {path!r} must be absolute (a file on "
                            "sk-driver's host)")
        return path, None
    if TraceSource.URL in given:
        url = str(trace[TraceSource.URL])
        if not URL_SCHEMES.match(url):
            raise SpecError(f"spec.trace.url {url!r} must start with http://, https:// "
                            "or file://")
        return url, None
    return None, _tracer_window(mapping(trace[TraceSource.TRACER], field="spec.trace.tracer"))


def _tracer_window(raw: dict[str, Any]) -> TracerWindow:
    address = str(raw.get("address") or "")
    if not HOST_PORT.fullmatch(address):
        raise SpecError(f"spec.trace.tracer.address {address!r} is not HOST:PORT")
    start = parse_time(raw.get("start"), field="spec.trace.tracer.start")
    end = parse_time(raw.get("end"), field="spec.trace.tracer.end")
    if start and end and end <= start:
        raise SpecError("spec.trace.tracer.end must be after spec.trace.tracer.start")
    namespaces = raw.get("namespaces") or []
    if not isinstance(namespaces, list):
        raise SpecError("spec.trace.tracer.namespaces must be a list of namespaces")
    return TracerWindow(address=address, start_ms=start, end_ms=end,
                        namespaces=tuple(str(n) for n in namespaces),
                        tls=bool(raw.get("tls", False)))
