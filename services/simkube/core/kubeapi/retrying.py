"""Waiting before trying again: exponential backoff, retries of transient errors, polling.

Every service meets the same three situations: an API server that refuses for a while
(restarting, throttling, a namespace's ServiceAccount not there yet), a watch that keeps
failing, and a condition that becomes true later. Each has one helper here, so the delays
(doubling from ``base`` up to ``cap``, with jitter so that many clients that failed together
do not come back together) are decided in one place and can be tested without a cluster.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from simkube.core.kubeapi.errors import ApiError

T = TypeVar("T")
MAX_DOUBLINGS = 60  # far beyond any cap; keeps 2**n a float that exists


class Backoff:
    """The n-th delay in a row is at most ``min(cap, base * 2**(n-1))``.

    With ``jitter`` it is drawn uniformly from ``floor`` up to that ceiling ("full jitter"
    above a floor); without, it is the ceiling itself. ``reset()`` after a success.
    """

    def __init__(self, *, base: float = 0.5, cap: float = 30.0, floor: float = 0.0,
                 jitter: bool = True) -> None:
        self.base = base
        self.cap = cap
        self.floor = floor
        self.jitter = jitter
        self.failures = 0

    def next_delay(self) -> float:
        self.failures += 1
        ceiling = min(self.cap, self.base * 2.0 ** min(self.failures - 1, MAX_DOUBLINGS))
        if not self.jitter:
            return ceiling
        return random.uniform(min(self.floor, ceiling), ceiling)  # noqa: S311

    def reset(self) -> None:
        self.failures = 0

    async def wait(self) -> float:
        """Sleep the next delay; returns it."""
        delay = self.next_delay()
        await asyncio.sleep(delay)
        return delay


def is_transient(error: ApiError) -> bool:
    return error.transient


async def retry(call: Callable[[], Awaitable[T]], *, attempts: int,
                backoff: Backoff | None = None,
                retry_on: Callable[[ApiError], bool] = is_transient) -> T:
    """``await call()`` up to ``attempts`` times while it raises an ``ApiError`` that
    ``retry_on`` accepts (by default: transient ones), sleeping ``backoff``'s delays between;
    the last error, or the first one not worth retrying, is raised."""
    delays = backoff or Backoff(base=0.1, cap=5.0, jitter=False)
    for attempt in range(1, attempts + 1):
        try:
            return await call()
        except ApiError as exc:
            if attempt >= attempts or not retry_on(exc):
                raise
        await delays.wait()
    raise ValueError(f"retry needs at least one attempt, not {attempts}")


async def poll(probe: Callable[[], Awaitable[Any]], *, timeout: float,
               interval: float = 0.1) -> bool:
    """Await ``probe()`` until it is truthy or ``timeout`` seconds pass; True if it became so."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if await probe():
            return True
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(interval)
