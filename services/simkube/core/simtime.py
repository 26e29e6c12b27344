"""Simulated time: the one conversion between trace time and wall time, and what it costs.

Every timing setting a user gives (a Simulation's timers, node-group provisioning delays, pod
lifetimes) is in trace time, the production values people know. A run at speed *s* replays
one trace second in 1/*s* wall seconds, so each component that runs on the wall clock gets its
setting divided by *s* — here and nowhere else. Some components cannot take every value: the
scheduler's backoffs are whole seconds of at least one. Then the value the replay really
behaves with, in trace time, is larger than asked, and a run must say so: ``ScaledTimer``
carries both, and ``TimerPlan.distorted`` lists the timers a floor stretches past a factor.

A run's speed is a ``TimeScale`` from the moment it is read (``parse_speed``) to the moment it
goes on the wire as a float (sk-driver's request, sk-cloudprov's ConfigMap). This module is the
bottom layer every service shares, so the one rule for a speed — positive, finite, at most
``MAX_SPEED`` — lives here, and every front end (skctl, sk-ctrl's spec, sk-driver's options,
sk-cloudprov's ConfigMap) gets the same answer and the same message.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from simkube.core.durations import go_duration, human_duration
from simkube.core.errors import ConfigError
from simkube.core.timers import BY_KEY, CATALOGUE, NEVER, Component, Timer

DISTORTION_WARNING = 2.0  # a floor that stretches a timer more than this is worth a warning
# sk-driver's ceiling, which its options had alone before (at a million, one trace millisecond
# is already one wall nanosecond). Here, so skctl and sk-ctrl refuse a faster run before it is
# created instead of sk-driver failing it afterwards.
MAX_SPEED = 1_000_000.0
SPEED_HINT = f"1 is real time, 10 is ten times faster, {MAX_SPEED:g} the most"
# Trace seconds per wall second while a run is held for the autoscaler: real time, the speed
# the recording was made at. A hold covers the stretch from new work (owed pods, a pending pod)
# to the autoscaler's answer and the scheduler's; run there at real time, the controllers',
# scheduler's and autoscaler's wall latencies are the trace latencies the recorded cluster
# had, at every speed. Stopping trace time instead (a hold speed of 0) removes them, and a
# burst whose pods arrived over half a second in the recording reaches the autoscaler as one
# batch (docs/fidelity.md, run 15).
HOLD_SPEED = 1.0
# sk-driver's own brief hold as it applies work that makes pods (wall seconds): long enough
# for sk-ctrl's hold to take it over, bounded however much work comes while it is on
# (driver/holds.py); sk-ctrl publishes one nobody took over with that bound as its expiry.
BRIEF_HOLD_S = 0.25
BRIEF_HOLD_BOUND_S = 0.5


class SpeedError(ConfigError, ValueError):
    """A speed that is not a positive, finite number of at most ``MAX_SPEED``.

    A ``ValueError`` too, so code that reads a speed from data (a ConfigMap) can treat it as
    any other malformed value; the message names the field it came from.
    """


def _checked(speed: float, *, field: str, given: object) -> float:
    """``speed`` if it obeys the one rule; ``SpeedError`` naming ``field`` and ``given``."""
    if not math.isfinite(speed) or speed <= 0:
        raise SpeedError(f"{field} {given!r} must be a positive number", hint=SPEED_HINT)
    if speed > MAX_SPEED:
        raise SpeedError(f"{field} {speed:g} is above the maximum {MAX_SPEED:g}",
                         hint=SPEED_HINT)
    return speed


@dataclass(frozen=True)
class TimeScale:
    """A run's speed: trace seconds per wall second, checked on construction."""

    speed: float

    def __post_init__(self) -> None:
        _checked(self.speed, field="speed", given=self.speed)

    @property
    def faster_than_real_time(self) -> bool:
        return self.speed > 1.0

    def to_wall(self, trace_s: float, *, held: bool = False) -> float:
        """Wall seconds for ``trace_s`` of trace time, at the held speed if ``held``."""
        return trace_s / (self.held_speed if held else self.speed)

    def to_trace(self, wall_s: float, *, held: bool = False) -> float:
        """Trace seconds ``wall_s`` of wall time make, at the held speed if ``held``."""
        return wall_s * (self.held_speed if held else self.speed)

    @property
    def held_speed(self) -> float:
        """Trace seconds per wall second while the run is held (never above its own)."""
        return min(self.speed, HOLD_SPEED)

    @property
    def held_share(self) -> float:
        """The share of its usual pace the run's clock keeps while held, in (0, 1]."""
        return self.held_speed / self.speed

    def hold_slip(self, held_s: float) -> float:
        """How far ``held_s`` wall seconds of holds push the run's schedule back, in wall
        seconds: the part of them in which trace time did not move at the run's speed."""
        return held_s * (1.0 - self.held_share)

    def scale(self, timer: Timer, trace_ms: int) -> ScaledTimer:
        """``timer`` set to ``trace_ms`` of trace time, as the component can take it."""
        if trace_ms == NEVER:  # off at every speed
            return ScaledTimer(timer=timer, scale=self, trace_ms=NEVER, wall_ms=NEVER,
                               effective_ms=NEVER)
        if timer.paced:  # given in trace time; its bounds apply to that
            given = round(trace_ms / 1000) * 1000 if timer.whole_seconds else trace_ms
            if trace_ms > 0 or timer.min_wall_ms:
                given = max(given, timer.min_wall_ms)
            return ScaledTimer(timer=timer, scale=self, trace_ms=trace_ms,
                               wall_ms=round(given / self.speed), effective_ms=given)
        wall = trace_ms / self.speed
        work = timer.work_ms if trace_ms > 0 else 0
        if work:
            # A cycle is period + work in the source and wall + work here (Timer.work_ms):
            # (wall + work) x speed = period + work. Never under half the plain division: a
            # speed the component's work cannot keep up with shows as a floor.
            wall = max(wall - work * (1 - 1 / self.speed), wall / 2)
        if timer.whole_seconds:
            wall = round(wall / 1000) * 1000
        if trace_ms > 0 or timer.min_wall_ms:
            wall = max(wall, timer.min_wall_ms)
        wall_ms = round(wall)
        return ScaledTimer(timer=timer, scale=self, trace_ms=trace_ms, wall_ms=wall_ms,
                           effective_ms=round(wall_ms * self.speed
                                              + work * (self.speed - 1)))


