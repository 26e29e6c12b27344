"""Simulated time: the one conversion between trace time and wall time, and what it costs.

Every timing setting a user gives (a Simulation's timers, node-group provisioning delays, pod
lifetimes) is in trace time, the production values people know. A run at speed *s* replays
one trace second in 1/*s* wall seconds, so each component that runs on the wall clock gets its
setting divided by *s* — here and nowhere else. Some components cannot take every value: the
scheduler's backoffs are whole seconds of at least one. Then the value the replay really
behaves with, in trace time, is larger than asked, and a run must say so: ``ScaledTimer``
carries both, and ``TimerPlan.distorted`` lists the timers a floor stretches past a factor.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from simkube.core.durations import go_duration, human_duration
from simkube.core.timers import BY_KEY, CATALOGUE, NEVER, Component, Timer

DISTORTION_WARNING = 2.0  # a floor that stretches a timer more than this is worth a warning


@dataclass(frozen=True)
class TimeScale:
    """A run's speed: trace seconds per wall second."""

    speed: float

    def __post_init__(self) -> None:
        if not math.isfinite(self.speed) or self.speed <= 0:
            raise ValueError(f"speed {self.speed!r} must be a positive number")

    def to_wall(self, trace_s: float) -> float:
        return trace_s / self.speed

    def to_trace(self, wall_s: float) -> float:
        return wall_s * self.speed

    def scale(self, timer: Timer, trace_ms: int) -> ScaledTimer:
        """``timer`` set to ``trace_ms`` of trace time, as the component can take it."""
        if trace_ms == NEVER:  # off at every speed
            return ScaledTimer(timer=timer, speed=self.speed, trace_ms=NEVER, wall_ms=NEVER,
                               effective_ms=NEVER)
        wall = trace_ms / self.speed
        if timer.whole_seconds:
            wall = round(wall / 1000) * 1000
        if trace_ms > 0 or timer.min_wall_ms:
            wall = max(wall, timer.min_wall_ms)
        wall_ms = round(wall)
        return ScaledTimer(timer=timer, speed=self.speed, trace_ms=trace_ms, wall_ms=wall_ms,
                           effective_ms=round(wall_ms * self.speed))


REAL_TIME = TimeScale(1.0)  # a ground-truth run, or no Simulation running

@dataclass(frozen=True, kw_only=True)
class ScaledTimer:
    timer: Timer
    speed: float
    trace_ms: int  # what was asked, in trace time
    wall_ms: int  # what the component is given
    effective_ms: int  # what the replay behaves with, in trace time

    @property
    def distortion(self) -> float:
        """Effective ÷ asked: 1 when the component could take the value."""
        if self.trace_ms == NEVER:
            return 1.0
        if self.trace_ms == 0:
            return 1.0 if self.effective_ms == 0 else math.inf
        return self.effective_ms / self.trace_ms

    @property
    def floored(self) -> bool:
        return abs(self.distortion - 1.0) > 0.01

    def describe(self) -> str:
        timer = self.timer
        asked = _shown(self.trace_ms)
        if not self.floored:
            return f"{timer.key} {asked} (wall {_shown(self.wall_ms)})"
        limit = ", ".join(part for part in (
            "whole seconds" if timer.whole_seconds else "",
            f"at least {human_duration(timer.min_wall_ms)}" if timer.min_wall_ms else "") if part)
        return (f"at speed {self.speed:g}, {timer.key} {asked} is "
                f"{human_duration(self.effective_ms)} of trace time ({timer.component.value} "
                f"takes {limit} of wall time)")

    def to_status(self) -> dict[str, Any]:
        return {"timer": self.timer.key, "traceTime": _shown(self.trace_ms),
                "wallTime": _shown(self.wall_ms),
                "effectiveTraceTime": _shown(self.effective_ms),
                "floored": self.floored}


@dataclass(frozen=True, kw_only=True)
class TimerSettings:
    """A run's timers in trace time: timer key → milliseconds; unset = production default."""

    values: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.values) - set(BY_KEY))
        if unknown:
            raise ValueError(f"unknown timers {unknown}")
        bad = sorted(key for key, ms in self.values.items()
                     if ms < 0 and not (ms == NEVER and BY_KEY[key].may_be_never))
        if bad:
            raise ValueError(f"negative timers {bad}")

    def trace_ms(self, timer: Timer) -> int:
        return self.values.get(timer.key, timer.default_ms)

    def with_defaults(self, defaults: Mapping[str, int]) -> TimerSettings:
        """These settings, with ``defaults`` (an environment's own, trace time) for the
        timers they leave unset."""
        return TimerSettings(values={**defaults, **self.values})


