"""The what-if transforms of ``skctl trace edit``, and reading them from a YAML file.

The pod-autoscaling steps (an HPA's target and bounds, the recorded load) live in
``autoscaling_steps`` and are part of ``EditStep`` here.

Each step is a small typed value; the YAML file is a list of one-key mappings applied in
order, so ``[window, keep, scale-replicas]`` reads as what it does. Every mistake in the
file is a ``ConfigError`` naming the step and field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from simkube.core.errors import ConfigError
from simkube.trace.model.selectors import Match, parse_selector
from simkube.trace.tools.autoscaling_steps import DropUsage, HpaChange, ScaleLoad, hpa_name

__all__ = ["DropUsage", "EditStep", "HpaChange", "NodeSelector", "ScaleLoad", "ScaleReplicas",
           "ScaleResources", "Select", "TimePoint", "TimeStretch", "TimeWindow", "Tolerations",
           "hpa_name", "match_from", "number", "parse_duration", "parse_time_point",
           "toleration"]

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


@dataclass(frozen=True, slots=True, kw_only=True)
class TimePoint:
    """Either an offset from the trace's first event or an absolute Unix time in ms."""

    offset_ms: int | None = None
    absolute_ms: int | None = None

    def resolve(self, start_ms: int) -> int:
        return start_ms + self.offset_ms if self.offset_ms is not None else int(
            self.absolute_ms or 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeWindow:
    """Keep ``[start, end)``; what happened before ``start`` becomes the initial state."""

    start: TimePoint | None = None
    end: TimePoint | None = None
    duration_ms: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Select:
    keep: bool  # keep the matching objects (drop the rest), or drop the matching ones
    match: Match


@dataclass(frozen=True, slots=True, kw_only=True)
class ScaleReplicas:
    factor: float | None = None  # multiply spec.replicas (rounded, never below 0) ...
    value: int | None = None  # ... or set it
    match: Match = field(default_factory=Match)


@dataclass(frozen=True, slots=True, kw_only=True)
class ScaleResources:
    cpu: float = 1.0
    memory: float = 1.0
    requests: bool = True
    limits: bool = True
    match: Match = field(default_factory=Match)


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeSelector:
    add: tuple[tuple[str, str], ...] = ()
    remove: frozenset[str] = frozenset()
    match: Match = field(default_factory=Match)


@dataclass(frozen=True, slots=True, kw_only=True)
class Tolerations:
    add: tuple[tuple[tuple[str, Any], ...], ...] = ()  # each toleration as sorted items
    remove: frozenset[str] = frozenset()  # keys
    match: Match = field(default_factory=Match)


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeStretch:
    """Time between events multiplied by ``factor``: 0.5, everything happens twice as fast.

    Not a speed: its factor runs the other way from a run's (``core.simtime.TimeScale``,
    where 2 is twice as fast) and it rewrites the trace itself, so it has its own name.
    """

    factor: float  # 0.5: everything happens twice as fast; 2: half as fast


EditStep = (TimeWindow | Select | ScaleReplicas | ScaleResources | NodeSelector | Tolerations
            | TimeStretch | HpaChange | ScaleLoad | DropUsage)


def parse_duration(text: str, *, what: str) -> int:
    """``90s``, ``10m``, ``1h30m``, ``500ms`` → milliseconds."""
    cleaned = str(text).strip()
    parts = _DURATION_PART.findall(cleaned)
    if not parts or "".join(number + unit for number, unit in parts) != cleaned:
        raise ConfigError(f"{what}: {text!r} is not a duration (e.g. 90s, 10m, 1h30m)")
    return round(sum(float(number) * _UNIT_MS[unit] for number, unit in parts))


def parse_time_point(text: str, *, what: str) -> TimePoint:
    """A duration (offset from the trace's start) or an ISO 8601 time with a zone."""
    value = str(text).strip()
    if value and value[0].isdigit() and not re.match(r"^\d{4}-", value):
        return TimePoint(offset_ms=parse_duration(value, what=what))
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(f"{what}: {text!r} is neither a duration (10m) nor an ISO time "
                          "(2024-03-20T00:10:00Z)") from None
    if moment.tzinfo is None:
        raise ConfigError(f"{what}: {text!r} has no time zone; add one, e.g. Z")
    return TimePoint(absolute_ms=round(moment.timestamp() * 1000))


def toleration(text: str, *, what: str) -> tuple[tuple[str, Any], ...]:
    """``key[=value][:Effect]`` → a toleration (``Exists`` when no value is given)."""
    body, _, effect = text.partition(":")
    key, has_value, value = body.partition("=")
    if not key or effect not in ("", "NoSchedule", "PreferNoSchedule", "NoExecute"):
        raise ConfigError(f"{what}: {text!r} is not key[=value][:NoSchedule|PreferNoSchedule|"
                          "NoExecute]")
    spec: dict[str, Any] = {"key": key, "operator": "Equal" if has_value else "Exists"}
    if has_value:
        spec["value"] = value
    if effect:
        spec["effect"] = effect
    return tuple(sorted(spec.items()))


def match_from(raw: dict[str, Any], *, what: str) -> Match:
    namespaces = _strings(raw.get("namespaces", []), what=f"{what}.namespaces")
    kinds = _strings(raw.get("kinds", []), what=f"{what}.kinds")
    selector = raw.get("selector")
    if selector is not None and not isinstance(selector, str):
        raise ConfigError(f"{what}.selector must be a string like 'app=web,tier!=db'")
    return Match(namespaces=frozenset(namespaces), kinds=frozenset(kinds),
                 selector=parse_selector(selector) if selector else None)


def _strings(value: Any, *, what: str) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise ConfigError(f"{what} must be a list of strings")
    return items


def number(value: Any, *, what: str, positive: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{what} must be a number, not {value!r}")
    if positive and value <= 0:
        raise ConfigError(f"{what} must be greater than 0")
    return float(value)