REAL_TIME = TimeScale(1.0)  # a ground-truth run, or no Simulation running


def achieved_speed(*, trace_s: float, wall_s: float, paused_s: float = 0.0) -> float | None:
    """Trace seconds replayed per wall second, a user's pauses left out (they are not the
    simulator's doing) and holds for the autoscaler left in (they are); None before any
    wall time has passed. Below the asked speed when the replay fell behind or was held."""
    running_s = wall_s - paused_s
    return trace_s / running_s if running_s > 0 else None


def parse_speed(value: object, *, field: str) -> TimeScale:
    """The one way a speed enters the program: a number or its text (``"2e6"``, ``10``).

    ``field`` names where it came from (``spec.speed``, ``--speed``) in the ``SpeedError``.
    Booleans are refused although Python counts them as numbers: ``speed: true`` in YAML is a
    mistake, not 1.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise SpeedError(f"{field} {value!r} is not a number", hint=SPEED_HINT)
    try:
        speed = float(value)
    except ValueError:
        raise SpeedError(f"{field} {value!r} is not a number", hint=SPEED_HINT) from None
    return TimeScale(_checked(speed, field=field, given=value))

@dataclass(frozen=True, kw_only=True)
class ScaledTimer:
    timer: Timer
    scale: TimeScale
    trace_ms: int  # what was asked, in trace time
    wall_ms: int  # what the component is given, or for a paced timer how long it lasts
    effective_ms: int  # what the replay behaves with, in trace time

    @property
    def given_ms(self) -> int:
        """The value the component is started with: trace time if it keeps the run's clock."""
        return self.effective_ms if self.timer.paced else self.wall_ms

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
        clock = "trace" if timer.paced else "wall"
        why = (f"takes {limit} of {clock} time" if limit else
               f"adds {human_duration(timer.work_ms)} of its own work to every cycle")
        return (f"at speed {self.scale.speed:g}, {timer.key} {asked} is "
                f"{human_duration(self.effective_ms)} of trace time ({timer.component.value} "
                f"{why})")

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

    scale: TimeScale
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
        """``component``'s timers as command-line values: flag name → the value it is given
        (wall time, or trace time for a paced timer)."""
        left_out = set(skip)
        return {t.timer.name: (str(t.given_ms // 1000) if t.timer.whole_seconds
                               else go_duration(t.given_ms))
                for t in self.for_component(component) if t.timer.name not in left_out}


def _shown(ms: int) -> str:
    return "Never" if ms == NEVER else human_duration(ms)


def plan(*, scale: TimeScale, settings: TimerSettings | None = None,
         extra: Iterable[tuple[Timer, int]] = ()) -> TimerPlan:
    """Every catalogued timer (plus ``extra`` ones, such as provisioning delays) at ``scale``."""
    chosen = settings or TimerSettings()
    timers = [scale.scale(timer, chosen.trace_ms(timer)) for timer in CATALOGUE]
    timers += [scale.scale(timer, trace_ms) for timer, trace_ms in extra]
    return TimerPlan(scale=scale, timers=tuple(timers))
