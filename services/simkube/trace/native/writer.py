"""Writing the native format incrementally, one record at a time, to any binary stream.

The tracer appends events as they happen and may stream the bytes over gRPC, so the writer
never holds more than one record, and ``flush`` makes everything written so far decodable
by a reader on the other end. Only ``close`` writes the end record: a stream that stops
early (a crash, a cancelled export) is recognisably incomplete, never silently short.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from types import TracebackType
from typing import IO, Any

import msgpack
import zstandard

from simkube.trace.encoding import pack_checked
from simkube.trace.errors import TraceFormatError
from simkube.trace.limits import DEFAULT_LIMITS
from simkube.trace.model.types import (
    NATIVE_VERSION,
    KubeObject,
    PodLifecycle,
    TraceEvent,
    TraceHeader,
)
from simkube.trace.model.usage import WorkloadUsage
from simkube.trace.native.format import (
    BATCH_BYTES,
    BATCH_EVENTS,
    CHUNK_BYTES,
    MAGIC,
    PREAMBLE,
    RECORD_LENGTH,
    EncodedBatch,
    Envelope,
    RecordKind,
    encode_header,
    envelope_of,
)


class NativeWriter:
    """Streams a trace into ``stream`` (left open on close); use as a context manager."""

    def __init__(self, stream: IO[bytes], *, header: TraceHeader, level: int = 3) -> None:
        stream.write(PREAMBLE.pack(MAGIC, NATIVE_VERSION, 0))
        # No zstd checksum: the end record carries a CRC of every record instead, which
        # (unlike zstd's trailing checksum) cannot be cut off without losing the end record.
        compressor = zstandard.ZstdCompressor(level=level)
        self._out = compressor.stream_writer(stream, closefd=False)
        self._packer = msgpack.Packer(use_bin_type=True)
        self._events = 0
        self._state_objects = 0
        self._lifecycles = 0
        self._usage = 0
        self._last_ts = 0
        self._crc = 0
        self._batch: list[list[Any]] = []
        self._batch_bytes = 0
        self._closed = False
        self._record([RecordKind.HEADER, encode_header(header)])

    def write_state(self, objects: Iterable[KubeObject]) -> None:
        """Add objects to the initial state; all of it must come before the first event."""
        if self._events:
            raise ValueError("the initial state must be written before any event")
        pack = self._packer.pack
        envelopes = [envelope_of(obj, where="initial state", index=i, pack=pack)
                     for i, obj in enumerate(objects, start=self._state_objects)]
        for chunk in _chunks(envelopes):
            self._record([RecordKind.STATE, chunk])
        self._state_objects += len(envelopes)

    def write_event(self, event: TraceEvent) -> None:
        """Append an event; small events are batched and reach the stream by ``flush``."""
        ts = event.ts_ms
        where = f"event {self._events}"
        if type(ts) is not int or ts < 0:
            raise TraceFormatError(f"timestamp {ts!r} is not a non-negative integer of "
                                   "milliseconds", where=where)
        if ts < self._last_ts:
            raise TraceFormatError(
                f"timestamp {ts} is earlier than the previous event's {self._last_ts}",
                where=where, hint="native traces are time-ordered; "
                "`skctl trace fix --fix timestamps-backwards=sort` reorders a trace")
        raw_applied, raw_deleted = event.encoded()
        # Objects read from a native file and never touched are copied as they are.
        pack = self._packer.pack
        applied = (raw_applied.envelopes if isinstance(raw_applied, EncodedBatch)
                   else [envelope_of(obj, where=where, index=i, pack=pack)
                         for i, obj in enumerate(event.applied)])
        deleted = (raw_deleted.envelopes if isinstance(raw_deleted, EncodedBatch)
                   else [envelope_of(obj, where=where, index=i, pack=pack)
                         for i, obj in enumerate(event.deleted)])
        size = sum(len(env[4]) for env in applied) + sum(len(env[4]) for env in deleted)
        self._last_ts = ts
        self._events += 1
        if size > CHUNK_BYTES:
            self._flush_batch()
            self._write_split(ts, applied, deleted)
            return
        self._batch.append([ts, applied, deleted])
        self._batch_bytes += size
        if self._batch_bytes >= BATCH_BYTES or len(self._batch) >= BATCH_EVENTS:
            self._flush_batch()

    def _flush_batch(self) -> None:
        if self._batch:
            self._record([RecordKind.EVENTS, self._batch])
            self._batch = []
            self._batch_bytes = 0

    def _write_split(self, ts: int, applied: list[Envelope], deleted: list[Envelope]) -> None:
        """An event too large for one record: its first part, then continuation records."""
        tagged = [(0, env) for env in applied] + [(1, env) for env in deleted]
        for index, chunk in enumerate(_chunks(tagged)):
            parts: list[list[Envelope]] = [[], []]
            for side, env in chunk:
                parts[side].append(env)
            if index == 0:
                self._record([RecordKind.EVENTS, [[ts, parts[0], parts[1]]]])
            else:
                self._record([RecordKind.EVENT_MORE, parts[0], parts[1]])

    def write_lifecycle(self, lifecycle: PodLifecycle) -> None:
        """Pod runs of one owner; may be written at any point (several times per owner)."""
        self._flush_batch()  # keep records in the order the caller wrote them
        # The instance type is written only when known, so a run without one reads as before.
        runs = [[run.start_ms, run.end_ms, run.spec_hash,
                 *([run.node_type] if run.node_type is not None else [])]
                for run in lifecycle.runs]
        self._record([RecordKind.LIFECYCLE, lifecycle.owner_kind, lifecycle.owner, runs])
        self._lifecycles += 1

    def write_usage(self, usage: WorkloadUsage) -> None:
        """One workload's recorded usage (once per workload); may be written at any point."""
        limit = DEFAULT_LIMITS.max_usage_samples
        if len(usage.samples) > limit:
            raise TraceFormatError(f"{len(usage.samples)} usage samples of {usage.kind} "
                                   f"{usage.workload} exceed the format's limit of {limit}")
        if self._usage >= DEFAULT_LIMITS.max_usage_series:
            raise TraceFormatError("more workloads with usage than the format's limit of "
                                   f"{DEFAULT_LIMITS.max_usage_series}")
        self._flush_batch()
        rows = [[s.t_ms, s.pods, s.cpu_millicores, s.memory_bytes] for s in usage.samples]
        self._record([RecordKind.USAGE, usage.kind, usage.workload, usage.period_ms, rows])
        self._usage += 1

    def flush(self) -> None:
        """Make every event written so far decodable by a reader of the stream."""
        self._flush_batch()
        self._out.flush(zstandard.FLUSH_BLOCK)

    def close(self) -> None:
        """Write the end record and finish the compressed stream."""
        if self._closed:
            return
        self._flush_batch()
        self._record([RecordKind.END, self._events, self._state_objects, self._lifecycles,
                      self._usage, self._crc])
        self._out.flush(zstandard.FLUSH_FRAME)
        self._closed = True

    def __enter__(self) -> NativeWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if exc is None:
            self.close()
        else:  # leave the stream without an end record: readers will call it incomplete
            self._out.flush(zstandard.FLUSH_FRAME)

    def _record(self, record: list[Any]) -> None:
        data = pack_checked(record, where="record", pack=self._packer.pack)
        limit = DEFAULT_LIMITS.max_record_bytes
        if len(data) > limit:
            raise TraceFormatError(f"a record of {len(data)} bytes exceeds the format's limit "
                                   f"of {limit} bytes (is one object that large?)")
        framed = RECORD_LENGTH.pack(len(data)) + data
        self._crc = zlib.crc32(framed, self._crc)
        self._out.write(framed)


def _chunks(items: list[Any]) -> list[list[Any]]:
    """Split envelopes (or tagged envelopes) so each record carries about CHUNK_BYTES."""
    chunks: list[list[Any]] = [[]]
    size = 0
    for item in items:
        env = item[1] if isinstance(item, tuple) else item
        body = len(env[4])
        if chunks[-1] and size + body > CHUNK_BYTES:
            chunks.append([])
            size = 0
        chunks[-1].append(item)
        size += body
    return chunks if chunks[-1] else []
