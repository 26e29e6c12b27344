from __future__ import annotations

import io
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import grpc
import pytest

from simkube.core.serving import Service
from simkube.gen.simkube.tracer.v1 import tracer_pb2, tracer_pb2_grpc
from simkube.trace import NativeReader, TraceEvent
from simkube.tracer.service import TracerService
from simkube.tracer.status import KindStatus, WatchState
from simkube.tracer.store import Store
from tests.unit.tracer.conftest import HEADER, Clock, obj, ref

pytestmark = pytest.mark.unit
T0 = 1_700_000_000_000


@pytest.fixture
async def stub(open_store: Callable[..., Store], clock: Clock,
               ) -> AsyncIterator[tuple[tracer_pb2_grpc.TracerAsyncStub, Store]]:
    store = open_store()
    statuses = [KindStatus(kind="apps/v1.Deployment", state=WatchState.WATCHING,
                           resource_version="42", resyncs=1, last_event_ms=T0),
                KindStatus(kind="example.com/v1.Widget", state=WatchState.WAITING_FOR_CRD,
                           last_error="no CRD")]
    servicer = TracerService(store=store, statuses=statuses, header=lambda: HEADER,
                             clock=clock)

    def register(server: grpc.aio.Server) -> Sequence[str]:
        tracer_pb2_grpc.add_TracerServicer_to_server(servicer, server)
        return ["simkube.tracer.v1.Tracer"]

    service = Service(name="test-tracer", listen="127.0.0.1:0", grace=0.5)
    await service.start(register)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
        yield tracer_pb2_grpc.TracerStub(channel), store  # type: ignore[misc]
    await service.stop()


async def _export(stub: Any, **fields: Any) -> list[tracer_pb2.TraceChunk]:
    return [chunk async for chunk in stub.Export(tracer_pb2.ExportRequest(**fields))]


async def test_export_streams_a_readable_trace(stub: Any, clock: Clock) -> None:
    client, store = stub
    store.apply(ref("apps/v1.Deployment", "web"), obj("apps/v1.Deployment", "web"))
    clock.tick()
    store.delete(ref("apps/v1.Deployment", "web"))
    clock.tick()  # the window ends (exclusively) now
    chunks = await _export(client, chunk_bytes=1024)
    assert chunks[-1].last
    assert chunks[-1].progress.events_written == 2
    events = [item for item in NativeReader(io.BytesIO(b"".join(c.data for c in chunks)))
              if isinstance(item, TraceEvent)]
    assert [e.ts_ms for e in events] == [T0, T0 + 1000]
    later = await _export(client, start_ts_ms=T0 + 500)
    events = [item for item in NativeReader(io.BytesIO(b"".join(c.data for c in later)))
              if isinstance(item, TraceEvent)]
    assert [e.ts_ms for e in events] == [T0 + 500, T0 + 1000]  # the state then, the delete


@pytest.mark.parametrize(("fields", "problem"), [
    ({"start_ts_ms": 10, "end_ts_ms": 5}, r"end \(5\) must be after start \(10\)"),
    ({"start_ts_ms": -1}, "start_ts_ms -1 is negative"),
    ({"end_ts_ms": -1}, "end_ts_ms -1 is negative"),
    ({"chunk_bytes": 10}, "chunk_bytes 10 is outside"),
    ({"chunk_bytes": 64 * 2**20}, "is outside"),
    ({"filters": tracer_pb2.ExportFilters(include_kinds=["Deployment"])},
     "filters: kind filter 'Deployment' is not a kind key"),
    ({"filters": tracer_pb2.ExportFilters(label_selectors=["app in (x"])}, "cannot parse"),
    ({"filters": tracer_pb2.ExportFilters(exclude_namespaces=["UPPER"])},
     "not a valid namespace"),
])
async def test_bad_requests_are_invalid_argument(stub: Any, fields: dict[str, Any],
                                                 problem: str) -> None:
    client, _ = stub
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await _export(client, **fields)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert __import__("re").search(problem, caught.value.details())


async def test_status_reports_kinds_and_store(stub: Any) -> None:
    client, store = stub
    store.apply(ref("apps/v1.Deployment", "web"), obj("apps/v1.Deployment", "web"))
    reply = await client.GetStatus(tracer_pb2.GetStatusRequest())
    deployments, widgets = reply.kinds
    assert (deployments.kind, deployments.state, deployments.resource_version,
            deployments.events_stored, deployments.resyncs) == (
        "apps/v1.Deployment", tracer_pb2.WATCH_STATE_WATCHING, "42", 1, 1)
    assert deployments.last_event.ToMilliseconds() == T0
    assert (widgets.state, widgets.last_error) == (tracer_pb2.WATCH_STATE_WAITING_FOR_CRD,
                                                   "no CRD")
    assert not widgets.HasField("last_event")
    assert (reply.store_events, reply.segments, reply.live_objects) == (1, 1, 1)
    assert reply.oldest_ts_ms == T0
    assert reply.newest_ts_ms == T0
    assert reply.store_bytes > 0
