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
from typing import IO, Any

from simkube.trace.errors import TraceFormatError
from simkube.trace.limits import DEFAULT_LIMITS, ReadLimits, unpack_capped
from simkube.trace.model import NATIVE_VERSION, PodLifecycle, PodRun, TraceEvent, TraceHeader
from simkube.trace.native_format import (
    MAGIC,
    PREAMBLE,
    EncodedBatch,
    Envelope,
    RecordKind,
    check_envelopes,
    decode_header,
)
from simkube.trace.native_frames import RecordFrames


@dataclass(frozen=True, slots=True)
class StateRecord:
    """A slice of the initial state, as stored."""

    objects: EncodedBatch


TraceItem = StateRecord | TraceEvent | PodLifecycle


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
        self._frames = RecordFrames(stream, limits=limits, base_offset=PREAMBLE.size)
        record, where = self._next_record()
        if record is None or record[0] != RecordKind.HEADER or len(record) != 2:
            raise TraceFormatError("the first record must be the header", where=where)
        self.header: TraceHeader = decode_header(record[1], version=self.version, where=where)

    def __iter__(self) -> Iterator[TraceItem]:
        counts = {"events": 0, "state objects": 0, "lifecycle records": 0}
        pending: tuple[int, list[Envelope], list[Envelope], str] | None = None
        last_ts = -1
        while True:
            record, where = self._next_record()
            if record is None:
                raise TraceFormatError("the trace ends without its end record (truncated?)",
                                       where=where)
            kind = record[0]
            if kind == RecordKind.EVENT_MORE:
                if pending is None or len(record) != 3:
                    raise TraceFormatError("a continuation record must follow an event",
                                           where=where)
                pending[1].extend(check_envelopes(record[1], where=where))
                pending[2].extend(check_envelopes(record[2], where=where))
                continue
            if pending is not None:
                yield self._event(*pending)
                pending = None
            if kind == RecordKind.EVENT:
                ts = _event_ts(record, where=where, last_ts=last_ts)
                last_ts = ts
                pending = (ts, check_envelopes(record[2], where=where),
                           check_envelopes(record[3], where=where), where)
                counts["events"] += 1
            elif kind == RecordKind.STATE and len(record) == 2:
                if counts["events"]:
                    raise TraceFormatError("initial state after the first event", where=where)
                objects = self._batch(check_envelopes(record[1], where=where), where)
                counts["state objects"] += len(objects)
                yield StateRecord(objects)
            elif kind == RecordKind.LIFECYCLE:
                counts["lifecycle records"] += 1
                yield _lifecycle(record, where=where)
            elif kind == RecordKind.END:
                _check_end(record, counts, where=where)
                self._frames.expect_end()
                return
            else:
                raise TraceFormatError(f"unexpected record kind {kind!r} here", where=where)

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

    def _event(self, ts: int, applied: list[Envelope], deleted: list[Envelope],
               where: str) -> TraceEvent:
        return TraceEvent(ts_ms=ts, applied=self._batch(applied, where) if applied else [],
                          deleted=self._batch(deleted, where) if deleted else [])

    def _batch(self, envelopes: list[Envelope], where: str) -> EncodedBatch:
        return EncodedBatch(envelopes, where=where, limits=self._limits, source=self._source)


def _event_ts(record: list[Any], *, where: str, last_ts: int) -> int:
    if len(record) != 4:
        raise TraceFormatError("an event record has 4 fields", where=where)
    ts = record[1]
    if type(ts) is not int or ts < 0:
        raise TraceFormatError(f"event timestamp {ts!r} is not a non-negative integer",
                               where=where)
    if ts < last_ts:
        raise TraceFormatError(f"event timestamp {ts} is earlier than the previous event's "
                               f"{last_ts}", where=where)
    return ts


def _lifecycle(record: list[Any], *, where: str) -> PodLifecycle:
    if (len(record) != 4 or not isinstance(record[1], str) or not isinstance(record[2], str)
            or type(record[3]) is not list):
        raise TraceFormatError("a lifecycle record is [kind, owner kind, owner, runs]",
                               where=where)
    runs = []
    for index, run in enumerate(record[3]):
        if (type(run) is not list or len(run) != 3 or type(run[0]) is not int
                or not (run[1] is None or type(run[1]) is int)
                or not (run[2] is None or type(run[2]) is int)):
            raise TraceFormatError("a pod run is [start_ms, end_ms or nil, hash or nil]",
                                   where=f"{where}, run {index}")
        runs.append(PodRun(start_ms=run[0], end_ms=run[1], spec_hash=run[2]))
    return PodLifecycle(owner_kind=record[1], owner=record[2], runs=tuple(runs))


def _check_end(record: list[Any], counts: dict[str, int], *, where: str) -> None:
    declared = record[1:]
    if len(declared) != 3 or not all(type(value) is int for value in declared):
        raise TraceFormatError("the end record holds three counts", where=where)
    for (what, seen), expected in zip(counts.items(), declared, strict=True):
        if seen != expected:
            raise TraceFormatError(f"the end record counts {expected} {what} but the trace "
                                   f"holds {seen}", where=where)
