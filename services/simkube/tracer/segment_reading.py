"""Reading store segments: whole, up to the last flush while still written, or after a crash.

A segment's writer may be appending while an export reads it, or may have died mid-way, so
every reader here stops cleanly where the written data stops: the trace file at the byte
limit of its last flush (or its last intact record), the metadata log at its last whole
record. Only a segment that was sealed properly and still ends early is reported as damaged.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import msgpack

from simkube.core.logs import get_logger
from simkube.trace import (
    NativeReader,
    ObjectRef,
    StateRecord,
    TraceEvent,
    TraceFormatError,
    TraceHeader,
    TraceItem,
)
from simkube.tracer.segments import (
    FRAME,
    MAX_META_RECORD,
    META_SUFFIX,
    TRACE_SUFFIX,
    Ancestors,
    MetaKind,
    RunFact,
    SegmentInfo,
    segment_path,
)

log = get_logger(__name__)


class _Limited:
    """A file read no further than ``limit`` bytes: the flushed part of an open segment."""

    def __init__(self, raw: IO[bytes], limit: int | None) -> None:
        self._raw = raw
        self._left = limit

    def read(self, size: int = -1) -> bytes:
        if self._left is None:
            return self._raw.read(size)
        size = self._left if size < 0 else min(size, self._left)
        data = self._raw.read(size)
        self._left -= len(data)
        return data


def read_trace(directory: Path, number: int, *, complete: bool,
               limit: int | None = None) -> Iterator[TraceItem]:
    """The segment's records; an incomplete segment simply ends where its writer stopped."""
    path = segment_path(directory, number, TRACE_SUFFIX)
    with path.open("rb") as raw:
        stream: Any = _Limited(raw, limit)
        try:
            yield from NativeReader(stream, source=str(path))
        except TraceFormatError as exc:
            if complete:
                log.warning("segment damaged; reading stops here", segment=str(path),
                            error=str(exc))


def read_header(directory: Path, number: int) -> TraceHeader:
    path = segment_path(directory, number, TRACE_SUFFIX)
    with path.open("rb") as raw:
        return NativeReader(raw, source=str(path)).header


def read_meta(directory: Path, number: int) -> Iterator[tuple[ObjectRef, Ancestors] | RunFact]:
    """The segment's metadata facts; a torn last record (a crash) ends the log."""
    path = segment_path(directory, number, META_SUFFIX)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    offset = 0
    while offset + FRAME.size <= len(data):
        (size,) = FRAME.unpack_from(data, offset)
        end = offset + FRAME.size + size
        if size > MAX_META_RECORD or end > len(data):
            break
        try:
            record = msgpack.unpackb(data[offset + FRAME.size:end], raw=False)
            fact = _meta_fact(record)
        except (ValueError, TypeError, IndexError, msgpack.UnpackException):
            log.warning("segment metadata damaged; reading stops here", path=str(path),
                        offset=offset)
            return
        offset = end
        if fact is not None:
            yield fact


def _meta_fact(record: list[Any]) -> tuple[ObjectRef, Ancestors] | RunFact | None:
    if record[0] == MetaKind.OWNERS:
        ref = ObjectRef(api_version=record[1], kind=record[2], namespace=record[3],
                        name=record[4])
        return ref, tuple(ObjectRef(api_version=a[0], kind=a[1], namespace=a[2], name=a[3])
                          for a in record[5])
    if record[0] == MetaKind.RUN:
        return RunFact(uid=record[1], owner_kind=record[2], owner=record[3], pod=record[4],
                       start_ms=record[5], end_ms=record[6],
                       node_type=record[7] if len(record) > 7 and isinstance(record[7], str)
                       else None)
    return None  # a newer tracer's fact: ignore what this version does not know


def scan(directory: Path, number: int) -> SegmentInfo:
    """Rebuild the index of a segment its writer never sealed (the tracer died)."""
    header = read_header(directory, number)
    info = SegmentInfo(number=number, start_ts=header.created_ms or 0)
    for item in read_trace(directory, number, complete=False):
        if isinstance(item, TraceEvent):
            info.events += 1
            info.first_ts = item.ts_ms if info.first_ts is None else info.first_ts
            info.last_ts = item.ts_ms
            for ref in (*item.applied_refs(), *item.deleted_refs()):
                info.kinds[ref.kind_key] = info.kinds.get(ref.kind_key, 0) + 1
        elif isinstance(item, StateRecord):
            info.state_objects += len(item.objects)
    info.bytes = sum(segment_path(directory, number, suffix).stat().st_size
                     for suffix in (TRACE_SUFFIX, META_SUFFIX)
                     if segment_path(directory, number, suffix).exists())
    info.sealed = True
    return info
