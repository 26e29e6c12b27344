from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from aiohttp import web

from simkube.core.errors import UnavailableError
from simkube.driver import sources
from simkube.driver.errors import DriverInputError, TraceNotFoundError
from simkube.gen.simkube.tracer.v1 import tracer_pb2, tracer_pb2_grpc
from simkube.trace import TraceFormatError
from tests.support.serving import serving
from tests.support.traces import build_trace, config_map, write_native

pytestmark = pytest.mark.unit
DATA = Path(__file__).resolve().parents[2] / "data" / "simkube"


async def test_paths_and_file_urls() -> None:
    by_path = await sources.from_location(str(DATA / "cronjob.sktrace"))
    assert by_path.header.tracked("batch/v1.CronJob") is not None
    by_url = await sources.from_location(f"file://{DATA / 'bare-pods.sktrace'}")
    assert len(by_url.lifecycles()) == 4


@pytest.mark.parametrize(("location", "error", "words"), [
    ("", DriverInputError, "is empty"),
    ("/no/such/trace.sktrace", TraceNotFoundError, "does not exist"),
    ("ftp://host/t", DriverInputError, "unsupported URL scheme"),
])
async def test_bad_locations(location: str, error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words):
        await sources.from_location(location)


async def test_a_directory_or_garbage_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DriverInputError, match="is a directory"):
        await sources.from_location(str(tmp_path))
    junk = tmp_path / "junk.trace"
    junk.write_bytes(b"\x00\x01 not a trace")
    with pytest.raises(TraceFormatError, match="not a trace"):
        await sources.from_location(str(junk))
    with pytest.raises(TraceFormatError):
        sources.from_bytes(b"")


@pytest.fixture
async def web_server() -> AsyncIterator[str]:
    async def trace(request: web.Request) -> web.Response:
        return web.Response(body=(DATA / "cronjob.sktrace").read_bytes())

    async def failing(request: web.Request) -> web.Response:
        return web.Response(status=500)
    app = web.Application()
    app.router.add_get("/cronjob.sktrace", trace)
    app.router.add_get("/failing", failing)
    async with serving(app) as url:
        yield url


async def test_http_urls(web_server: str) -> None:
    source = await sources.from_location(f"{web_server}/cronjob.sktrace")
    assert source.name.endswith("/cronjob.sktrace")
    with pytest.raises(TraceNotFoundError, match="HTTP 404"):
        await sources.from_location(f"{web_server}/missing")
    with pytest.raises(UnavailableError, match="HTTP 500"):
        await sources.from_location(f"{web_server}/failing")


Chunks = Callable[[tracer_pb2.ExportRequest], list[tracer_pb2.TraceChunk]]


class FakeTracer(tracer_pb2_grpc.TracerServicer):
    def __init__(self, chunks: Chunks) -> None:
        self.chunks = chunks
        self.requests: list[tracer_pb2.ExportRequest] = []

    async def Export(self, request: tracer_pb2.ExportRequest,  # noqa: N802
                     context: Any) -> AsyncIterator[tracer_pb2.TraceChunk]:
        self.requests.append(request)
        if request.start_ts_ms == 13:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "window too old")
        for chunk in self.chunks(request):
            yield chunk


def _chunked(data: bytes, *, size: int = 100, gap: bool = False,
             last: bool = True) -> list[tracer_pb2.TraceChunk]:
    chunks = [tracer_pb2.TraceChunk(data=data[start:start + size],
                                    offset=start + (1 if gap and start else 0))
              for start in range(0, len(data), size)]
    chunks[-1].last = last
    return chunks


@pytest.fixture
def native_bytes(tmp_path: Path) -> bytes:
    trace = build_trace([(0, [config_map(f"c{i}", payload="x" * 50) for i in range(20)])])
    return write_native(tmp_path / "t.trace", trace).read_bytes()


async def _serve(tracer: FakeTracer) -> tuple[grpc.aio.Server, str]:
    server = grpc.aio.server()
    tracer_pb2_grpc.add_TracerServicer_to_server(tracer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, f"127.0.0.1:{port}"


async def test_tracer_exports_are_reassembled(native_bytes: bytes) -> None:
    tracer = FakeTracer(lambda request: _chunked(native_bytes))
    server, address = await _serve(tracer)
    try:
        spec = sources.TracerSpec(address=address, start_ts_ms=5, end_ts_ms=10,
                                  filters=tracer_pb2.ExportFilters(include_namespaces=["app"]))
        source = await sources.from_tracer(spec)
        assert sum(len(event.applied) for event in source.events()) == 20
        assert tracer.requests[0].filters.include_namespaces == ["app"]
        assert (tracer.requests[0].start_ts_ms, tracer.requests[0].end_ts_ms) == (5, 10)
    finally:
        await server.stop(None)


@pytest.mark.parametrize(("chunks", "words"), [
    ({"gap": True}, "where 100 was expected"),
    ({"last": False}, "without its last chunk"),
])
async def test_broken_exports_are_refused(native_bytes: bytes, chunks: dict[str, bool],
                                          words: str) -> None:
    server, address = await _serve(FakeTracer(lambda request: _chunked(native_bytes, **chunks)))
    try:
        with pytest.raises(UnavailableError, match=words):
            await sources.from_tracer(sources.TracerSpec(address=address))
    finally:
        await server.stop(None)


async def test_tracer_refusals_and_unreachable_tracers(native_bytes: bytes) -> None:
    server, address = await _serve(FakeTracer(lambda request: _chunked(native_bytes)))
    try:
        with pytest.raises(DriverInputError, match="window too old"):
            await sources.from_tracer(sources.TracerSpec(address=address, start_ts_ms=13))
    finally:
        await server.stop(None)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{probe.getsockname()[1]}"
    with pytest.raises(UnavailableError, match="UNAVAILABLE"):
        await sources.from_tracer(sources.TracerSpec(address=closed))
    with pytest.raises(DriverInputError, match="address is empty"):
        await sources.from_tracer(sources.TracerSpec(address=" "))
    with pytest.raises(DriverInputError, match="ends"):
        await sources.from_tracer(sources.TracerSpec(address=address, start_ts_ms=9,
                                                     end_ts_ms=5))
    with pytest.raises(DriverInputError, match="ca_file"):
        await sources.from_tracer(sources.TracerSpec(address=address, tls=True,
                                                     ca_file="/no/ca.pem"))
