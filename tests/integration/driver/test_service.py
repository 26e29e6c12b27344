"""The Driver gRPC service in front of the local environment: start, watch, control, shutdown."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from simkube.core.kubeapi import KubeClient
from simkube.core.serving import Service
from simkube.driver.registry import Registry
from simkube.driver.service import DriverServicer, registrar
from simkube.gen.simkube.driver.v1 import driver_pb2, driver_pb2_grpc
from tests.conftest import SimEnv
from tests.integration.driver.conftest import DATA, assert_nothing_left, unique

pytestmark = pytest.mark.integration
STATE = driver_pb2.SimulationState


@dataclass
class Running:
    stub: driver_pb2_grpc.DriverStub
    channel: grpc.aio.Channel
    service: Service
    registry: Registry
    kube: KubeClient


@pytest.fixture
async def driver(sim_env: SimEnv) -> AsyncIterator[Running]:
    kube = await KubeClient.connect(kubeconfig=Path(sim_env.kubeconfig))
    registry = Registry(kube=kube)
    service = Service(name="sk-driver", listen="127.0.0.1:0", grace=2)
    await service.start(registrar(DriverServicer(registry)))
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{service.port}")
    try:
        yield Running(stub=driver_pb2_grpc.DriverStub(channel), channel=channel,
                      service=service, registry=registry, kube=kube)
    finally:
        await channel.close()
        await registry.shutdown(timeout=120)
        await service.stop()
        await kube.close()


async def test_start_watch_list_cancel(driver: Running) -> None:
    health = await health_pb2_grpc.HealthStub(driver.channel).Check(
        health_pb2.HealthCheckRequest(service="simkube.driver.v1.Driver"))
    assert health.status == health_pb2.HealthCheckResponse.SERVING

    name = unique("grpc")
    started = await driver.stub.StartSimulation(driver_pb2.StartSimulationRequest(
        name=name, trace_data=(DATA / "dsb-scaling.sktrace").read_bytes(), speed=200,
        namespace_prefix=unique("v")))
    assert started.name == name
    assert started.root_uid
    updates = [update async for update in driver.stub.WatchSimulation(
        driver_pb2.WatchSimulationRequest(name=name, interval="100ms"))]
    assert updates[-1].state == STATE.SIMULATION_STATE_SUCCEEDED
    assert (updates[-1].events_applied, updates[-1].events_total) == (19, 19)
    applied = [update.events_applied for update in updates]
    assert applied == sorted(applied)
    assert updates[-1].trace_time_ms == updates[-1].trace_length_ms == 1_134_000

    listed = await driver.stub.ListSimulations(driver_pb2.ListSimulationsRequest())
    assert name in [simulation.name for simulation in listed.simulations]

    with pytest.raises(grpc.aio.AioRpcError) as finished:
        await driver.stub.Pause(driver_pb2.PauseRequest(name=name))
    assert finished.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "Succeeded" in (finished.value.details() or "")

    cancelled = await driver.stub.Cancel(driver_pb2.CancelRequest(name=name))
    assert cancelled.cleaned_up
    await assert_nothing_left(driver.kube, driver.registry.get(name))


async def test_a_held_run_holds_by_itself_before_work_that_makes_pods(driver: Running) -> None:
    name = unique("grpc")
    await driver.stub.StartSimulation(driver_pb2.StartSimulationRequest(
        name=name, trace_data=(DATA / "dsb-scaling.sktrace").read_bytes(), speed=200,
        namespace_prefix=unique("v"), hold_for_pod_work=True))
    updates = [update async for update in driver.stub.WatchSimulation(
        driver_pb2.WatchSimulationRequest(name=name, interval="50ms"))]
    final = updates[-1]
    assert final.state == STATE.SIMULATION_STATE_SUCCEEDED
    holds = driver.registry.get(name).holds
    # The trace creates its Deployments, then scales them up and down: the creations and
    # scale-ups held, each for a quarter of a wall second, and nobody took them over.
    assert holds.own_holds >= 2
    assert holds.own_expired >= 1
    assert final.held_ms >= 240 * holds.own_expired
    assert (final.held, final.held_since_unix_ms) == (False, 0)
    held = [update for update in updates if update.held]
    assert all(update.held_since_unix_ms > 0 for update in held)
    await driver.stub.Cancel(driver_pb2.CancelRequest(name=name))
    await assert_nothing_left(driver.kube, driver.registry.get(name))


async def test_pause_resume_and_name_conflicts_over_grpc(driver: Running) -> None:
    name = unique("grpc")
    request = driver_pb2.StartSimulationRequest(
        name=name, trace_url=str(DATA / "dsb-scaling.sktrace"), namespace_prefix=unique("v"))
    await driver.stub.StartSimulation(request)
    with pytest.raises(grpc.aio.AioRpcError) as taken:
        await driver.stub.StartSimulation(request)
    assert taken.value.code() == grpc.StatusCode.ALREADY_EXISTS

    paused = await driver.stub.Pause(driver_pb2.PauseRequest(name=name))
    assert paused.state == STATE.SIMULATION_STATE_PAUSED
    resumed = await driver.stub.Resume(driver_pb2.ResumeRequest(name=name))
    assert resumed.state == STATE.SIMULATION_STATE_RUNNING
    with pytest.raises(grpc.aio.AioRpcError) as running:
        await driver.stub.Resume(driver_pb2.ResumeRequest(name=name))
    assert running.value.code() == grpc.StatusCode.FAILED_PRECONDITION

    cancelling = await driver.stub.Cancel(driver_pb2.CancelRequest(name=name, no_wait=True))
    assert cancelling.state in (STATE.SIMULATION_STATE_CANCELLING,
                                STATE.SIMULATION_STATE_CANCELLED)
    final = [update async for update in driver.stub.WatchSimulation(
        driver_pb2.WatchSimulationRequest(name=name))][-1]
    assert final.state == STATE.SIMULATION_STATE_CANCELLED
    assert final.cleaned_up
    await assert_nothing_left(driver.kube, driver.registry.get(name))


async def test_shutdown_cancels_running_simulations(driver: Running) -> None:
    name = unique("grpc")
    await driver.stub.StartSimulation(driver_pb2.StartSimulationRequest(
        name=name, trace_url=str(DATA / "dsb-scaling.sktrace"), namespace_prefix=unique("v")))
    simulation = driver.registry.get(name)
    await driver.registry.shutdown(timeout=120)
    assert simulation.snapshot().state.value == "Cancelled"
    assert simulation.snapshot().cleaned_up
    await assert_nothing_left(driver.kube, simulation)


async def test_cancel_deletes_what_a_dead_driver_left_of_its_run(driver: Running) -> None:
    name = unique("grpc")
    await driver.stub.StartSimulation(driver_pb2.StartSimulationRequest(
        name=name, trace_url=str(DATA / "dsb-scaling.sktrace"), namespace_prefix=unique("v")))
    earlier = driver.registry.get(name)
    await driver.stub.Pause(driver_pb2.PauseRequest(name=name))  # it applies nothing more
    # A new driver process knows no runs; the first one's root is still in the cluster.
    restarted = DriverServicer(Registry(kube=driver.kube))
    service = Service(name="sk-driver", listen="127.0.0.1:0", grace=2)
    await service.start(registrar(restarted))
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
            stub = driver_pb2_grpc.DriverStub(channel)
            cancelled = await stub.Cancel(driver_pb2.CancelRequest(name=name))
            assert cancelled.state == STATE.SIMULATION_STATE_CANCELLED
            assert "earlier sk-driver" in cancelled.message
            await assert_nothing_left(driver.kube, earlier)
            with pytest.raises(grpc.aio.AioRpcError) as unknown:
                await stub.Cancel(driver_pb2.CancelRequest(name=name))
            assert unknown.value.code() == grpc.StatusCode.NOT_FOUND
            assert "no root of that name" in (unknown.value.details() or "")
    finally:
        await service.stop()
