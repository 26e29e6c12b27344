"""Riding out an unreachable sk-driver, and the failures that end a simulation or one run.

sk-driver may restart or be briefly unreachable while a simulation goes on for hours, so a
transient refusal (``DriverError.transient``) is tried again once a second until the retry
budget runs out; only then does the simulation fail, naming the driver and what was asked.
Starting a run and following one share this one idiom (``Retrier``): the budget is for one
stretch of silence, so a watch that delivers progress again starts a fresh budget.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from simkube.core.logs import get_logger
from simkube.ctrl.driving import DriverError

log = get_logger(__name__)
T = TypeVar("T")


class SimulationFailedError(Exception):
    """The simulation cannot go on; ``message`` goes to its status and an Event."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class RunLostError(SimulationFailedError):
    """The driver does not know the run any more (it restarted); only this run is lost."""


class Retrier:
    """One budget of ``budget`` seconds for sk-driver at ``address`` to answer again."""

    def __init__(self, *, address: str, budget: float, delay: float = 1.0) -> None:
        self.address = address
        self.budget = budget
        self.delay = delay
        self._deadline: float | None = None

    def reset(self) -> None:
        """The driver answered: the next outage gets the whole budget again."""
        self._deadline = None

    async def backoff(self, exc: DriverError, *, what: str) -> None:
        """After the transient refusal ``exc``: wait a moment, or fail once over budget."""
        loop = asyncio.get_running_loop()
        if self._deadline is None:
            self._deadline = loop.time() + self.budget
        if loop.time() >= self._deadline:
            raise SimulationFailedError(
                f"sk-driver at {self.address} did not answer for {self.budget:.0f}s "
                f"({what}): {exc.message}") from None
        log.warning("sk-driver unreachable, retrying", what=what, error=exc.message)
        await asyncio.sleep(self.delay)

    async def call(self, call: Callable[[], Awaitable[T]], *, what: str) -> T:
        """``call()`` until it answers; a refusal that is not transient is raised as is."""
        self.reset()
        while True:
            try:
                return await call()
            except DriverError as exc:
                if not exc.transient:
                    raise
                await self.backoff(exc, what=what)
