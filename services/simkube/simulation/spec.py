"""A Simulation's spec, parsed and checked into a typed value before anything is created.

The CRD's schema already refuses most mistakes, but a Simulation may come from an older CRD
or a cluster where the schema was installed by hand, and some checks (RFC 3339 windows, the
duration grammar the driver speaks) are clearer here. Every problem becomes a ``SpecError``
whose message names the field, which sk-ctrl copies into ``status.message`` and an Event.

The spec is parsed once, under every rule a later stage would apply — sk-driver's speed
ceiling included (``core.simtime.parse_speed``) — so skctl can refuse a Simulation before it
is created instead of leaving a Failed one behind, and sk-ctrl hands sk-driver only what it
will take. The speed is a ``TimeScale`` from here on; it becomes a float again only on the
wire (the driver's request, the run's ConfigMap).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from simkube.core.durations import DurationError, parse_duration
from simkube.core.errors import SimkubeError
from simkube.core.simtime import SpeedError, TimerSettings, TimeScale, parse_speed
from simkube.simulation.names import DNS_LABEL
from simkube.simulation.timers import TimerSpecError, seed_of, timer_settings

MAX_PREFIX = 40  # room for "-<namespace>" within a 63-character namespace name
MAX_REPETITIONS = 100


class TraceSource(StrEnum):
    """The keys of ``spec.trace``, exactly one of which a Simulation sets."""

    PATH = "path"  # a file on sk-driver's host
    URL = "url"  # http(s):// or file://
    TRACER = "tracer"  # a window of an sk-tracer


class SpecError(SimkubeError):
    """A Simulation's spec cannot be run; the message names the field."""


@dataclass(frozen=True, kw_only=True)
class TracerWindow:
    address: str
    start_ms: int
    end_ms: int
    namespaces: tuple[str, ...]
    tls: bool


@dataclass(frozen=True, kw_only=True)
class SimulationSpec:
    trace_url: str | None  # spec.trace.path or spec.trace.url, as sk-driver reads it
    tracer: TracerWindow | None
    namespace_prefix: str
    scale: TimeScale  # spec.speed
    duration: str
    repetitions: int
    startup_delay: str
    startup_jitter: str
    lifetime_jitter: str
    node_groups: str | None  # None: sk-ctrl's --node-groups
    reset_node_groups: bool
    paused: bool
    seed: int
    timers: TimerSettings


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


def _mapping(value: Any, *, field: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SpecError(f"{field} must be a mapping")
    return value


def _duration(value: Any, *, field: str, allow_zero: bool = True) -> str:
    if value in (None, ""):
        return ""
    try:
        parse_duration(str(value), field=field, allow_zero=allow_zero)
    except DurationError as exc:
        raise SpecError(exc.message) from None
    return str(value)


def _source(trace: dict[str, Any]) -> tuple[str | None, TracerWindow | None]:
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
        if not re.match(r"(https?|file)://", url):
            raise SpecError(f"spec.trace.url {url!r} must start with http://, https:// "
                            "or file://")
        return url, None
    raw = _mapping(trace[TraceSource.TRACER], field="spec.trace.tracer")
    address = str(raw.get("address") or "")
    if not re.fullmatch(r"\[?[^\s/]+\]?:\d{1,5}", address):
        raise SpecError(f"spec.trace.tracer.address {address!r} is not HOST:PORT")
    start = parse_time(raw.get("start"), field="spec.trace.tracer.start")
    end = parse_time(raw.get("end"), field="spec.trace.tracer.end")
    if start and end and end <= start:
        raise SpecError("spec.trace.tracer.end must be after spec.trace.tracer.start")
    namespaces = raw.get("namespaces") or []
    if not isinstance(namespaces, list):
        raise SpecError("spec.trace.tracer.namespaces must be a list of namespaces")
    return None, TracerWindow(address=address, start_ms=start, end_ms=end,
                              namespaces=tuple(str(n) for n in namespaces),
                              tls=bool(raw.get("tls", False)))


def parse_spec(simulation: dict[str, Any]) -> SimulationSpec:
    """The spec of ``simulation`` (a whole object) checked in full; ``SpecError`` otherwise."""
    spec = _mapping(simulation.get("spec"), field="spec")
    name = str((simulation.get("metadata") or {}).get("name") or "")
    trace_url, tracer = _source(_mapping(spec.get("trace"), field="spec.trace"))
    prefix = str(spec.get("namespacePrefix") or "virtual")
    if not DNS_LABEL.fullmatch(prefix) or len(prefix) > MAX_PREFIX:
        raise SpecError(f"spec.namespacePrefix {prefix!r} must be a DNS label of at most "
                        f"{MAX_PREFIX} characters (lowercase letters, digits, '-')")
    try:
        scale = parse_speed(spec.get("speed", 1), field="spec.speed")
    except SpeedError as exc:
        raise SpecError(exc.message) from None
    repetitions = spec.get("repetitions", 1)
    if (not isinstance(repetitions, int) or isinstance(repetitions, bool)
            or not 1 <= repetitions <= MAX_REPETITIONS):
        raise SpecError(f"spec.repetitions {repetitions!r} must be a whole number from 1 "
                        f"to {MAX_REPETITIONS}")
    timing = _mapping(spec.get("podTiming"), field="spec.podTiming")
    groups = _mapping(spec.get("nodeGroups"), field="spec.nodeGroups")
    paused = spec.get("pausedTime")
    try:
        seed, timers = seed_of(spec, name=name), timer_settings(spec)
    except TimerSpecError as exc:
        raise SpecError(exc.message) from None
    if paused not in (None, ""):
        parse_time(paused, field="spec.pausedTime")
    return SimulationSpec(
        trace_url=trace_url, tracer=tracer, namespace_prefix=prefix, scale=scale,
        duration=_duration(spec.get("duration"), field="spec.duration", allow_zero=False),
        repetitions=repetitions,
        startup_delay=_duration(timing.get("startupDelay"), field="spec.podTiming.startupDelay"),
        startup_jitter=_duration(timing.get("startupJitter"),
                                 field="spec.podTiming.startupJitter"),
        lifetime_jitter=_duration(timing.get("lifetimeJitter"),
                                  field="spec.podTiming.lifetimeJitter"),
        node_groups=str(groups["config"]) if groups.get("config") else None,
        reset_node_groups=bool(groups.get("resetBeforeRun", True)),
        paused=paused not in (None, ""), seed=seed, timers=timers)
