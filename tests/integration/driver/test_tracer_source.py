"""Service to service: record a workload with the real sk-tracer in one environment, replay it
with the real sk-driver service (StartSimulation with a tracer source) into another, and
compare the two object timelines."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml

from simkube.core.kubeapi import KubeClient
from simkube.gen.simkube.driver.v1 import driver_pb2, driver_pb2_grpc
from simkube.gen.simkube.tracer.v1 import tracer_pb2
from tests.conftest import SimEnv, skctl
from tests.integration.driver.conftest import Recorder, unique
from tests.support.kube import deployment, eventually

pytestmark = pytest.mark.integration
BIN = Path(sys.executable).parent
STEPS = [(0.0, 1), (3.0, 3), (6.0, 2)]  # (seconds after creation, replicas)
DELETE_AT = 9.0
ON_TIME = 1.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def production() -> Iterator[str]:
    """A second environment playing the production cluster; yields its kubeconfig."""
    name = f"prod-{os.getpid()}"
    skctl("env", "up", "--name", name)
    try:
        status = json.loads(skctl("env", "status", "--name", name, "--json").stdout)
        yield str(status["kubeconfig"])
    finally:
        skctl("env", "down", "--name", name, check=False)


class Process:
    """A real command in the background, its output kept for failure messages."""

    def __init__(self, argv: list[str], log: Path) -> None:
        self.log = log
        with log.open("wb") as out:
            self.process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)

    def check_alive(self) -> None:
        if self.process.poll() is not None:
            raise AssertionError(f"{self.log.stem} exited:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=60)


async def _serving(process: Process, address: str) -> None:
    async def up() -> bool:
        process.check_alive()
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                await asyncio.wait_for(channel.channel_ready(), timeout=1)
        except (TimeoutError, grpc.aio.AioRpcError):
            return False
        return True
    await eventually(up, timeout=60, what=f"{process.log.stem} to listen on {address}")


@pytest.fixture
async def tracer(production: str, tmp_path: Path) -> AsyncIterator[tuple[str, str]]:
    """sk-tracer recording Deployments of one namespace; yields (address, namespace)."""
    namespace = unique("prod")
    config = tmp_path / "tracer.yaml"
    config.write_text(yaml.safe_dump({
        "trackedObjects": {"apps/v1.Deployment": {"podSpecTemplatePaths": ["/spec/template"]}},
        "namespaces": [namespace]}))
    address = f"127.0.0.1:{_free_port()}"
    process = Process([str(BIN / "sk-tracer"), "--kubeconfig", production, "--config",
                       str(config), "--store", str(tmp_path / "store"), "--listen", address,
                       "--log-json"], tmp_path / "sk-tracer.log")
    try:
        await _serving(process, address)
        yield address, namespace
    finally:
        process.stop()


@pytest.fixture
async def driver_service(sim_env: SimEnv, tmp_path: Path) -> AsyncIterator[str]:
    address = f"127.0.0.1:{_free_port()}"
    process = Process([str(BIN / "sk-driver"), "--log-json", "--log-level", "info", "serve",
                       "--listen", address, "--kubeconfig", sim_env.kubeconfig],
                      tmp_path / "sk-driver.log")
    try:
        await _serving(process, address)
        yield address
    finally:
        assert process.stop() == 0, process.log.read_text()[-3000:]


async def _record_workload(kubeconfig: str, namespace: str) -> list[tuple[float, Any]]:
    """Create, scale and delete a Deployment; the (time, replicas) timeline, None = deleted."""
    kube = await KubeClient.connect(kubeconfig=Path(kubeconfig))
    timeline: list[tuple[float, Any]] = []
    try:
        await kube.request("POST", "/api/v1/namespaces", body={
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
        started = time.monotonic()
        for at, replicas in STEPS:
            await asyncio.sleep(max(0.0, started + at - time.monotonic()))
            if not timeline:
                await kube.request("POST", path, body=deployment("web", replicas=replicas))
            else:
                await kube.request("PATCH", f"{path}/web", body={"spec": {"replicas": replicas}},
                                   content_type="application/merge-patch+json")
            timeline.append((time.monotonic(), replicas))
        await asyncio.sleep(max(0.0, started + DELETE_AT - time.monotonic()))
        await kube.request("DELETE", f"{path}/web")
        timeline.append((time.monotonic(), None))
    finally:
        await kube.close()
    return timeline


async def test_tracer_export_replayed_through_the_driver_service(
        tracer: tuple[str, str], driver_service: str, production: str,
        driver_kube: KubeClient) -> None:
    tracer_address, namespace = tracer
    window_start = int(time.time() * 1000)
    recorded = await _record_workload(production, namespace)
    await asyncio.sleep(2)  # let the tracer's watch deliver the deletion

    name = unique("s2s")
    async with grpc.aio.insecure_channel(driver_service) as channel, \
            Recorder(kube=driver_kube, path="/apis/apps/v1/deployments",
                     simulation=name) as replayed:
        stub = driver_pb2_grpc.DriverStub(channel)
        await stub.StartSimulation(driver_pb2.StartSimulationRequest(
            name=name, namespace_prefix=unique("v"), tracer=driver_pb2.TracerSource(
                address=tracer_address, start_ts_ms=window_start,
                filters=tracer_pb2.ExportFilters(include_namespaces=[namespace]))))
        updates = [u async for u in stub.WatchSimulation(
            driver_pb2.WatchSimulationRequest(name=name))]
        assert updates[-1].state == driver_pb2.SimulationState.SIMULATION_STATE_SUCCEEDED
        assert updates[-1].objects_failed == 0

        simulated = [(item.at, None if item.type == "DELETED" else item.obj["spec"]["replicas"])
                     for item in replayed.seen]
        simulated = [entry for index, entry in enumerate(simulated)
                     if index == 0 or simulated[index - 1][1] != entry[1]]
        assert [value for _, value in simulated] == [value for _, value in recorded]
        for (sim_at, value), (prod_at, _) in zip(simulated, recorded, strict=True):
            drift = (sim_at - simulated[0][0]) - (prod_at - recorded[0][0])
            assert abs(drift) <= ON_TIME, (value, drift)
        cancelled = await stub.Cancel(driver_pb2.CancelRequest(name=name))
        assert cancelled.cleaned_up
