"""The ``simkube.tracer.v1.Tracer`` gRPC service: Export and GetStatus.

Requests are checked completely before anything is read, so a bad window or filter is an
``INVALID_ARGUMENT`` with a message naming the field, never a half-sent trace. Export streams
while recording goes on: it reads a snapshot of the segments (pinned against retention until
it ends) and gives the event loop a turn between chunks.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from simkube.core.errors import ConfigError
from simkube.core.logs import get_logger
from simkube.gen.simkube.tracer.v1 import tracer_pb2, tracer_pb2_grpc
from simkube.trace import TraceHeader
from simkube.tracer.export_filters import ExportFilters
from simkube.tracer.exporting import Export
from simkube.tracer.status import KindStatus
from simkube.tracer.store import Store
from simkube.tracer.usage import UsageBook

log = get_logger(__name__)
DEFAULT_CHUNK_BYTES = 2**20
MIN_CHUNK_BYTES = 2**10
MAX_CHUNK_BYTES = 3 * 2**20  # below gRPC's default 4 MiB message limit, with headroom


@dataclass(frozen=True, slots=True, kw_only=True)
class ExportRequest:
    """A checked ``ExportRequest``: a window in Unix milliseconds and parsed filters."""

    start_ms: int
    end_ms: int
    filters: ExportFilters
    chunk_bytes: int


def check_request(request: tracer_pb2.ExportRequest, *, now_ms: int) -> ExportRequest:
    """The request's values, or a ``ConfigError`` saying which field is wrong."""
    if request.start_ts_ms < 0:
        raise ConfigError(f"start_ts_ms {request.start_ts_ms} is negative")
    if request.end_ts_ms < 0:
        raise ConfigError(f"end_ts_ms {request.end_ts_ms} is negative")
    end = request.end_ts_ms or now_ms
    if end <= request.start_ts_ms:
        raise ConfigError(f"the window is empty: end ({end}) must be after start "
                          f"({request.start_ts_ms})")
    chunk = request.chunk_bytes or DEFAULT_CHUNK_BYTES
    if not MIN_CHUNK_BYTES <= chunk <= MAX_CHUNK_BYTES:
        raise ConfigError(f"chunk_bytes {chunk} is outside {MIN_CHUNK_BYTES}.."
                          f"{MAX_CHUNK_BYTES}")
    f = request.filters
    try:
        filters = ExportFilters.parse(
            include_namespaces=list(f.include_namespaces),
            exclude_namespaces=list(f.exclude_namespaces),
            label_selectors=list(f.label_selectors), include_kinds=list(f.include_kinds),
            exclude_kinds=list(f.exclude_kinds))
    except ConfigError as exc:
        raise ConfigError(f"filters: {exc.message}") from None
    return ExportRequest(start_ms=request.start_ts_ms, end_ms=end, filters=filters,
                         chunk_bytes=chunk)


class TracerService(tracer_pb2_grpc.TracerServicer):
    def __init__(self, *, store: Store, statuses: list[KindStatus],
                 header: Callable[[], TraceHeader],
                 clock: Callable[[], float] = time.time,
                 usage: UsageBook | None = None) -> None:
        self._store = store
        self._usage = usage
        self._statuses = statuses
        self._header = header
        self._clock = clock

    async def Export(self, request: tracer_pb2.ExportRequest,  # noqa: N802  # gRPC's name
                     context: grpc.aio.ServicerContext[tracer_pb2.ExportRequest,
                                                       tracer_pb2.TraceChunk],
                     ) -> AsyncIterator[tracer_pb2.TraceChunk]:
        try:
            checked = check_request(request, now_ms=int(self._clock() * 1000))
        except ConfigError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, exc.message)
            return
        started = time.perf_counter()
        with self._store.snapshot() as views:
            export = Export(directory=self._store.directory, views=views,
                            start_ms=checked.start_ms, end_ms=checked.end_ms,
                            filters=checked.filters, header=self._header(),
                            chunk_bytes=checked.chunk_bytes, usage=self._usage)
            written = 0
            for chunk in export.chunks():
                if chunk.data or chunk.last:
                    written = chunk.events_written
                    yield tracer_pb2.TraceChunk(
                        data=chunk.data, offset=chunk.offset, last=chunk.last,
                        progress=tracer_pb2.ExportProgress(events_written=chunk.events_written,
                                                           events_total=chunk.events_total))
                await asyncio.sleep(0)
        log.info("exported", start_ms=checked.start_ms, end_ms=checked.end_ms, events=written,
                 seconds=round(time.perf_counter() - started, 3))

    async def GetStatus(self, request: tracer_pb2.GetStatusRequest,  # noqa: N802
                        context: grpc.aio.ServicerContext[tracer_pb2.GetStatusRequest,
                                                          tracer_pb2.GetStatusResponse],
                        ) -> tracer_pb2.GetStatusResponse:
        store = self._store.status()
        kinds = []
        for status in self._statuses:
            kind = tracer_pb2.KindStatus(
                kind=status.kind, state=tracer_pb2.WatchState.ValueType(int(status.state)),
                resource_version=status.resource_version,
                events_stored=store.events_by_kind.get(status.kind, 0),
                resyncs=status.resyncs, last_error=status.last_error)
            if status.last_event_ms is not None:
                kind.last_event.CopyFrom(_timestamp(status.last_event_ms))
            kinds.append(kind)
        return tracer_pb2.GetStatusResponse(
            kinds=kinds, store_bytes=store.bytes, store_events=store.events,
            segments=store.segments, oldest_ts_ms=store.oldest_ts, newest_ts_ms=store.newest_ts,
            live_objects=store.live_objects)


def _timestamp(ms: int) -> Timestamp:
    stamp = Timestamp()
    stamp.FromMilliseconds(ms)
    return stamp
