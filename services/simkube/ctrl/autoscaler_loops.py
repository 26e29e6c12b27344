"""How many loops Cluster Autoscaler has started and finished, from its Prometheus metrics.

CA records ``cluster_autoscaler_function_duration_seconds`` per function on its metrics
port (``--address``): the ``loopWait`` sample is observed as each loop starts (the wait before
it), the ``main`` sample as each loop finishes, failed ones included. Their ``_count`` series
are therefore "loops started" and "loops finished"; a loop that started after some moment has
finished once ``finished`` exceeds the ``started`` read at that moment. Both reset to zero when
CA restarts (sk-ctrl restarts it for every run's timers).

A CA started with ``--frequent-loops-enabled=false`` (as a held replay's is:
``core/replay_flags.py``) never waits on its loop trigger, so ``loopWait`` is never observed.
Then only finished loops are counted, and a loop may be running at the moment of reading: the
second loop to finish after it is the first known to have started after it
(``LoopCounts.after_now``). CA's ``last_activity`` gauge has the start of the latest loop,
but only to the second, too coarse to tell.

The page is tens of kilobytes of text read many times a second during a hold, so only the
one metric's ``_count`` lines are looked at, not parsed as a whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

import httpx

READ_TIMEOUT = 0.5  # a CA that cannot answer this fast is no reason to hold a run
COUNT_METRIC = "cluster_autoscaler_function_duration_seconds_count"
_LINE = re.compile(rf"^{COUNT_METRIC}\{{([^}}]*)\}}\s+(\S+)", re.MULTILINE)
_FUNCTION = re.compile(r'(?:^|,)\s*function="([^"]*)"')


class LoopFunction(StrEnum):
    """The ``function`` label values that count loops."""

    STARTED = "loopWait"
    FINISHED = "main"


class LoopsUnavailableError(Exception):
    """The autoscaler's metrics could not be read, or do not count loops (not CA)."""


@dataclass(frozen=True, kw_only=True)
class LoopCounts:
    started: int
    finished: int

    def after_now(self) -> int:
        """The count of finished loops that means a loop started after this reading has
        finished."""
        if self.started:
            return self.started + 1
        return self.finished + 2  # loops not triggered: one may be running now


def parse_loop_counts(text: str) -> LoopCounts:
    """The two counters in a Prometheus text page; ``LoopsUnavailableError`` without them."""
    found: dict[str, int] = {}
    for labels, value in _LINE.findall(text):
        function = _FUNCTION.search(labels)
        if function is not None and function.group(1) in set(LoopFunction):
            try:
                found[function.group(1)] = int(float(value))
            except ValueError:
                raise LoopsUnavailableError(f"{COUNT_METRIC} {value!r} is not a number") from None
    # CA registers the series on the first observation: no loop has finished yet.
    return LoopCounts(started=found.get(LoopFunction.STARTED, 0),
                      finished=found.get(LoopFunction.FINISHED, 0))


class LoopSource(Protocol):
    """Where the counters come from (``AutoscalerMetrics``; a fake in the tests)."""

    async def read(self) -> LoopCounts: ...


class AutoscalerMetrics:
    """CA's ``/metrics`` at ``url``, read over one kept-alive connection."""

    def __init__(self, *, url: str, timeout: float = READ_TIMEOUT) -> None:
        self.url = url
        self._client = httpx.AsyncClient(timeout=timeout)

    async def read(self) -> LoopCounts:
        try:
            response = await self._client.get(self.url)
            response.raise_for_status()
        except httpx.HTTPError as exc:
            raise LoopsUnavailableError(f"{self.url}: {exc or type(exc).__name__}") from None
        return parse_loop_counts(response.text)

    async def close(self) -> None:
        await self._client.aclose()
