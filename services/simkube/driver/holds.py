"""A run's holds: who began the one in progress, when it began, and when it ends by itself.

Two parties hold a run's clock (``ReplayClock``: trace time then moves at real time). sk-ctrl
holds while the autoscaler reacts and releases when it has (``ctrl/holding.py``), and each of
its Holds ends by itself after the ``expires_after`` it gives, so an sk-ctrl that dies
mid-hold cannot stall the run. sk-driver holds briefly by itself just before it applies
work that makes pods (``pod_work.py``), for sk-ctrl to take over. The one expiry timer
serves both: a Hold from sk-ctrl replaces it, and a brief hold of sk-driver's own never cuts
an sk-ctrl hold short. sk-ctrl's Release, which may answer an earlier wait, does not cut a
brief hold short either: what was just applied is held for until its own deadline.

A brief hold is bounded: work applied while one is on extends it to at most ``bound_s``
after it began, so pod work every few tenths of a second cannot keep a run at real time by
itself (sk-ctrl's holds have their own bounds and share).

When the hold in progress began (Unix time, ``since_unix``) goes out in the progress, so
sk-ctrl publishes a hold it took over, or one that ended untaken, from its true start:
sk-cloudprov counts its slip from then (``cloudprov/current_run.py``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from simkube.core.logs import get_logger
from simkube.driver.clock import ReplayClock

log = get_logger(__name__)


class Holds:
    def __init__(self, *, clock: ReplayClock, simulation: str, changed: Callable[[], None],
                 wall: Callable[[], float] = time.time) -> None:
        self._clock, self._simulation, self._changed = clock, simulation, changed
        self._wall = wall
        self._expiry: asyncio.TimerHandle | None = None
        self._own = False  # the hold in progress is sk-driver's own, not taken over yet
        self._own_until = 0.0  # loop time a brief hold holds for, sk-ctrl's hold or not
        self._own_began = 0.0  # loop time the brief hold in progress began
        self.since_unix = 0.0  # when the hold in progress began; 0: none
        self.own_holds = 0  # brief holds of sk-driver's own begun
        self.own_expired = 0  # of those, ended by their expiry: nobody took them over

    def hold(self, *, expires_after_s: float) -> None:
        """sk-ctrl's Hold: held until its Release, or ``expires_after_s`` from now."""
        self._own = False
        self._expire_in(expires_after_s)
        self._begin()

    def hold_briefly(self, *, expires_after_s: float, bound_s: float) -> None:
        """sk-driver's own hold, for ``expires_after_s`` (within ``bound_s`` of the brief
        hold's start) unless the hold in progress lasts longer or sk-ctrl takes it over."""
        now = asyncio.get_running_loop().time()
        began = self._own_began if self._own and self._clock.held else now
        until = min(now + expires_after_s, began + bound_s)
        self._own_until = max(self._own_until, until)
        if self._expiry is not None and self._expiry.when() >= until:
            return  # sk-ctrl's hold, or a longer brief one, is on
        if not self._clock.held:
            self._own, self._own_began = True, now
            self.own_holds += 1
        self._expire_in(until - now)
        self._begin()

    def release(self) -> None:
        """End sk-ctrl's hold; a brief hold still due goes on as sk-driver's own until its
        deadline. None is fine (a release may race with the replay's end)."""
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        now = asyncio.get_running_loop().time()
        if self._clock.held and not self._own and self._own_until > now:
            self._own, self._own_began = True, now  # a new stretch: sk-ctrl's was published
            self.own_holds += 1
            self.since_unix = self._wall()
            self._expire_in(self._own_until - now)
            self._changed()
            return
        self._end()

    def end(self) -> None:
        """The replay has ended: nothing is left to hold for."""
        self._own_until = 0.0
        self.release()

    def _expire_in(self, seconds: float) -> None:
        if self._expiry is not None:
            self._expiry.cancel()
        self._expiry = asyncio.get_running_loop().call_later(seconds, self._expired)

    def _expired(self) -> None:
        self._expiry = None
        own = self._own
        if not self._end():
            return
        if own:
            self.own_expired += 1
            log.debug("a hold of sk-driver's own ended untaken", simulation=self._simulation)
        else:
            log.warning("hold expired without a release", simulation=self._simulation)

    def _begin(self) -> None:
        if self._clock.hold():
            self.since_unix = self._wall()
            self._changed()

    def _end(self) -> bool:
        self._own = False
        if not self._clock.release():
            return False
        self.since_unix = 0.0
        self._changed()
        return True
