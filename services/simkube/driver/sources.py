"""Where traces come from: a path, a URL, bytes in a request, or a tracer's Export stream.

Whatever the origin, the result is a ``TraceSource`` from the trace package (format detected
there). Remote traces are fetched whole before anything is replayed, with a size cap, so a
replay never stops halfway because the network did; the tracer's Export is a stream of
chunks whose concatenation is a native trace file, checked for gaps and for its final chunk.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

import grpc
import httpx

from simkube.core.errors import UnavailableError
from simkube.driver.errors import DriverInputError, TraceNotFoundError
from simkube.gen.simkube.tracer.v1 import tracer_pb2, tracer_pb2_grpc
from simkube.trace import TraceSource, open_trace, open_trace_bytes

MAX_REMOTE_BYTES = 1024 * 1024 * 1024
DOWNLOAD_TIMEOUT = 300.0
EXPORT_TIMEOUT = 600.0


@dataclass(frozen=True, kw_only=True)
class TracerSpec:
    address: str
    start_ts_ms: int = 0
    end_ts_ms: int = 0
    filters: tracer_pb2.ExportFilters | None = None
    tls: bool = False
    ca_file: str = ""


async def from_location(location: str, *, field: str = "trace") -> TraceSource:
    """A path, ``file://`` URL or ``http(s)://`` URL."""
    if not location.strip():
        raise DriverInputError(f"{field} is empty; give a trace file", field=field)
    parsed = urlparse(location)
    if parsed.scheme in ("http", "https"):
        return open_trace_bytes(await _download(location, field=field), name=location)
    if parsed.scheme == "file":
        return await asyncio.to_thread(_open_path, unquote(parsed.path), field=field)
    if parsed.scheme and len(parsed.scheme) > 1:
        raise DriverInputError(f"{field} {location!r}: unsupported URL scheme "
                               f"{parsed.scheme!r}; use a path, file://, http:// or https://",
                               field=field)
    return await asyncio.to_thread(_open_path, location, field=field)


def _open_path(location: str, *, field: str) -> TraceSource:
    path = Path(location).expanduser()
    if not path.exists():
        raise TraceNotFoundError(f"trace file {path} does not exist")
    if path.is_dir():
        raise DriverInputError(f"{field} {path} is a directory, not a trace file", field=field)
    return open_trace(path)


def from_bytes(data: bytes, *, name: str = "<request bytes>") -> TraceSource:
    return open_trace_bytes(data, name=name)


async def _download(url: str, *, field: str) -> bytes:
    try:
        async with httpx.AsyncClient(timeout=DOWNLOAD_TIMEOUT, follow_redirects=True) as web, \
                web.stream("GET", url) as reply:
            if reply.status_code == 404:
                raise TraceNotFoundError(f"trace {url} was not found (HTTP 404)")
            if reply.status_code != 200:
                raise UnavailableError(f"fetching trace {url} failed: HTTP "
                                       f"{reply.status_code}")
            chunks = []
            size = 0
            async for chunk in reply.aiter_bytes():
                size += len(chunk)
                if size > MAX_REMOTE_BYTES:
                    raise DriverInputError(f"{field} {url} is larger than "
                                           f"{MAX_REMOTE_BYTES} bytes", field=field)
                chunks.append(chunk)
            return b"".join(chunks)
    except httpx.HTTPError as exc:
        raise UnavailableError(f"fetching trace {url} failed: {exc}") from None


async def from_tracer(spec: TracerSpec, *, field: str = "tracer") -> TraceSource:
    """Export a window from sk-tracer and open it."""
    if not spec.address.strip():
        raise DriverInputError(f"{field}.address is empty; give the tracer's host:port",
                               field=f"{field}.address")
    if spec.end_ts_ms and spec.start_ts_ms and spec.end_ts_ms <= spec.start_ts_ms:
        raise DriverInputError(f"{field}: the window ends ({spec.end_ts_ms}) before it starts "
                               f"({spec.start_ts_ms})", field=field)
    request = tracer_pb2.ExportRequest(start_ts_ms=spec.start_ts_ms, end_ts_ms=spec.end_ts_ms,
                                       filters=spec.filters)
    channel = _channel(spec, field=field)
    try:
        data = await _collect(tracer_pb2_grpc.TracerStub(channel).Export(
            request, timeout=EXPORT_TIMEOUT), address=spec.address)
    except grpc.aio.AioRpcError as exc:
        details = exc.details() or exc.code().name
        if exc.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.OUT_OF_RANGE):
            raise DriverInputError(f"tracer at {spec.address} refused the export: {details}",
                                   field=field) from None
        raise UnavailableError(f"tracer at {spec.address} failed to export "
                               f"({exc.code().name}): {details}") from None
    finally:
        await channel.close()
    return open_trace_bytes(data, name=f"tracer {spec.address}")


def _channel(spec: TracerSpec, *, field: str) -> grpc.aio.Channel:
    if not spec.tls:
        return grpc.aio.insecure_channel(spec.address)
    roots = None
    if spec.ca_file:
        try:
            roots = Path(spec.ca_file).read_bytes()
        except OSError as exc:
            raise DriverInputError(f"{field}.ca_file {spec.ca_file} cannot be read: "
                                   f"{exc.strerror}", field=f"{field}.ca_file") from None
    return grpc.aio.secure_channel(spec.address, grpc.ssl_channel_credentials(roots))


async def _collect(stream: grpc.aio.UnaryStreamCall, *, address: str) -> bytes:  # type: ignore[type-arg]
    parts: list[bytes] = []
    size = 0
    finished = False
    async for chunk in stream:
        if finished:
            raise UnavailableError(f"tracer at {address} sent data after its last chunk")
        if chunk.offset != size:
            raise UnavailableError(f"tracer at {address} sent a chunk at offset {chunk.offset}"
                                   f" where {size} was expected")
        size += len(chunk.data)
        if size > MAX_REMOTE_BYTES:
            raise UnavailableError(f"tracer at {address} exported more than "
                                   f"{MAX_REMOTE_BYTES} bytes")
        parts.append(chunk.data)
        finished = chunk.last
    if not finished:
        raise UnavailableError(f"tracer at {address} ended the export without its last chunk")
    return b"".join(parts)
