"""Talking to a running tracer: export a window into a file, read its status.

Used by ``skctl`` and by anything else that pulls traces from a tracer (the driver can
replay straight from an export). An export lands in a temporary sibling of the output and
is renamed only once the last chunk arrived with every byte accounted for, so an
interrupted or failed export never leaves a partial trace where a good one is expected.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import grpc

from simkube.core.errors import ConfigError, SimkubeError
from simkube.gen.simkube.tracer.v1 import tracer_pb2, tracer_pb2_grpc

Progress = Callable[[int, int, int], None]
"""Called with (events written, events total, bytes received) as chunks arrive."""


class TracerError(SimkubeError):
    """The tracer could not be reached or refused the request."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientTls:
    """Verify the tracer with ``ca``; present ``cert``/``key`` when it requires mTLS."""

    ca: Path
    cert: Path | None = None
    key: Path | None = None

    def credentials(self) -> grpc.ChannelCredentials:
        def read(path: Path | None, what: str) -> bytes | None:
            if path is None:
                return None
            try:
                return path.read_bytes()
            except OSError as exc:
                raise ConfigError(f"TLS {what} {path} cannot be read: {exc.strerror}") from None
        return grpc.ssl_channel_credentials(root_certificates=read(self.ca, "CA"),
                                            private_key=read(self.key, "key"),
                                            certificate_chain=read(self.cert, "certificate"))


def channel(address: str, tls: ClientTls | None) -> grpc.aio.Channel:
    if tls is None:
        return grpc.aio.insecure_channel(address)
    return grpc.aio.secure_channel(address, tls.credentials())


def describe(error: grpc.aio.AioRpcError, *, address: str) -> TracerError:
    code = error.code()
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return TracerError(f"the tracer rejected the request: {error.details()}")
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return TracerError(f"cannot reach the tracer at {address}: {error.details()}",
                           hint="check --tracer and that sk-tracer is running")
    return TracerError(f"the tracer at {address} failed: {code.name}: {error.details()}")


async def export_to_file(output: Path, *, address: str, request: tracer_pb2.ExportRequest,
                         progress: Progress | None = None, tls: ClientTls | None = None) -> int:
    """Write the exported trace to ``output`` atomically; returns the bytes written."""
    try:
        handle = tempfile.NamedTemporaryFile(  # noqa: SIM115  # closed below
            dir=output.parent, prefix=f".{output.name}.", suffix=".partial", delete=False)
    except OSError as exc:
        raise TracerError(f"cannot write {output}: {exc.strerror}") from None
    temporary = Path(handle.name)
    try:
        with handle:
            size = await _receive(handle, address=address, request=request,
                                  progress=progress, tls=tls)
            handle.flush()
            os.fsync(handle.fileno())
        await asyncio.to_thread(temporary.replace, output)
        return size
    finally:
        await asyncio.to_thread(temporary.unlink, missing_ok=True)


async def _receive(handle: IO[bytes], *, address: str, request: tracer_pb2.ExportRequest,
                   progress: Progress | None, tls: ClientTls | None) -> int:
    size = 0
    finished = False
    async with channel(address, tls) as connection:
        stub = tracer_pb2_grpc.TracerStub(connection)
        try:
            async for chunk in stub.Export(request):
                if chunk.offset != size:
                    raise TracerError(f"the tracer sent bytes at offset {chunk.offset} but "
                                      f"{size} had arrived; the export is incomplete")
                handle.write(chunk.data)
                size += len(chunk.data)
                if progress is not None:
                    progress(chunk.progress.events_written, chunk.progress.events_total, size)
                finished = chunk.last
        except grpc.aio.AioRpcError as exc:
            raise describe(exc, address=address) from None
    if not finished:
        raise TracerError("the export stream ended before its last chunk")
    return size


async def get_status(address: str, *, timeout: float = 10.0,
                     tls: ClientTls | None = None) -> tracer_pb2.GetStatusResponse:
    async with channel(address, tls) as connection:
        try:
            return await tracer_pb2_grpc.TracerStub(connection).GetStatus(
                tracer_pb2.GetStatusRequest(), timeout=timeout)
        except grpc.aio.AioRpcError as exc:
            raise describe(exc, address=address) from None
