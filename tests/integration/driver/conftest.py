"""What the driver's integration tests share: the sample traces, a client, watchers, cleanup checks.

Timing assertions compare what a watch saw (stamped with ``time.monotonic()`` on arrival)
with the driver's own schedule (``Simulation.clock``), both on this process's monotonic
clock, so CPU contention from other test runs shows up as lag only where the driver really
was late.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from simkube.core.kubeapi import ApiError, KubeClient
from simkube.driver.names import ROOTS_PATH, SIMULATION_LABEL
from simkube.driver.options import SimulationOptions, build_options
from simkube.driver.registry import launch
from simkube.driver.simulation import Simulation
from simkube.driver.sources import from_location
from tests.conftest import SimEnv
from tests.support.kube import eventually

DATA = Path(__file__).resolve().parents[2] / "data" / "simkube"


def unique(stem: str) -> str:
    return f"{stem}-{uuid.uuid4().hex[:6]}"


@pytest.fixture
async def driver_kube(sim_env: SimEnv) -> AsyncIterator[KubeClient]:
    kube = await KubeClient.connect(kubeconfig=Path(sim_env.kubeconfig))
    try:
        yield kube
    finally:
        await kube.close()


async def start(kube: KubeClient, trace: Path | str, *, retry_deadline_s: float | None = None,
                **options: Any) -> Simulation:
    """Start a simulation of ``trace`` with a unique name and prefix unless given."""
    options.setdefault("name", unique("it"))
    options.setdefault("prefix", unique("v"))
    built: SimulationOptions = build_options(**options)
    if retry_deadline_s is not None:
        built = dataclasses.replace(built, retry_deadline_s=retry_deadline_s)
    return await launch(kube=kube, options=built, source=await from_location(str(trace)))


@dataclass
class Seen:
    """One watch event as it arrived: when, what kind of change, the object."""

    at: float
    type: str
    obj: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])


@dataclass
class Recorder:
    """Records every change to the objects at ``path`` that carry the simulation's label."""

    kube: KubeClient
    path: str
    simulation: str
    seen: list[Seen] = field(default_factory=list)
    _task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Recorder:
        ready = asyncio.Event()
        self._task = asyncio.create_task(self._run(ready))
        await ready.wait()
        return self

    async def __aexit__(self, *_: object) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self, ready: asyncio.Event) -> None:
        selector = f"{SIMULATION_LABEL}={self.simulation}"
        listing = await self.kube.request("GET", self.path, query={"labelSelector": selector})
        version = listing["metadata"]["resourceVersion"]
        ready.set()
        while True:
            query = {"labelSelector": selector, "resourceVersion": version,
                     "allowWatchBookmarks": "true"}
            async for event in self.kube.watch(self.path, query=query):
                version = event["object"]["metadata"].get("resourceVersion", version)
                if event["type"] in ("ADDED", "MODIFIED", "DELETED"):
                    self.seen.append(Seen(at=time.monotonic(), type=event["type"],
                                          obj=event["object"]))

    def timeline(self, name: str, value: Callable[[dict[str, Any]], Any],
                 ) -> list[tuple[float, Any]]:
        """When ``value(obj)`` of object ``name`` changed, and to what."""
        changes: list[tuple[float, Any]] = []
        for item in self.seen:
            if item.name == name and item.type != "DELETED":
                current = value(item.obj)
                if not changes or changes[-1][1] != current:
                    changes.append((item.at, current))
        return changes


async def assert_nothing_left(kube: KubeClient, simulation: Simulation) -> None:
    """No root, no virtual namespace, no object or pod labelled for the simulation."""
    selector = {"labelSelector": f"{SIMULATION_LABEL}={simulation.name}"}
    with pytest.raises(ApiError) as missing:
        await kube.request("GET", f"{ROOTS_PATH}/{simulation.name}")
    assert missing.value.code == 404, f"root {simulation.name} still exists"
    for path in ("/api/v1/namespaces", "/api/v1/pods", "/apis/apps/v1/deployments",
                 "/apis/batch/v1/jobs", "/apis/batch/v1/cronjobs", "/api/v1/nodes"):
        items = (await kube.request("GET", path, query=selector))["items"]
        assert not items, f"{path}: {[i['metadata']['name'] for i in items]} left behind"
    namespaces = (await kube.request("GET", "/api/v1/namespaces"))["items"]
    prefix = f"{simulation.options.prefix}-"
    left = [n["metadata"]["name"] for n in namespaces
            if n["metadata"]["name"].startswith(prefix)]
    assert not left, f"namespaces {left} left behind"


async def wait_finished(simulation: Simulation, *, timeout: float) -> None:
    async def finished() -> bool:
        return simulation.state.finished
    await eventually(finished, timeout=timeout, what=f"simulation {simulation.name} to end")
