"""The replay's clock: trace time mapped onto the monotonic clock, with pauses.

An event at trace offset ``o`` (ms after the trace's start) is due at
``t0 + paused + o / speed`` seconds of ``time.monotonic()``, the division being
``core.simtime.TimeScale``'s (the one conversion between trace and wall time). Deadlines are
absolute, so a slow apply never pushes later events back (the lag is measured, not
accumulated), and wall-clock jumps (NTP, suspend) do not disturb a replay. Pausing stops trace
time; resuming adds the pause to ``paused``, which shifts the whole remaining schedule by
exactly that much.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from simkube.core.simtime import TimeScale
from simkube.driver.signals import Signal


class ReplayClock:
    def __init__(self, *, scale: TimeScale, now: Callable[[], float] = time.monotonic) -> None:
        self.scale = scale
        self._now = now
        self._t0: float | None = None
        self._paused_total = 0.0
        self._paused_at: float | None = None
        self._changed = Signal()

    def start(self) -> None:
        self._t0 = self._now()

    @property
    def started(self) -> bool:
        return self._t0 is not None

    @property
    def t0(self) -> float:
        """When trace offset 0 was (or is) due, on the monotonic clock, before any pause."""
        if self._t0 is None:
            raise RuntimeError("the clock has not started")
        return self._t0

    @property
    def paused(self) -> bool:
        return self._paused_at is not None

    def paused_seconds(self) -> float:
        current = self._now() - self._paused_at if self._paused_at is not None else 0.0
        return self._paused_total + current

    def due(self, offset_ms: float) -> float:
        """When an event at ``offset_ms`` is due (valid until the next pause)."""
        return self.t0 + self._paused_total + self.scale.to_wall(offset_ms / 1000.0)

    def trace_offset_ms(self) -> float:
        """Where in the trace the clock stands now."""
        if self._t0 is None:
            return 0.0
        running_s = self._now() - self._t0 - self.paused_seconds()
        return max(0.0, self.scale.to_trace(running_s) * 1000.0)

    def pause(self) -> bool:
        if self._paused_at is not None:
            return False
        self._paused_at = self._now()
        self._changed.fire()
        return True

    def resume(self) -> bool:
        if self._paused_at is None:
            return False
        self._paused_total += self._now() - self._paused_at
        self._paused_at = None
        self._changed.fire()
        return True

    async def wait_until(self, offset_ms: float) -> float:
        """Sleep until ``offset_ms`` is due and the clock is not paused; returns the due time."""
        while True:
            changed = self._changed.arm()
            if self._paused_at is not None:
                await changed.wait()
                continue
            due = self.due(offset_ms)
            remaining = due - self._now()
            if remaining <= 0:
                return due
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await changed.wait()
