"""The replay's clock: trace time mapped onto the monotonic clock, with pauses and holds.

An event at trace offset ``o`` (ms after the trace's start) is due at
``t0 + paused + slip(held) + o / speed`` seconds of ``time.monotonic()``, the division being
``core.simtime.TimeScale``'s (the one conversion between trace and wall time). Deadlines are
absolute, so a slow apply never pushes later events back (the lag is measured, not
accumulated), and wall-clock jumps (NTP, suspend) do not disturb a replay. Pausing stops trace
time; resuming adds the pause to ``paused``, which shifts the whole remaining schedule by
exactly that much. A hold (sk-ctrl's, while the autoscaler reacts) slows trace time to
``TimeScale.held_speed`` (real time) instead: events keep coming during it, as fast as the
recorded cluster had them, and only ``hold_slip`` of its wall time shifts the schedule. Holds
are counted apart from pauses, and the two compose: a pause stops the clock, held or not.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from enum import Enum

from simkube.core.simtime import TimeScale
from simkube.driver.signals import Signal


class Stop(Enum):
    """Why the clock is not running at the run's speed; pause wins while both are on, so the
    two totals add up to the wall time it was not."""

    PAUSE = "pause"  # the user's Pause: trace time stands still
    HOLD = "hold"  # sk-ctrl's Hold, while the autoscaler reacts: trace time at real time


class ReplayClock:
    def __init__(self, *, scale: TimeScale, now: Callable[[], float] = time.monotonic) -> None:
        self.scale = scale
        self._now = now
        self._t0: float | None = None
        self._on: set[Stop] = set()
        self._totals = dict.fromkeys(Stop, 0.0)  # closed stretches, by reason
        self._since: float | None = None  # when the current stretch began (None: running)
        self._changed = Signal()

    def start(self) -> None:
        self._t0 = self._now()
        self._changed.fire()  # wake whoever waits for the start (wait_until)

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
        return Stop.PAUSE in self._on

    @property
    def held(self) -> bool:
        return Stop.HOLD in self._on

    def _reason(self) -> Stop | None:
        """What the current stretch counts as."""
        if Stop.PAUSE in self._on:
            return Stop.PAUSE
        return Stop.HOLD if self._on else None

    def _stopped(self, reason: Stop) -> float:
        current = self._reason()
        open_s = self._now() - self._since if current is reason and self._since is not None else 0.0
        return self._totals[reason] + open_s

    def paused_seconds(self) -> float:
        return self._stopped(Stop.PAUSE)

    def held_seconds(self) -> float:
        """Time held and not also paused."""
        return self._stopped(Stop.HOLD)

    def _behind(self, *, until: float | None = None) -> float:
        """Wall seconds the schedule has been pushed back by pauses and holds: the closed
        stretches, and the open one up to ``until`` when given."""
        slip = self.scale.hold_slip
        behind = self._totals[Stop.PAUSE] + slip(self._totals[Stop.HOLD])
        current = self._reason()
        if until is None:
            return behind
        if current is Stop.PAUSE and self._since is not None:
            behind += until - self._since
        elif current is Stop.HOLD and self._since is not None:
            behind += slip(until - self._since)
        return behind

    def due(self, offset_ms: float) -> float:
        """When an event at ``offset_ms`` is due (valid while the clock runs, until it next
        stops or slows)."""
        return (self.t0 + self._behind()
                + self.scale.to_wall(offset_ms / 1000.0))

    def trace_offset_ms(self) -> float:
        """Where in the trace the clock stands now."""
        if self._t0 is None:
            return 0.0
        # While paused, the clock stands where the pause began; computing it from that
        # instant (not from now minus the open stretch) keeps it exactly constant, where the
        # subtraction's rounding could move a truncated millisecond between two reads.
        until = self._since if self.paused and self._since is not None else self._now()
        running_s = until - self._t0 - self._behind(until=until)
        return max(0.0, self.scale.to_trace(running_s) * 1000.0)

    def _switch(self, reason: Stop, *, on: bool) -> bool:
        """Turn ``reason`` on or off; the stretch so far is closed under its old reason."""
        if (reason in self._on) == on:
            return False
        now = self._now()
        before = self._reason()
        if before is not None and self._since is not None:
            self._totals[before] += now - self._since
        if on:
            self._on.add(reason)
        else:
            self._on.discard(reason)
        self._since = now if self._on else None
        self._changed.fire()
        return True

    def pause(self) -> bool:
        return self._switch(Stop.PAUSE, on=True)

    def resume(self) -> bool:
        return self._switch(Stop.PAUSE, on=False)

    def hold(self) -> bool:
        return self._switch(Stop.HOLD, on=True)

    def release(self) -> bool:
        return self._switch(Stop.HOLD, on=False)

    async def wait_until(self, offset_ms: float) -> float:
        """Sleep until ``offset_ms`` is due and the clock is not paused; returns the wall time
        it was due at. Before ``start()`` it waits for the start (the usage player starts its
        waits before the replay's clock does). During a hold the clock moves at the held
        speed, so what falls in it is due a wall second per trace second."""
        while True:
            changed = self._changed.arm()
            if self.paused or self._t0 is None:  # stopped, or not started: nothing is due yet
                await changed.wait()
                continue
            if self.held:
                now = self._now()
                remaining = self.scale.to_wall((offset_ms - self.trace_offset_ms()) / 1000.0,
                                               held=True)
                due = now + remaining
            else:
                due = self.due(offset_ms)
                remaining = due - self._now()
            if remaining <= 0:
                return due
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await changed.wait()
