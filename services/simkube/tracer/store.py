"""The durable, bounded store: what is live now, and segments holding everything recorded.

Only the *live* state is in memory, one encoded body per existing object (what a re-list is
compared with, and what opens each new segment), so memory follows the size of the cluster,
never the length of the recording. History is on disk in append-only segments (``segments``),
rolled by size and age, dropped oldest first by retention. One process owns a store at a time
(an ``flock`` the kernel releases if the owner dies). After a restart ``recovery`` gives back
the live state, owner chains and running pods, and a new segment starts from them: nothing
recorded before is lost, and the re-list that follows records only what really changed while
the tracer was away.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import msgpack

from simkube.core.logs import get_logger
from simkube.trace import KubeObject, ObjectRef, TraceHeader
from simkube.tracer import recovery, segments
from simkube.tracer.config import Retention
from simkube.tracer.recovery import Live
from simkube.tracer.segments import Ancestors, RunFact, SegmentInfo

log = get_logger(__name__)
Clock = Callable[[], float]


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreStatus:
    bytes: int
    events: int
    segments: int
    oldest_ts: int
    newest_ts: int
    events_by_kind: dict[str, int]
    live_objects: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SegmentView:
    """A segment as an export reads it: up to ``limit`` bytes when still being written."""

    info: SegmentInfo
    limit: int | None


class Store:
    """Single writer; every method runs on the tracer's event loop."""

    def __init__(self, directory: Path, *, header: TraceHeader, retention: Retention,
                 segment_bytes: int = 64 * 2**20, segment_seconds: float = 3600.0,
                 clock: Clock = time.time,
                 keep: Callable[[ObjectRef], bool] | None = None) -> None:
        self.directory = directory
        self._header = header
        self._retention = retention
        self._segment_bytes = segment_bytes
        self._segment_seconds = segment_seconds
        self._clock = clock
        self._pins: dict[int, int] = {}
        self._doomed: set[int] = set()
        self._lock = recovery.lock(directory)
        try:
            found = recovery.recover(directory)
            self._sealed = found.sealed
            self.live = {ref: live for ref, live in found.live.items()
                         if keep is None or keep(ref)}
            self.running = found.running
            self._last_ts = found.last_ts
            self._current = self._open_segment()
        except BaseException:
            os.close(self._lock)
            raise

    # -- recording ---------------------------------------------------------------------

    def now_ms(self) -> int:
        """Event time: the wall clock, never earlier than the previous event (clock steps)."""
        self._last_ts = max(self._last_ts, int(self._clock() * 1000))
        return self._last_ts

    def apply(self, ref: ObjectRef, obj: KubeObject, *, ancestors: Ancestors = ()) -> bool:
        """Record ``obj`` (already sanitised) unless it equals what is stored; True if recorded."""
        body = msgpack.packb(obj, use_bin_type=True)
        known = self.live.get(ref)
        if known is not None:
            if known.ancestors != ancestors:
                known.ancestors = ancestors
                self._current.write_owners(ref, ancestors)
            if known.body == body or msgpack.unpackb(known.body, raw=False) == obj:
                return False
        elif ancestors:
            self._current.write_owners(ref, ancestors)
        self.live[ref] = Live(body, ancestors)
        self._current.write_event(self.now_ms(), applied=[segments.envelope(ref, body)],
                                  deleted=[])
        return True

    def delete(self, ref: ObjectRef) -> bool:
        """Record the deletion of a live object (with its last body); False if unknown."""
        known = self.live.pop(ref, None)
        if known is None:
            return False
        self._current.write_event(self.now_ms(), applied=[],
                                  deleted=[segments.envelope(ref, known.body)])
        return True

    def refs_of(self, kind_key: str) -> list[ObjectRef]:
        return [ref for ref in self.live if ref.kind_key == kind_key]

    def record_run(self, fact: RunFact) -> None:
        if fact.end_ms is None:
            self.running[fact.uid] = fact
        else:
            self.running.pop(fact.uid, None)
        self._current.write_run(fact)

    def flush(self) -> None:
        self._current.flush()

    # -- maintenance -------------------------------------------------------------------

    def maintain(self) -> None:
        """Flush, roll the segment when it is big or old enough, then apply retention."""
        self.flush()
        info = self._current.info
        age = self._clock() - info.start_ts / 1000
        grown = info.bytes - self._current.opened_bytes
        if info.events and (grown >= self._segment_bytes or age >= self._segment_seconds):
            self.roll()
        self.enforce_retention()

    def roll(self) -> None:
        self._sealed.append(self._current.seal())
        self._current = self._open_segment()

    def enforce_retention(self) -> None:
        max_age, max_bytes = self._retention.max_age_seconds, self._retention.max_bytes
        cutoff = (self._clock() - max_age) * 1000 if max_age else None
        total = sum(info.bytes for info in self._sealed) + self._current.info.bytes
        while self._sealed:
            oldest = self._sealed[0]
            newest_ts = oldest.last_ts if oldest.last_ts is not None else oldest.start_ts
            too_big = bool(max_bytes) and total > max_bytes
            if not too_big and (cutoff is None or newest_ts >= cutoff):
                break
            self._sealed.pop(0)
            total -= oldest.bytes
            if self._pins.get(oldest.number):
                self._doomed.add(oldest.number)  # an export is reading it: remove afterwards
            else:
                segments.remove(self.directory, oldest.number)
            log.info("segment dropped by retention", segment=oldest.number,
                     reason="size" if too_big else "age")

    def close(self) -> None:
        if self._lock < 0:
            return
        self._sealed.append(self._current.seal())
        os.close(self._lock)
        self._lock = -1

    # -- reading -----------------------------------------------------------------------

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[list[SegmentView]]:
        """The segments as they are now, protected from retention until the block ends."""
        self.flush()
        views = [SegmentView(info=replace(info), limit=None) for info in self._sealed]
        current = self._current
        views.append(SegmentView(info=replace(current.info, kinds=dict(current.info.kinds)),
                                 limit=current.trace_bytes))
        numbers = [view.info.number for view in views]
        for number in numbers:
            self._pins[number] = self._pins.get(number, 0) + 1
        try:
            yield views
        finally:
            for number in numbers:
                self._pins[number] -= 1
                if not self._pins[number]:
                    del self._pins[number]
                    if number in self._doomed:
                        self._doomed.discard(number)
                        segments.remove(self.directory, number)

    def status(self) -> StoreStatus:
        infos = [*self._sealed, self._current.info]
        by_kind: dict[str, int] = {}
        for info in infos:
            for kind, count in info.kinds.items():
                by_kind[kind] = by_kind.get(kind, 0) + count
        newest = max((info.last_ts or info.start_ts for info in infos), default=0)
        return StoreStatus(bytes=sum(info.bytes for info in infos),
                           events=sum(info.events for info in infos), segments=len(infos),
                           oldest_ts=infos[0].start_ts, newest_ts=newest,
                           events_by_kind=by_kind, live_objects=len(self.live))

    # -- opening -----------------------------------------------------------------------

    def _open_segment(self) -> segments.SegmentWriter:
        number = max((info.number for info in self._sealed), default=0) + 1
        state = [segments.envelope(ref, live.body) for ref, live in self.live.items()]
        writer = segments.SegmentWriter(
            self.directory, number=number,
            header=replace(self._header, created_ms=self.now_ms()), state=state,
            owners=[(ref, live.ancestors) for ref, live in self.live.items() if live.ancestors],
            runs=list(self.running.values()))
        log.info("segment opened", segment=number, state_objects=len(state))
        return writer
