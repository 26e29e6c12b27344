from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from simkube.core.kubeapi import ApiError
from simkube.core.serving import Service
from simkube.driver.registry import Registry
from simkube.driver.service import DriverServicer, registrar, status_for
from simkube.gen.simkube.driver.v1 import driver_pb2, driver_pb2_grpc
from tests.support.traces import build_trace, config_map, write_native
from tests.unit.driver.fakes import FakeCluster, FakeKube

pytestmark = pytest.mark.unit
Request = driver_pb2.StartSimulationRequest


@pytest.fixture
async def stub(tmp_path: Path) -> AsyncIterator[tuple[driver_pb2_grpc.DriverStub, FakeCluster,
                                                      grpc.aio.Channel]]:
    cluster = FakeCluster()
    registry = Registry(kube=FakeKube(answer=cluster))  # type: ignore[arg-type]
    service = Service(name="sk-driver", listen="127.0.0.1:0", grace=1)
    await service.start(registrar(DriverServicer(registry)))
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{service.port}")
    try:
        yield driver_pb2_grpc.DriverStub(channel), cluster, channel
    finally:
        await channel.close()
        await registry.shutdown(timeout=5)
        await service.stop()


@pytest.fixture
def trace_bytes(tmp_path: Path) -> bytes:
    return write_native(tmp_path / "t.trace", build_trace(
        [(0, [config_map("a")]), (100, [config_map("b")])])).read_bytes()


async def _code(call: object) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call  # type: ignore[misc]
    return caught.value.code(), caught.value.details() or ""


@pytest.mark.parametrize(("request_message", "code", "words"), [
    (Request(name="sim", speed=-1, trace_data=b"x"), "INVALID_ARGUMENT", "speed -1.0"),
    (Request(name="sim", duration="5 min", trace_data=b"x"), "INVALID_ARGUMENT",
     "duration '5 min' is not a duration"),
    (Request(name="Sim!", trace_data=b"x"), "INVALID_ARGUMENT", "not a valid simulation name"),
    (Request(name="sim"), "INVALID_ARGUMENT", "no trace given"),
    (Request(name="sim", trace_data=b"\x00garbage"), "INVALID_ARGUMENT", "not a trace"),
    (Request(name="sim", trace_url="/no/such.sktrace"), "NOT_FOUND", "does not exist"),
    (Request(name="sim", tracer=driver_pb2.TracerSource()), "INVALID_ARGUMENT",
     "address is empty"),
])
async def test_bad_starts_are_refused_and_create_nothing(
        stub: tuple[driver_pb2_grpc.DriverStub, FakeCluster, grpc.aio.Channel],
        request_message: driver_pb2.StartSimulationRequest, code: str, words: str) -> None:
    driver, cluster, _ = stub
    got, details = await _code(driver.StartSimulation(request_message))
    assert got == getattr(grpc.StatusCode, code)
    assert words in details
    assert not cluster.roots
    listed = await driver.ListSimulations(driver_pb2.ListSimulationsRequest())
    assert not listed.simulations


async def test_unknown_simulations_are_not_found(
        stub: tuple[driver_pb2_grpc.DriverStub, FakeCluster, grpc.aio.Channel]) -> None:
    driver, _, _ = stub
    for call in (driver.Pause(driver_pb2.PauseRequest(name="ghost")),
                 driver.Resume(driver_pb2.ResumeRequest(name="ghost")),
                 driver.Hold(driver_pb2.HoldRequest(name="ghost")),
                 driver.Release(driver_pb2.ReleaseRequest(name="ghost")),
                 driver.Cancel(driver_pb2.CancelRequest(name="ghost"))):
        got, details = await _code(call)
        assert got == grpc.StatusCode.NOT_FOUND
        assert "ghost" in details
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for _ in driver.WatchSimulation(driver_pb2.WatchSimulationRequest(name="ghost")):
            pass
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND


async def test_a_replay_over_grpc(
        stub: tuple[driver_pb2_grpc.DriverStub, FakeCluster, grpc.aio.Channel],
        trace_bytes: bytes) -> None:
    driver, cluster, channel = stub
    started = await driver.StartSimulation(Request(name="sim", trace_data=trace_bytes,
                                                   speed=10))
    assert started.root_uid == "uid-sim"
    got, details = await _code(driver.StartSimulation(Request(name="sim",
                                                              trace_data=trace_bytes)))
    assert got == grpc.StatusCode.ALREADY_EXISTS
    with pytest.raises(grpc.aio.AioRpcError) as bad_interval:
        async for _ in driver.WatchSimulation(driver_pb2.WatchSimulationRequest(
                name="sim", interval="often")):
            pass
    assert bad_interval.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    updates = [u async for u in driver.WatchSimulation(
        driver_pb2.WatchSimulationRequest(name="sim", interval="10ms"))]
    assert updates[-1].state == driver_pb2.SimulationState.SIMULATION_STATE_SUCCEEDED
    assert updates[-1].objects_applied == 2
    got, details = await _code(driver.Resume(driver_pb2.ResumeRequest(name="sim")))
    assert got == grpc.StatusCode.FAILED_PRECONDITION
    assert "Succeeded" in details
    got, details = await _code(driver.Hold(driver_pb2.HoldRequest(name="sim")))
    assert got == grpc.StatusCode.FAILED_PRECONDITION
    assert "only a Running or Paused simulation can be held" in details
    got, details = await _code(driver.Hold(driver_pb2.HoldRequest(name="sim",
                                                                  expires_after="soon")))
    assert got == grpc.StatusCode.INVALID_ARGUMENT
    assert "expires_after" in details
    released = await driver.Release(driver_pb2.ReleaseRequest(name="sim"))  # a no-op
    assert not released.held
    cancelled = await driver.Cancel(driver_pb2.CancelRequest(name="sim"))
    assert cancelled.cleaned_up
    assert not cluster.roots

    reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    async for response in reflection.ServerReflectionInfo(iter([request])):
        names = {service.name for service in response.list_services_response.service}
        assert "simkube.driver.v1.Driver" in names
        break


def test_api_errors_map_to_status_codes() -> None:
    def code(http: int) -> grpc.StatusCode:
        return status_for(ApiError(code=http, reason="r", message="m"))
    assert code(401) == grpc.StatusCode.UNAUTHENTICATED
    assert code(403) == grpc.StatusCode.PERMISSION_DENIED
    assert code(503) == grpc.StatusCode.UNAVAILABLE
    assert code(422) == grpc.StatusCode.FAILED_PRECONDITION
    assert status_for(RuntimeError()) == grpc.StatusCode.INTERNAL
