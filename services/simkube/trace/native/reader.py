"""Reading the native format record by record from any binary stream, in constant memory.

The reader decompresses in fixed-size chunks, frames records by their declared length
(capped before anything is read) and checks every record's shape and order as it goes, so a
stream from a file, a socket or a gRPC response is handled the same way. Every failure,
whatever the decoder underneath says, becomes one ``TraceFormatError`` naming the record
number and the byte offset.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any, cast

from simkube.trace.errors import TraceFormatError
from simkube.trace.limits import DEFAULT_LIMITS, ReadLimits, unpack_capped
from simkube.trace.model.types import NATIVE_VERSION, PodLifecycle, PodRun, TraceEvent, TraceHeader
from simkube.trace.model.usage import RecordedUsage
from simkube.trace.native.format import (
    MAGIC,
    PREAMBLE,
    EncodedBatch,
    Envelope,
    RecordKind,
    check_envelopes,
    decode_header,
)
from simkube.trace.native.frames import RecordFrames


@dataclass(frozen=True, slots=True)
class StateRecord:
    """A slice of the initial state, as stored."""

    objects: EncodedBatch


TraceItem = StateRecord | TraceEvent | PodLifecycle | RecordedUsage


def read_preamble(stream: IO[bytes]) -> int:
    """Check the magic and return the format version, refusing versions this code cannot read."""
    data = stream.read(PREAMBLE.size)
    if len(data) < PREAMBLE.size or not data.startswith(MAGIC):
        raise TraceFormatError("not a native simkube-py trace (the magic bytes are missing)",
                               where="byte 0")
    _, version, flags = PREAMBLE.unpack(data)
    if version > NATIVE_VERSION:
        raise TraceFormatError(
            f"format version {version} is newer than this reader (it reads up to "
            f"{NATIVE_VERSION})", where="byte 8", hint="upgrade simkube-py to read this trace")
    if version < 1 or flags:
        raise TraceFormatError(f"unknown format version {version} / flags {flags:#x}",
                               where="byte 8")
    return int(version)


class NativeReader:
    """One pass over a native stream: ``header`` at once, then iterate the records."""

    def __init__(self, stream: IO[bytes], *, limits: ReadLimits = DEFAULT_LIMITS,
                 source: str | None = None) -> None:
        self.version = read_preamble(stream)
        self._limits = limits
        self._source = source  # names the file in errors raised when objects are decoded later
        self._pending: tuple[int, Any, Any] | None = None  # held back: see _events
        self._last_ts = 0
        self.lifecycles: list[PodLifecycle] = []  # filled as records are met
        self.usage: list[RecordedUsage] = []  # filled as records are met
        self._frames = RecordFrames(stream, limits=limits, base_offset=PREAMBLE.size)
        record, where = self._next_record()
        if record is None or record[0] != RecordKind.HEADER or len(record) != 2:
            raise TraceFormatError("the first record must be the header", where=where)
        self.header: TraceHeader = decode_header(record[1], version=self.version, where=where)

    def __iter__(self) -> Iterator[TraceItem]:
        """Every record's content in stream order: state, events, lifecycles and usage."""
        return self._walk(events_only=False)

    def events(self) -> Iterator[TraceEvent]:
        """Only the events (the fast path of a replay); lifecycle and usage records met on the
        way are collected in ``lifecycles`` and ``usage``, initial-state records are checked
        and skipped."""
        return cast("Iterator[TraceEvent]", self._walk(events_only=True))

    def _walk(self, *, events_only: bool) -> Iterator[TraceItem]:
        counts = {"events": 0, "state objects": 0, "lifecycle records": 0}
        if self.version >= 2:
            counts["usage records"] = 0
        while True:
            record, where = self._next_record()
            if record is None:
                raise TraceFormatError("the trace ends without its end record (truncated?)",
                                       where=where)
            kind = record[0]
            if kind in (RecordKind.EVENTS, RecordKind.EVENT_MORE):
                yield from self._events(record, where, counts)
            else:  # nothing more can extend the held-back event
                yield from self._release()
            if kind == RecordKind.STATE and len(record) == 2:
                if counts["events"]:
                    raise TraceFormatError("initial state after the first event", where=where)
                objects = self._batch(check_envelopes(record[1], where=where), where)
                counts["state objects"] += len(objects)
                if not events_only:
                    yield StateRecord(objects)
            elif kind == RecordKind.LIFECYCLE or (kind == RecordKind.USAGE
                                                  and self.version >= 2):
                item = self._side_record(record, where, counts)
                if not events_only:
                    yield item
            elif kind == RecordKind.END:
                _check_end(record, counts, self._frames.checksum, where=where)
                self._frames.expect_end()
                return
            elif kind not in (RecordKind.EVENTS, RecordKind.EVENT_MORE):
                raise TraceFormatError(f"unexpected record kind {kind!r} here", where=where)

    def _side_record(self, record: list[Any], where: str,
                     counts: dict[str, int]) -> PodLifecycle | RecordedUsage:
        """A lifecycle or usage record, also kept in ``lifecycles`` or ``usage``."""
        if record[0] == RecordKind.LIFECYCLE:
            counts["lifecycle records"] += 1
            lifecycle = _lifecycle(record, where=where)
            self.lifecycles.append(lifecycle)
            return lifecycle
        counts["usage records"] += 1
        usage = _usage(record, self._limits, counts["usage records"], where=where)
        self.usage.append(usage)
        return usage

    def _events(self, record: list[Any], where: str,
                counts: dict[str, int]) -> Iterator[TraceEvent]:
        """Events of an EVENTS record; the last is held back in case EVENT_MORE extends it."""
        if record[0] == RecordKind.EVENT_MORE:
            if self._pending is None or len(record) != 3:
                raise TraceFormatError("a continuation record must follow an event",
                                       where=where)
            ts, applied, deleted = self._pending
            self._pending = (ts, self._extend(applied, record[1], where),
                             self._extend(deleted, record[2], where))
            return
        yield from self._release()
        if len(record) != 2 or type(record[1]) is not list or not record[1]:
            raise TraceFormatError("an events record holds a non-empty list of events",
                                   where=where)
        batch = record[1]
        last = len(batch) - 1
        last_ts = self._last_ts
        limits, source = self._limits, self._source
        # The hot loop of every read: checks are inlined and locations built only on error.
        for index, entry in enumerate(batch):
            if type(entry) is not list or len(entry) != 3:
                raise TraceFormatError("an event is [ts_ms, applied, deleted]",
                                       where=f"{where}, event {index}")
            ts, applied, deleted = entry
            if type(ts) is not int or ts < last_ts:
                raise TraceFormatError(_bad_ts(ts, last_ts), where=f"{where}, event {index}")
            last_ts = ts
            if applied or type(applied) is not list:
                check_envelopes(applied, where=where, event=index)
                applied = EncodedBatch(applied, where, limits, index, source)
            if deleted or type(deleted) is not list:
                check_envelopes(deleted, where=where, event=index)
                deleted = EncodedBatch(deleted, where, limits, index, source)
            if index < last:
                yield TraceEvent(ts_ms=ts, applied=applied, deleted=deleted)
            else:
                self._pending = (ts, applied, deleted)
        self._last_ts = last_ts
        counts["events"] += len(batch)

    def _next_record(self) -> tuple[list[Any] | None, str]:
        frame = self._frames.next()
        where = f"record {self._frames.count} (byte {self._frames.offset} decompressed)"
        if frame is None:
            return None, where
        record = unpack_capped(frame, limits=self._limits, where=where)
        if type(record) is not list or not record or type(record[0]) is not int:
            raise TraceFormatError("a record must be a list starting with its kind",
                                   where=where)
        return record, where

    def _release(self) -> Iterator[TraceEvent]:
        """The held-back event, if any."""
        if self._pending is not None:
            ts, applied, deleted = self._pending
            self._pending = None
            yield TraceEvent(ts_ms=ts, applied=applied, deleted=deleted)

    def _extend(self, objects: EncodedBatch | list[Envelope], more: Any,
                where: str) -> EncodedBatch | list[Envelope]:
        envelopes = objects.envelopes if isinstance(objects, EncodedBatch) else objects
        envelopes.extend(check_envelopes(more, where=where))
        return self._batch(envelopes, where) if envelopes else envelopes

    def _batch(self, envelopes: list[Envelope], where: str) -> EncodedBatch:
        return EncodedBatch(envelopes, where, self._limits, None, self._source)


