"""A Simulation's timers and seed, read from its spec into ``TimerSettings``.

Users write the values they know from production, in trace time, under the section of the
component that reads them (``spec.autoscaler.clusterAutoscaler``,
``spec.autoscaler.karpenter``, ``spec.scheduler``, ``spec.controllerManager``,
``spec.metricsServer``), with the
component's own names. A name the catalogue does not know is refused with the known ones,
because a misspelt timer silently keeping its default would distort a run without anyone
noticing. ``Never`` is accepted where the component takes it (Karpenter's consolidateAfter).
"""

from __future__ import annotations

import difflib
import zlib
from collections.abc import Mapping
from typing import Any

from simkube.core.durations import DurationError, parse_duration
from simkube.core.errors import ConfigError, SimkubeError
from simkube.core.simtime import TimerSettings
from simkube.core.timers import BY_KEY, NEVER, Component, Timer, for_component

FIELDS = {Component.CLUSTER_AUTOSCALER: "spec.autoscaler.clusterAutoscaler",
          Component.KARPENTER: "spec.autoscaler.karpenter",
          Component.KUBE_SCHEDULER: "spec.scheduler",
          Component.KUBE_CONTROLLER_MANAGER: "spec.controllerManager",
          Component.METRICS_SERVER: "spec.metricsServer"}
MAX_SEED = 2**63 - 1
# Each component's section, as ``--timer SECTION.NAME`` and a timer's key name it, and where
# it sits in the spec (``clusterAutoscaler`` → ``autoscaler.clusterAutoscaler``).
SECTIONS = {component.value: tuple(field.split(".")[1:]) for component, field in FIELDS.items()}


class TimerSpecError(SimkubeError):
    """A timer or seed in a Simulation's spec is wrong; the message names the field."""

    exit_code = 2


def _section(spec: dict[str, Any], component: Component) -> dict[str, Any]:
    path = FIELDS[component].split(".")[1:]
    value: Any = spec
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
        if value is None:
            return {}
    if not isinstance(value, dict):
        raise TimerSpecError(f"{FIELDS[component]} must be a mapping of timer names to "
                             "durations")
    return value


def _value_ms(timer: Timer, raw: Any, *, field: str) -> int:
    if timer.may_be_never and isinstance(raw, str) and raw.strip() == "Never":
        return NEVER
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise TimerSpecError(f"{field} {raw!r} is not a duration (for example 10s or 10m)")
    if timer.whole_seconds and isinstance(raw, str) and raw.strip().isdigit():
        raw = int(raw)  # "podMaxBackoffSeconds=60" from a command line
    if isinstance(raw, (int, float)):  # seconds, as the component's own config writes them
        if raw < 0:
            raise TimerSpecError(f"{field} {raw!r} is negative; durations count forward")
        return round(raw * 1000)
    try:
        return parse_duration(raw, field=field, allow_zero=True)
    except DurationError as exc:
        raise TimerSpecError(exc.message) from None


def timer_settings(spec: dict[str, Any]) -> TimerSettings:
    """Every timer the spec sets, in trace milliseconds; ``TimerSpecError`` otherwise."""
    values: dict[str, int] = {}
    for component, field in FIELDS.items():
        known = {timer.name: timer for timer in for_component(component)}
        for name, raw in _section(spec, component).items():
            timer = known.get(str(name).removeprefix("--"))
            if timer is None:
                close = difflib.get_close_matches(str(name), list(known), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise TimerSpecError(f"{field}.{name} is not a timer sk-ctrl scales{hint}; "
                                     f"known: {', '.join(sorted(known))}")
            values[timer.key] = _value_ms(timer, raw, field=f"{field}.{name}")
    settings = TimerSettings(values=values)
    initial = settings.trace_ms(BY_KEY["scheduler.podInitialBackoffSeconds"])
    maximum = settings.trace_ms(BY_KEY["scheduler.podMaxBackoffSeconds"])
    if maximum < initial:
        raise TimerSpecError(f"spec.scheduler.podMaxBackoffSeconds ({maximum / 1000:g}s) is "
                             f"below podInitialBackoffSeconds ({initial / 1000:g}s)")
    return settings


def seed_of(spec: dict[str, Any], *, name: str) -> int:
    """``spec.seed``, or one derived from the Simulation's name (same name, same draws)."""
    raw = spec.get("seed")
    if raw is None:
        return zlib.crc32(name.encode())
    if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw <= MAX_SEED:
        raise TimerSpecError(f"spec.seed {raw!r} must be a whole number from 0 to {MAX_SEED}")
    return raw


def timer_spec(values: Mapping[str, Any]) -> dict[str, Any]:
    """``{"clusterAutoscaler.scan-interval": "10s", ...}`` as the spec sections that hold them
    (``spec.autoscaler.clusterAutoscaler.scan-interval``); the names are checked later, by
    ``timer_settings``, with the known ones in the message."""
    spec: dict[str, Any] = {}
    for key, value in values.items():
        section, _, name = key.partition(".")
        place = spec
        for step in SECTIONS[section]:
            place = place.setdefault(step, {})
        place[name] = value
    return spec


def timer_sections(timers: tuple[str, ...]) -> dict[str, Any]:
    """``--timer clusterAutoscaler.scan-interval=10s`` etc. as spec sections."""
    values: dict[str, str] = {}
    for given in timers:
        key, equals, value = given.partition("=")
        section, dot, name = key.partition(".")
        if not equals or not dot or section not in SECTIONS or not name or not value:
            raise ConfigError(f"--timer {given!r} is not SECTION.NAME=VALUE with SECTION one "
                              f"of {', '.join(SECTIONS)}",
                              hint="for example --timer clusterAutoscaler.scan-interval=10s")
        values[key] = value
    return timer_spec(values)
