"""The recorder's clock: the wall and trace time at which it observes something.

``RunClock`` stamps observations: ``wall_s`` is monotonic seconds since the run started
(continued across a recorder restart from the run's start time), ``trace_s`` is the injected
replay clock, held non-decreasing (a restarted sk-ctrl may report 0 until the driver's first
progress message, which must not turn into negative time or cost).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from simkube.core.simtime import TimeScale


def utc_now() -> datetime:
    return datetime.now(UTC)


class RunClock:
    def __init__(self, *, trace_clock: Callable[[], float], scale: TimeScale,
                 started_at: datetime, trace_floor: float = 0.0,
                 monotonic: Callable[[], float] = time.monotonic,
                 now: Callable[[], datetime] = utc_now) -> None:
        self.started_at = started_at
        self._trace_clock = trace_clock
        self._scale = scale
        self._monotonic = monotonic
        self._now = now
        self._wall_base = max((now() - started_at).total_seconds(), 0.0)
        self._mono_base = monotonic()
        self._trace = trace_floor

    def wall_s(self) -> float:
        return self._wall_base + self._monotonic() - self._mono_base

    def trace_s(self) -> float:
        self._trace = max(self._trace, float(self._trace_clock()))
        return self._trace

    def trace_at(self, when: datetime) -> float:
        """The trace time of a past API timestamp, assuming replay ran at ``scale`` since."""
        return self.trace_s() - self._scale.to_trace((self._now() - when).total_seconds())
