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
from pathlib import Path
from typing import IO

import grpc

from simkube.core.errors import SimkubeError
from simkube.gen.simkube.tracer.v1 import tracer_pb2, tracer_pb2_grpc

Progress = Callable[[int, int, int], None]
"""Called with (events written, events total, bytes received) as chunks arrive."""


class TracerError(SimkubeError):
    """The tracer could not be reached or refused the request."""


def describe(error: grpc.aio.AioRpcError, *, address: str) -> TracerError:
    code = error.code()
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return TracerError(f"the tracer rejected the request: {error.details()}")
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return TracerError(f"cannot reach the tracer at {address}: {error.details()}",
                           hint="check --tracer and that sk-tracer is running")
    return TracerError(f"the tracer at {address} failed: {code.name}: {error.details()}")


async def export_to_file(output: Path, *, address: str, request: tracer_pb2.ExportRequest,
                         progress: Progress | None = None) -> int:
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
                                  progress=progress)
            handle.flush()
            os.fsync(handle.fileno())
        await asyncio.to_thread(temporary.replace, output)
        return size
    finally:
        await asyncio.to_thread(temporary.unlink, missing_ok=True)


async def _receive(handle: IO[bytes], *, address: str, request: tracer_pb2.ExportRequest,
                   progress: Progress | None) -> int:
    size = 0
    finished = False
    async with grpc.aio.insecure_channel(address) as channel:
        stub = tracer_pb2_grpc.TracerStub(channel)
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


async def get_status(address: str, *, timeout: float = 10.0) -> tracer_pb2.GetStatusResponse:
    async with grpc.aio.insecure_channel(address) as channel:
        try:
            return await tracer_pb2_grpc.TracerStub(channel).GetStatus(
                tracer_pb2.GetStatusRequest(), timeout=timeout)
        except grpc.aio.AioRpcError as exc:
            raise describe(exc, address=address) from None