def _bad_ts(ts: Any, last_ts: int) -> str:
    if type(ts) is not int or ts < 0:
        return f"event timestamp {ts!r} is not a non-negative integer"
    return f"event timestamp {ts} is earlier than the previous event's {last_ts}"


def _lifecycle(record: list[Any], *, where: str) -> PodLifecycle:
    if (len(record) != 4 or not isinstance(record[1], str) or not isinstance(record[2], str)
            or type(record[3]) is not list):
        raise TraceFormatError("a lifecycle record is [kind, owner kind, owner, runs]",
                               where=where)
    runs = []
    for index, run in enumerate(record[3]):
        if (type(run) is not list or len(run) not in (3, 4) or type(run[0]) is not int
                or not (run[1] is None or type(run[1]) is int)
                or not (run[2] is None or type(run[2]) is int)
                or not (len(run) == 3 or run[3] is None or type(run[3]) is str)):
            raise TraceFormatError("a pod run is [start_ms, end_ms or nil, hash or nil"
                                   " (, instance type or nil)]", where=f"{where}, run {index}")
        runs.append(PodRun(start_ms=run[0], end_ms=run[1], spec_hash=run[2],
                           node_type=run[3] if len(run) == 4 else None))
    return PodLifecycle(owner_kind=record[1], owner=record[2], runs=tuple(runs))


def _usage(record: list[Any], limits: ReadLimits, series: int, *, where: str) -> RecordedUsage:
    """A usage record's shape; its values are judged later (``validate`` reports them all)."""
    if (len(record) != 5 or not isinstance(record[1], str) or not isinstance(record[2], str)
            or type(record[4]) is not list):
        raise TraceFormatError("a usage record is [7, workload kind, 'ns/name', period_ms, "
                               "samples]", where=where)
    if series > limits.max_usage_series:
        raise TraceFormatError(f"more than {limits.max_usage_series} workloads with usage "
                               "(the reader's limit)", where=where)
    if len(record[4]) > limits.max_usage_samples:
        raise TraceFormatError(f"{len(record[4])} usage samples exceed the reader's limit of "
                               f"{limits.max_usage_samples} per workload", where=where)
    return RecordedUsage(kind=record[1], workload=record[2], period_ms=record[3],
                         rows=tuple(record[4]))


def _check_end(record: list[Any], counts: dict[str, int], checksum: int, *,
               where: str) -> None:
    declared = record[1:]
    if len(declared) != len(counts) + 1 or not all(type(value) is int for value in declared):
        raise TraceFormatError(f"the end record holds {len(counts)} counts and a checksum",
                               where=where)
    for (what, seen), expected in zip(counts.items(), declared[:-1], strict=True):
        if seen != expected:
            raise TraceFormatError(f"the end record counts {expected} {what} but the trace "
                                   f"holds {seen}", where=where)
    if declared[-1] != checksum:
        raise TraceFormatError("checksum mismatch: the trace was altered or damaged after "
                               "it was written", where=where)
