"""The replay loop: wait for each event's due time, hand its objects over, measure the lag.

The loop only waits and dispatches; each event's operations run as their own task, so an
event with thousands of objects (or a retrying one) never delays the next event's start.
Within an event, Namespaces and CustomResourceDefinitions go first, because the rest of the
event may live in them. An event's lag is how late its last operation was sent (when the
concurrency bound let it start) relative to its due time on the replay clock. Events are
decoded in a worker thread a batch ahead, so decoding never stalls the clock either.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Callable, Iterator

from simkube.core.logs import get_logger
from simkube.driver.applying import Applier
from simkube.driver.clock import ReplayClock
from simkube.driver.progress import FailureRecord, Progress
from simkube.driver.scanning import ReplayEvent, TraceScan, replay_events
from simkube.trace import KubeObject, TraceSource

log = get_logger(__name__)
PREFETCH_EVENTS = 256
FIRST_KINDS = frozenset({("v1", "Namespace"), ("apiextensions.k8s.io/v1",
                                                 "CustomResourceDefinition")})


def _goes_first(obj: KubeObject) -> bool:
    return (obj["apiVersion"], obj["kind"]) in FIRST_KINDS


async def prefetched(events: Iterator[ReplayEvent],
                     batch: int = PREFETCH_EVENTS) -> AsyncIterator[ReplayEvent]:
    """``events`` decoded in a worker thread, one batch ahead of the consumer."""
    def take() -> list[ReplayEvent]:
        return list(itertools.islice(events, batch))
    upcoming = asyncio.ensure_future(asyncio.to_thread(take))
    try:
        while True:
            current = await upcoming
            if not current:
                return
            upcoming = asyncio.ensure_future(asyncio.to_thread(take))
            for event in current:
                yield event
    finally:
        upcoming.cancel()


class Replayer:
    def __init__(self, *, source: TraceSource, scan: TraceScan, clock: ReplayClock,
                 applier: Applier, progress: Progress,
                 changed: Callable[[], None] = lambda: None, remove_hpas: bool = False) -> None:
        self._source = source
        self._remove_hpas = remove_hpas
        self._scan = scan
        self._clock = clock
        self._applier = applier
        self._progress = progress
        self._changed = changed
        self._in_flight: set[asyncio.Task[None]] = set()
        self._crash: BaseException | None = None

    async def run(self) -> None:
        """Replay every event, wait for their operations, then for the duration to pass.

        An event task that crashes (a bug, not a refused object) stops the replay with its
        exception rather than being lost."""
        events = replay_events(self._source, start_ms=self._scan.start_ms,
                               duration_ms=self._scan.duration_ms,
                               remove_hpas=self._remove_hpas)
        try:
            async for event in prefetched(events):
                due = await self._clock.wait_until(event.offset_ms)
                self._raise_crash()
                task = asyncio.create_task(self._apply_event(event, due))
                self._in_flight.add(task)
                task.add_done_callback(self._finished)
            while self._in_flight:
                await asyncio.wait(set(self._in_flight))
                self._raise_crash()
            self._raise_crash()
            if self._scan.duration_ms is not None:
                await self._clock.wait_until(self._scan.duration_ms)
        finally:
            for task in self._in_flight:
                task.cancel()

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._in_flight.discard(task)
        if not task.cancelled() and task.exception() is not None and self._crash is None:
            self._crash = task.exception()

    def _raise_crash(self) -> None:
        if self._crash is not None:
            raise self._crash

    async def _apply_event(self, event: ReplayEvent, due: float) -> None:
        operations = len(event.applied) + len(event.deleted)
        started = 0

        def one_started() -> None:
            nonlocal started
            started += 1
            if started == operations:
                self._progress.lag.record((time.monotonic() - due) * 1000.0)

        if operations == 0:
            self._progress.lag.record((time.monotonic() - due) * 1000.0)
        first = [obj for obj in event.applied if _goes_first(obj)]
        rest = [obj for obj in event.applied if not _goes_first(obj)]
        results = await asyncio.gather(*(
            self._applier.apply(obj, offset_ms=event.offset_ms, started=one_started)
            for obj in first))
        results += await asyncio.gather(
            *(self._applier.apply(obj, offset_ms=event.offset_ms, started=one_started)
              for obj in rest),
            *(self._applier.delete(obj, offset_ms=event.offset_ms, started=one_started)
              for obj in event.deleted))
        self._count(results)

    def _count(self, results: list[FailureRecord | None]) -> None:
        for failure in results:
            if failure is None:
                self._progress.objects_applied += 1
            else:
                self._progress.fail_object(failure)
                log.warning("object failed", simulation=self._progress.name,
                            operation=failure.operation.value, object=failure.object,
                            code=failure.code, reason=failure.reason, message=failure.message,
                            attempts=failure.attempts)
        self._progress.events_applied += 1
        self._changed()
