"""What a fidelity benchmark run covers, read from environment variables.

The full benchmark takes over an hour (a 20-minute ground truth, then every speed replayed
twice), so ``make bench`` users and the docs need a way to run a short version with the same
code: the variables below. A wrong value stops the benchmark before anything starts, with a
message naming the variable, rather than silently falling back to a default. The same goes for
a timer of the autoscaler that is not running: it would be set nowhere, and the run would look
tuned when it is not.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from simkube.core.errors import ConfigError
from simkube.core.simtime import SpeedError, TimerSettings, parse_speed
from simkube.core.timers import Component
from simkube.env.autoscalers.kinds import AutoscalerKind
from simkube.simulation.timers import TimerSpecError, timer_sections, timer_settings

MINUTES = "SIMKUBE_FIDELITY_MINUTES"
SPEEDS = "SIMKUBE_FIDELITY_SPEEDS"
REPETITIONS = "SIMKUBE_FIDELITY_REPETITIONS"
WRITE_DOCS = "SIMKUBE_FIDELITY_WRITE_DOCS"
# Timers of the truth and of every replay, in trace time, as skctl run --timer takes them
# (comma-separated); unset ones keep their production defaults.
TIMERS = "SIMKUBE_FIDELITY_TIMERS"
AUTOSCALER = "SIMKUBE_FIDELITY_AUTOSCALER"  # an ``env up --autoscaler`` value
DEFAULT_MINUTES = 20.0
DEFAULT_SPEEDS = (1.0, 10.0, 20.0, 50.0)  # issue #25's
# The timer section of the autoscaler a run does NOT have, per the one it has.
FOREIGN_TIMERS = {AutoscalerKind.CLUSTER_AUTOSCALER: Component.KARPENTER,
                  AutoscalerKind.KARPENTER: Component.CLUSTER_AUTOSCALER}
DEFAULT_REPETITIONS = 2
MIN_MINUTES = 1.0  # the workload needs room for a day, a burst and a tail
MAX_REPETITIONS = 100  # a Simulation's own limit
MAX_SPEED = 1000.0  # the benchmark's own choice, well inside core.simtime.MAX_SPEED


class SettingsError(ValueError):
    """A benchmark variable has a value the benchmark cannot run with; the message says which."""


@dataclass(frozen=True, kw_only=True)
class Settings:
    minutes: float
    speeds: tuple[float, ...]  # ascending, no repeats
    repetitions: int
    write_docs: bool
    timers: tuple[str, ...] = ()
    autoscaler: AutoscalerKind = AutoscalerKind.CLUSTER_AUTOSCALER

    @property
    def timer_settings(self) -> TimerSettings:
        return timer_settings(timer_sections(self.timers))

    @property
    def duration_s(self) -> float:
        return self.minutes * 60.0


def _minutes(raw: str | None) -> float:
    if raw is None or not raw.strip():
        return DEFAULT_MINUTES
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{MINUTES}={raw!r} is not a number of minutes") from None
    if not math.isfinite(value) or value < MIN_MINUTES:
        raise SettingsError(f"{MINUTES}={raw!r}: the workload needs at least "
                            f"{MIN_MINUTES:g} minute(s)")
    return value


def _speeds(raw: str | None) -> tuple[float, ...]:
    if raw is None or not raw.strip():
        return DEFAULT_SPEEDS
    speeds: set[float] = set()
    for part in raw.split(","):
        try:  # the one speed rule first, then this benchmark's narrower range
            speed = parse_speed(part.strip(), field=SPEEDS).speed
        except SpeedError as exc:
            raise SettingsError(f"{SPEEDS}={raw!r}: {part.strip()!r} is not a speed; every "
                                f"speed must be above 0 and at most {MAX_SPEED:g} "
                                f"({exc.message})") from None
        if speed > MAX_SPEED:
            raise SettingsError(f"{SPEEDS}={raw!r}: every speed must be above 0 and at most "
                                f"{MAX_SPEED:g}")
        speeds.add(speed)
    return tuple(sorted(speeds))


def _repetitions(raw: str | None) -> int:
    if raw is None or not raw.strip():
        return DEFAULT_REPETITIONS
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{REPETITIONS}={raw!r} is not a whole number") from None
    if not 1 <= value <= MAX_REPETITIONS:
        raise SettingsError(f"{REPETITIONS}={raw!r}: use 1 to {MAX_REPETITIONS}")
    return value


def _timers(raw: str | None, autoscaler: AutoscalerKind) -> tuple[str, ...]:
    timers = tuple(part.strip() for part in (raw or "").split(",") if part.strip())
    try:
        timer_settings(timer_sections(timers))
    except (ConfigError, TimerSpecError) as exc:
        raise SettingsError(f"{TIMERS}={raw!r}: {exc}") from None
    foreign = [timer for timer in timers
               if timer.startswith(f"{FOREIGN_TIMERS[autoscaler].value}.")]
    if foreign:
        raise SettingsError(f"{TIMERS}={raw!r}: {', '.join(foreign)} would be set nowhere: "
                            f"{AUTOSCALER}={autoscaler.value} runs no such component")
    return timers


def autoscaler(environ: Mapping[str, str]) -> AutoscalerKind:
    """The autoscaler to measure (Cluster Autoscaler unless the variable says otherwise)."""
    raw = environ.get(AUTOSCALER, "").strip()
    if not raw:
        return AutoscalerKind.CLUSTER_AUTOSCALER
    try:
        return AutoscalerKind(raw)
    except ValueError:
        raise SettingsError(f"{AUTOSCALER}={raw!r}: use one of "
                            f"{', '.join(kind.value for kind in AutoscalerKind)}") from None


def from_environ(environ: Mapping[str, str]) -> Settings:
    """The run's settings; ``SettingsError`` naming the variable that is wrong."""
    kind = autoscaler(environ)
    return Settings(minutes=_minutes(environ.get(MINUTES)), speeds=_speeds(environ.get(SPEEDS)),
                    repetitions=_repetitions(environ.get(REPETITIONS)),
                    write_docs=environ.get(WRITE_DOCS, "").strip() == "1",
                    timers=_timers(environ.get(TIMERS), kind), autoscaler=kind)
