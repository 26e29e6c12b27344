"""A run's holds: who began the one in progress, when it began, and when it ends by itself.

Two parties hold a run's clock (``ReplayClock``: trace time then moves at real time). sk-ctrl
holds while the autoscaler reacts and releases when it has (``ctrl/holding.py``), and each of
its Holds ends by itself after the ``expires_after`` it gives, so an sk-ctrl that dies
mid-hold cannot stall the run. sk-driver holds briefly by itself just before it applies
work that makes pods (``pod_work.py``), for sk-ctrl to take over. The one expiry timer
serves both: a Hold from sk-ctrl replaces it, and a brief hold of sk-driver's own only ever
lengthens it, never cuts an sk-ctrl hold short.

When the hold in progress began (Unix time, ``since_unix``) goes out in the progress, so
sk-ctrl publishes a hold it took over from its true start: sk-cloudprov counts its slip
from then (``cloudprov/current_run.py``).
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
        self.since_unix = 0.0  # when the hold in progress began; 0: none
        self.own_holds = 0  # brief holds of sk-driver's own begun
        self.own_expired = 0  # of those, ended by their expiry: nobody took them over

    def hold(self, *, expires_after_s: float) -> None:
        """sk-ctrl's Hold: held until its Release, or ``expires_after_s`` from now."""
        self._own = False
        self._expire_in(expires_after_s)
        self._begin()

    def hold_briefly(self, *, expires_after_s: float) -> None:
        """sk-driver's own hold, for ``expires_after_s`` unless the hold in progress lasts
        longer or sk-ctrl takes it over."""
        loop = asyncio.get_running_loop()
        if self._expiry is not None and self._expiry.when() >= loop.time() + expires_after_s:
            return
        if not self._clock.held:
            self._own = True
            self.own_holds += 1
        self._expire_in(expires_after_s)
        self._begin()

    def release(self) -> None:
        """End the hold in progress, whoever began it; none is fine (a release may race with
        the replay's end)."""
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        self._end()

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
