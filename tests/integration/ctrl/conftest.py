"""A real sk-driver and a real sk-ctrl, both subprocesses, against the test environment.

sk-ctrl runs as its own process so a test can kill it (-9) and start it again, exactly as
a crash would; sk-driver stays up across that. Only one sk-ctrl may run at a time (every
sk-ctrl watches every Simulation), so the controller is per test and each test deletes its
Simulations before it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from simkube.core.kubeapi import ApiError, KubeClient
from simkube.simulation.names import SIMULATIONS_PATH, simulation_path
from tests.conftest import SimEnv
from tests.support.kube import eventually
from tests.support.traces import build_trace, config_map, write_native

BIN = Path(sys.executable).parent
LEASE_NAMESPACE = "sk-ctrl-it"


def unique(stem: str) -> str:
    return f"{stem}-{uuid.uuid4().hex[:6]}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tail(log: Path) -> str:
    return log.read_text()[-3000:]


async def wait_serving(address: str, *, process: subprocess.Popen[bytes], log: Path,
                       timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    async with grpc.aio.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise AssertionError(f"{log.name} exited: {tail(log)}")
            with contextlib.suppress(grpc.aio.AioRpcError):
                reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            await asyncio.sleep(0.2)
    raise AssertionError(f"{log.name} did not become healthy: {tail(log)}")


@pytest.fixture(scope="session")
def driver_address(sim_env: SimEnv, tmp_path_factory: pytest.TempPathFactory,
                   ) -> Iterator[str]:
    address = f"127.0.0.1:{free_port()}"
    log = tmp_path_factory.mktemp("driver") / "sk-driver.log"
    with log.open("wb") as out:
        process = subprocess.Popen([str(BIN / "sk-driver"), "--log-level", "info", "serve",
                                    "--listen", address, "--kubeconfig", sim_env.kubeconfig,
                                    "--grace", "60"], stdout=out, stderr=subprocess.STDOUT)
    try:
        asyncio.run(wait_serving(address, process=process, log=log))
        yield address
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=90)
        except subprocess.TimeoutExpired:
            process.kill()


@dataclass
class Controller:
    """sk-ctrl as a subprocess that tests can kill and start again."""

    kubeconfig: str
    driver: str
    results: Path
    log: Path
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    extra: list[str] = field(default_factory=list)

    async def start(self) -> None:
        address = self._spawn()
        assert self.process is not None
        await wait_serving(address, process=self.process, log=self.log)

    def _spawn(self) -> str:
        self.starts += 1
        address = f"127.0.0.1:{free_port()}"
        with self.log.open("ab") as out:
            out.write(f"--- start {self.starts}\n".encode())
            self.process = subprocess.Popen(
                [str(BIN / "sk-ctrl"), "serve", "--driver", self.driver, "--kubeconfig",
                 self.kubeconfig, "--results-dir", str(self.results), "--lease-namespace",
                 LEASE_NAMESPACE, "--listen", address, "--retry-budget", "20", *self.extra],
                stdout=out, stderr=subprocess.STDOUT)
        return address

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10)

    def stop(self) -> int:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)


@pytest.fixture
async def api(sim_env: SimEnv) -> AsyncIterator[KubeClient]:
    client = await KubeClient.connect(kubeconfig=Path(sim_env.kubeconfig))
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
async def ctrl(sim_env: SimEnv, driver_address: str, tmp_path: Path,
               api: KubeClient) -> AsyncIterator[Controller]:
    controller = Controller(kubeconfig=sim_env.kubeconfig, driver=driver_address,
                            results=tmp_path / "results", log=tmp_path / "sk-ctrl.log")
    await controller.start()
    try:
        yield controller
    finally:
        await delete_all_of(api, controller)
        if controller.process is not None and controller.process.poll() is None:
            assert controller.stop() == 0, "sk-ctrl did not shut down cleanly on SIGTERM"
        if os.environ.get("SK_CTRL_TEST_LOG"):
            print(controller.log.read_text())


CREATED: list[str] = []


async def create(kube: KubeClient, name: str, **spec: Any) -> dict[str, Any]:
    CREATED.append(name)
    return await kube.request("POST", SIMULATIONS_PATH, body={
        "apiVersion": "simkube.dev/v1alpha1", "kind": "Simulation",
        "metadata": {"name": name}, "spec": spec})


async def get(kube: KubeClient, name: str) -> dict[str, Any] | None:
    try:
        return await kube.request("GET", simulation_path(name))
    except ApiError as exc:
        if exc.code == 404:
            return None
        raise


async def wait_state(kube: KubeClient, name: str, *states: str, timeout: float = 60,
                     ) -> dict[str, Any]:
    async def reached() -> dict[str, Any] | None:
        found = await get(kube, name)
        if found and (found.get("status") or {}).get("state") in states:
            return found
        return None
    return await eventually(reached, timeout=timeout, what=f"{name} to be {states}")


async def wait_gone(kube: KubeClient, name: str, *, timeout: float = 60) -> None:
    async def gone() -> bool:
        return await get(kube, name) is None
    await eventually(gone, timeout=timeout, what=f"simulation {name} to disappear")


async def delete_all_of(kube: KubeClient, controller: Controller) -> None:
    names, CREATED[:] = list(CREATED), []
    for name in names:
        with contextlib.suppress(ApiError):
            await kube.request("DELETE", simulation_path(name))
    if controller.process is not None and controller.process.poll() is None:
        for name in names:
            await wait_gone(kube, name, timeout=120)


async def events_of(kube: KubeClient, name: str) -> list[dict[str, Any]]:
    listing = await kube.request("GET", "/api/v1/namespaces/default/events", query={
        "fieldSelector": f"involvedObject.name={name},involvedObject.kind=Simulation"})
    return list(listing.get("items") or [])


def trace_file(directory: Path, *, seconds: int, every: int = 5) -> Path:
    """ConfigMaps in namespace ``app``, one event every ``every`` trace seconds."""
    events = [(offset * 1000, [config_map(f"c{offset}", value=str(offset))])
              for offset in range(0, seconds + 1, every)]
    return write_native(directory / f"t{seconds}.trace", build_trace(events))
