from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

import grpc
import pytest

from simkube.core.serving import Service
from simkube.gen.simkube.tracer.v1 import tracer_pb2, tracer_pb2_grpc
from simkube.trace import read_trace
from simkube.tracer.client import TracerError, export_to_file, get_status
from simkube.tracer.service import TracerService
from simkube.tracer.store import Store
from tests.unit.tracer.conftest import HEADER, Clock, obj, ref

pytestmark = pytest.mark.unit


@pytest.fixture
async def address(open_store: Callable[..., Store], clock: Clock) -> AsyncIterator[str]:
    store = open_store()
    store.apply(ref("v1.Pod", "p"), obj("v1.Pod", "p"))
    clock.tick()
    servicer = TracerService(store=store, statuses=[], header=lambda: HEADER, clock=clock)

    def register(server: grpc.aio.Server) -> Sequence[str]:
        tracer_pb2_grpc.add_TracerServicer_to_server(servicer, server)
        return []

    service = Service(name="client-test", listen="127.0.0.1:0", grace=0.5)
    await service.start(register)
    yield f"127.0.0.1:{service.port}"
    await service.stop()


async def test_export_lands_atomically_with_progress(address: str, tmp_path: Path) -> None:
    seen: list[tuple[int, int, int]] = []
    (tmp_path / "out").mkdir()
    output = tmp_path / "out" / "out.trace"
    size = await export_to_file(output, address=address,
                                request=tracer_pb2.ExportRequest(),
                                progress=lambda *args: seen.append(args))
    assert output.stat().st_size == size == seen[-1][2]
    assert [r.name for e in read_trace(output).events for r in e.applied_refs()] == ["p"]
    assert sorted(p.name for p in output.parent.iterdir()) == ["out.trace"]
    assert (await get_status(address)).store_events == 1


async def test_failures_leave_nothing_behind(address: str, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    output = tmp_path / "out" / "out.trace"
    with pytest.raises(TracerError, match="rejected the request: the window is empty"):
        await export_to_file(output, address=address,
                             request=tracer_pb2.ExportRequest(start_ts_ms=9, end_ts_ms=3))
    with pytest.raises(TracerError, match=r"cannot reach the tracer at 127\.0\.0\.1:9"):
        await export_to_file(output, address="127.0.0.1:9", request=tracer_pb2.ExportRequest())
    with pytest.raises(TracerError, match="cannot reach"):
        await get_status("127.0.0.1:9", timeout=2)
    assert list(output.parent.iterdir()) == []


async def test_mutual_tls(open_store: Callable[..., Store], clock: Clock,
                          tmp_path: Path) -> None:
    from simkube.core.serving import TlsConfig  # noqa: PLC0415
    from simkube.env.controlplane.certs import generate_pki  # noqa: PLC0415
    from simkube.tracer.client import ClientTls  # noqa: PLC0415

    generate_pki(tmp_path)
    servicer = TracerService(store=open_store(), statuses=[], header=lambda: HEADER,
                             clock=clock)

    def register(server: grpc.aio.Server) -> Sequence[str]:
        tracer_pb2_grpc.add_TracerServicer_to_server(servicer, server)
        return []

    service = Service(name="tls-test", listen="127.0.0.1:0", grace=0.5,
                      tls=TlsConfig(cert=tmp_path / "apiserver.crt",
                                    key=tmp_path / "apiserver.key",
                                    client_ca=tmp_path / "ca.crt"))
    await service.start(register)
    try:
        address = f"localhost:{service.port}"
        tls = ClientTls(ca=tmp_path / "ca.crt", cert=tmp_path / "admin.crt",
                        key=tmp_path / "admin.key")
        assert (await get_status(address, tls=tls)).segments == 1
        with pytest.raises(TracerError):
            await get_status(address, tls=ClientTls(ca=tmp_path / "ca.crt"), timeout=3)
    finally:
        await service.stop()
