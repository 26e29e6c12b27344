"""Marks each replayed pod with recorded usage countable when the recorded cluster's HPA
would have counted it.

An HPA ignores a new pod's CPU until one of its readings is a whole metric window past the
pod turning Ready. A source's metrics-server has a new pod's first rate at its second scrape
after the pod started (the first reading is stored, the next gives a rate), so the source's
HPA counted each new pod at that second scrape: 15-30 s after it turned Ready at the usual
15 s resolution, depending on where the scrapes fell. A replay scrapes every 2 s of trace
time and would count it within seconds (a step the source never took), and a single delay
for every pod (``metricsServer.min-window``) is right only on average: at 10x, one sync in
three apart.

The trace says where the source's scrapes fell: each usage sample is stamped with the scrape
it came from, every resolution. For a pod that turns Ready at trace time L, the second
scrape after L on that grid is when the source would have counted it; at that moment of the
replay's clock (pauses and holds included) the pod gets ``USAGE_COUNTABLE``, and the
project's metrics-server reports its windows as measured from then on, and a window no
reading can pass before (toolchain/metrics-server/window.go).
"""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import Sequence

from simkube.core.kubeapi import PODS, ApiError, KubeClient, merge_patch
from simkube.core.logs import get_logger
from simkube.driver.clock import ReplayClock
from simkube.driver.names import FIELD_MANAGER, USAGE_COUNTABLE

log = get_logger(__name__)
ATTEMPTS = 3
RETRY_DELAY = 1.0


def scrape_grid(stamps_ms: Sequence[int]) -> tuple[int, int] | None:
    """(a scrape's time, the resolution) of the source's metrics-server, from the sample
    stamps of one workload: the shortest gap between two is the resolution (a sampling period
    longer than it would skip scrapes, never add them); None under two distinct stamps."""
    distinct = sorted(set(stamps_ms))
    gaps = [b - a for a, b in itertools.pairwise(distinct)]
    return (distinct[0], min(gaps)) if gaps else None


def countable_at(ready_ms: float, *, grid: tuple[int, int]) -> int:
    """The trace time of the source's second scrape after ``ready_ms``."""
    anchor, step = grid
    first_after = anchor + (math.floor((ready_ms - anchor) / step) + 1) * step
    return first_after + step


class CountableMarker:
    """Marks pods in the order they turned Ready (their moments only grow with it)."""

    def __init__(self, *, kube: KubeClient, clock: ReplayClock) -> None:
        self._kube = kube
        self._clock = clock
        self._queue: asyncio.Queue[tuple[int, str, str]] = asyncio.Queue()
        self._seen: set[tuple[str, str]] = set()
        self.marked = 0

    def ready(self, *, namespace: str, name: str, grid: tuple[int, int] | None) -> None:
        """A pod of a workload with recorded usage runs (once per pod; later calls do
        nothing). Without a grid the pod is countable at once (the floor applies)."""
        if (namespace, name) in self._seen:
            return
        self._seen.add((namespace, name))
        now = self._clock.trace_offset_ms()
        due = countable_at(now, grid=grid) if grid else 0
        self._queue.put_nowait((due, namespace, name))

    async def run(self) -> None:
        while True:
            due, namespace, name = await self._queue.get()
            await self._clock.wait_until(due)
            await self._mark(namespace=namespace, name=name)

    async def _mark(self, *, namespace: str, name: str) -> None:
        patch = {"metadata": {"annotations": {USAGE_COUNTABLE: "true"}}}
        for attempt in range(1, ATTEMPTS + 1):
            try:
                await merge_patch(self._kube, PODS.path(namespace=namespace, name=name), patch,
                                  field_manager=FIELD_MANAGER)
            except ApiError as exc:
                if exc.code == 404:  # gone before the source would have counted it
                    return
                log.warning("pod not marked countable", pod=f"{namespace}/{name}",
                            attempt=attempt, error=str(exc))
                await asyncio.sleep(RETRY_DELAY)
                continue
            self.marked += 1
            return