@dataclass(frozen=True, kw_only=True)
class TimerPlan:
    """Every catalogued timer of one run, scaled."""

    speed: float
    timers: tuple[ScaledTimer, ...]

    def for_component(self, component: Component) -> tuple[ScaledTimer, ...]:
        return tuple(t for t in self.timers if t.timer.component is component)

    def wall_ms(self, key: str) -> int:
        return next(t.wall_ms for t in self.timers if t.timer.key == key)

    def distorted(self, *, factor: float = DISTORTION_WARNING) -> tuple[ScaledTimer, ...]:
        return tuple(t for t in self.timers if t.floored and t.distortion > factor)

    def floored(self) -> tuple[ScaledTimer, ...]:
        return tuple(t for t in self.timers if t.floored)

    def flags(self, component: Component, *, skip: Iterable[str] = ()) -> dict[str, str]:
        """``component``'s timers as command-line values: flag name → wall value."""
        left_out = set(skip)
        return {t.timer.name: (str(t.wall_ms // 1000) if t.timer.whole_seconds
                               else go_duration(t.wall_ms))
                for t in self.for_component(component) if t.timer.name not in left_out}


def _shown(ms: int) -> str:
    return "Never" if ms == NEVER else human_duration(ms)


def with_flags(argv: Iterable[str], flags: Mapping[str, str]) -> list[str]:
    """``argv`` with each ``--name=value`` of ``flags`` replacing its namesake or appended."""
    given = {f"--{name}" for name in flags}
    kept = [arg for arg in argv if arg.partition("=")[0] not in given]
    return [*kept, *(f"--{name}={value}" for name, value in flags.items())]


def plan(*, speed: float, settings: TimerSettings | None = None,
         extra: Iterable[tuple[Timer, int]] = ()) -> TimerPlan:
    """Every catalogued timer (plus ``extra`` ones, such as provisioning delays) at ``speed``."""
    scale = TimeScale(speed)
    chosen = settings or TimerSettings()
    timers = [scale.scale(timer, chosen.trace_ms(timer)) for timer in CATALOGUE]
    timers += [scale.scale(timer, trace_ms) for timer, trace_ms in extra]
    return TimerPlan(speed=speed, timers=tuple(timers))


# The run in progress, published by sk-ctrl for components that scale their own timers
# (sk-cloudprov's provisioning delays and per-group options): a ConfigMap in sk-cloudprov's
# namespace. Absent means speed 1 — a ground-truth run, or no Simulation running.
RUN_CONFIGMAP = "simkube-run-timescale"
SPEED_KEY = "speed"
SEED_KEY = "seed"
RUN_KEY = "run"


def timescale_data(*, speed: float, seed: int, run: str) -> dict[str, str]:
    return {SPEED_KEY: repr(float(speed)), SEED_KEY: str(seed), RUN_KEY: run}


def read_timescale(data: Mapping[str, Any]) -> tuple[float, int, str]:
    """(speed, seed, run) from the ConfigMap's data; ``ValueError`` naming the bad key."""
    try:
        speed = float(data.get(SPEED_KEY, 1.0))
        TimeScale(speed)
    except (TypeError, ValueError):
        raise ValueError(f"{SPEED_KEY} {data.get(SPEED_KEY)!r} is not a positive number") from None
    try:
        seed = int(data.get(SEED_KEY, 0))
    except (TypeError, ValueError):
        raise ValueError(f"{SEED_KEY} {data.get(SEED_KEY)!r} is not a whole number") from None
    return speed, seed, str(data.get(RUN_KEY, ""))


class TraceClock:
    """Trace time between a replay's progress reports.

    sk-driver reports its trace time about once a second when nothing else happens, so a
    clock that only repeats the last report stalls, then jumps: at speed 50 a stall of 1.5 s
    is 75 s of trace time, and every pending time measured across it is off by as much. The
    replay clock itself runs continuously at ``speed`` while the run is running, so between
    reports trace time is the last one plus the wall time since, times the speed — never past
    the trace's length, and frozen while the run is not running.
    """

    def __init__(self, *, speed: float, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._scale = TimeScale(speed)
        self._monotonic = monotonic
        self._trace_s = 0.0
        self._at = monotonic()
        self._running = False
        self._limit_s: float | None = None

    def report(self, *, trace_s: float, running: bool, length_s: float | None = None) -> None:
        self._trace_s, self._at, self._running = trace_s, self._monotonic(), running
        self._limit_s = length_s if length_s else None

    def now(self) -> float:
        if not self._running:
            return self._trace_s
        moved = self._trace_s + self._scale.to_trace(self._monotonic() - self._at)
        return min(moved, self._limit_s) if self._limit_s is not None else moved
