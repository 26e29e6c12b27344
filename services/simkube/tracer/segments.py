"""One store segment on disk: a native trace file, its metadata log and, once sealed, an index.

A segment is self-contained: its trace file starts with the complete recorded state at the
moment the segment was opened (the native format's initial state), then every event recorded
into it. Deleting the oldest segments (retention) therefore never loses what the remaining
ones need, and reading one segment is enough to know the state anywhere inside it. Files:

- ``NNNNNNNN.trace``: native format; ``header.created_ms`` is the segment's start time. It is
  flushed block by block, so a crash loses at most the last unflushed second, and a reader
  recognises the missing end record instead of misreading the tail. A native reader hands
  out an event only once the next record starts (an event may continue in more records), so
  every flush after new events ends with an empty lifecycle record, a marker that makes the
  last event readable before the segment is sealed.
- ``NNNNNNNN.meta``: length-framed msgpack facts the trace format has no place for: each
  owned object's owner chain, and pod runs (with the pod's uid, so a run seen twice after a
  restart is still one run). The segment's first records restate what is live.
- ``NNNNNNNN.index.json``: written when the segment is sealed: its time range and counts,
  so an export opens only the segments its window needs.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any

import msgpack

from simkube.core.logs import get_logger
from simkube.trace import (
    DEFAULT_LIMITS,
    EncodedBatch,
    Envelope,
    NativeWriter,
    ObjectRef,
    PodLifecycle,
    TraceEvent,
    TraceHeader,
)

log = get_logger(__name__)

TRACE_SUFFIX = ".trace"
META_SUFFIX = ".meta"
INDEX_SUFFIX = ".index.json"
FRAME = struct.Struct(">I")
MAX_META_RECORD = 16 * 2**20


class MetaKind(IntEnum):
    OWNERS = 1  # [1, apiVersion, kind, namespace, name, [[apiVersion, kind, ns, name]...]]
    # [2, pod uid, owner kind, owner ns/name, pod ns/name, start_ms, end_ms | nil,
    #  instance type | nil] (older tracers wrote no instance type)
    RUN = 2


FLUSH_MARKER = PodLifecycle(owner_kind="", owner="")
"""Ends a flush so the last event is readable (see above); readers of segments skip it."""

Ancestors = tuple[ObjectRef, ...]
"""An object's owner chain, nearest owner first."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFact:
    """What is known of one pod's run; a later fact for the same uid supersedes an earlier."""

    uid: str
    owner_kind: str
    owner: str
    pod: str
    start_ms: int
    end_ms: int | None = None
    node_type: str | None = None  # the instance type of the node it ran on, when known


@dataclass(slots=True, kw_only=True)
class SegmentInfo:
    number: int
    start_ts: int
    first_ts: int | None = None
    last_ts: int | None = None
    events: int = 0
    state_objects: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    bytes: int = 0
    sealed: bool = False  # no more writes will come
    complete: bool = False  # sealed by its writer, with an end record (not left by a crash)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> SegmentInfo:
        return cls(**{key: raw[key] for key in cls.__slots__ if key in raw})


def segment_path(directory: Path, number: int, suffix: str) -> Path:
    return directory / f"{number:08d}{suffix}"


def envelope(ref: ObjectRef, body: bytes) -> Envelope:
    return [ref.api_version, ref.kind, ref.namespace, ref.name, body]


def ref_of(env: Envelope) -> ObjectRef:
    return ObjectRef(api_version=env[0], kind=env[1], namespace=env[2], name=env[3])


def event_envelopes(event: TraceEvent) -> tuple[list[Envelope], list[Envelope]]:
    """An event's applied and deleted objects as stored, without decoding their bodies."""
    applied, deleted = event.encoded()
    return (applied.envelopes if isinstance(applied, EncodedBatch) else [],
            deleted.envelopes if isinstance(deleted, EncodedBatch) else [])


def batch(envelopes: list[Envelope]) -> EncodedBatch:
    """Encoded objects the native writer copies without decoding and re-encoding them."""
    return EncodedBatch(envelopes, where="store", limits=DEFAULT_LIMITS)


class SegmentWriter:
    """Appends to one open segment; ``seal`` finishes it and writes its index."""

    def __init__(self, directory: Path, *, number: int, header: TraceHeader,
                 state: list[Envelope], owners: Iterable[tuple[ObjectRef, Ancestors]],
                 runs: Iterable[RunFact]) -> None:
        self.directory = directory
        self.info = SegmentInfo(number=number, start_ts=header.created_ms or 0,
                                state_objects=len(state))
        self._trace = segment_path(directory, number, TRACE_SUFFIX).open("xb")
        self._meta = segment_path(directory, number, META_SUFFIX).open("xb")
        self._writer = NativeWriter(self._trace, header=header, level=1)
        self._unmarked = False
        if state:
            # write_state takes decoded objects; this runs once per segment.
            self._writer.write_state(batch(state).decode())
        for ref, ancestors in owners:
            self.write_owners(ref, ancestors)
        for run in runs:
            self.write_run(run)
        self.flush()
        self.opened_bytes = self.info.bytes  # the restated state; rolling counts what follows

    def write_event(self, ts_ms: int, *, applied: list[Envelope],
                    deleted: list[Envelope]) -> None:
        self._writer.write_event(TraceEvent(ts_ms=ts_ms, applied=batch(applied),
                                            deleted=batch(deleted)))
        self._unmarked = True
        info = self.info
        info.events += 1
        info.first_ts = ts_ms if info.first_ts is None else info.first_ts
        info.last_ts = ts_ms
        for env in (*applied, *deleted):
            key = f"{env[0]}.{env[1]}"
            info.kinds[key] = info.kinds.get(key, 0) + 1

    def write_owners(self, ref: ObjectRef, ancestors: Ancestors) -> None:
        self._meta_record([MetaKind.OWNERS, ref.api_version, ref.kind, ref.namespace,
                           ref.name, [[a.api_version, a.kind, a.namespace, a.name]
                                      for a in ancestors]])

    def write_run(self, run: RunFact) -> None:
        self._meta_record([MetaKind.RUN, run.uid, run.owner_kind, run.owner, run.pod,
                           run.start_ms, run.end_ms, run.node_type])

    def flush(self) -> None:
        """Make everything written so far readable by another reader of the files."""
        if self._unmarked:
            self._writer.write_lifecycle(FLUSH_MARKER)
            self._unmarked = False
        self._writer.flush()
        self._trace.flush()
        self._meta.flush()
        self.info.bytes = self._trace.tell() + self._meta.tell()

    @property
    def trace_bytes(self) -> int:
        """Bytes of the trace file a reader may read (everything up to the last flush)."""
        return self._trace.tell()

    def seal(self) -> SegmentInfo:
        self._writer.close()
        for stream in (self._trace, self._meta):
            stream.flush()
            os.fsync(stream.fileno())
        self.info.bytes = self._trace.tell() + self._meta.tell()
        self._trace.close()
        self._meta.close()
        self.info.sealed = self.info.complete = True
        write_index(self.directory, self.info)
        return self.info

    def _meta_record(self, record: list[Any]) -> None:
        data = msgpack.packb(record, use_bin_type=True)
        self._meta.write(FRAME.pack(len(data)) + data)


def write_index(directory: Path, info: SegmentInfo) -> None:
    path = segment_path(directory, info.number, INDEX_SUFFIX)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(info.to_json()))
    temporary.replace(path)


def remove(directory: Path, number: int) -> None:
    for suffix in (INDEX_SUFFIX, TRACE_SUFFIX, META_SUFFIX):
        segment_path(directory, number, suffix).unlink(missing_ok=True)
