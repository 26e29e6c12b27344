"""A replay plays the trace's recorded usage into KWOK, and metrics-server serves it.

Against a real environment started with ``--metrics-server``: the driver replays a
Deployment of two pods whose recorded load is 400m, then 1000m from trace second 6 on. Its
one ClusterResourceUsage names the replayed pods (renamed by their ReplicaSet, in the
renamed namespace) and gives each 200m, then 500m (the load over the two running pods); the
pods' metrics from metrics.k8s.io come to show it; the object is gone once the replay ends.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simkube.core.kubeapi import CLUSTER_RESOURCE_USAGES, POD_METRICS, KubeClient, poll
from simkube.driver.names import SIMULATION_LABEL
from simkube.trace import Trace, TraceEvent, TraceHeader, write_trace
from simkube.trace.model.usage import UsageSample, WorkloadUsage
from tests.conftest import SimEnv, running_env
from tests.integration.driver.conftest import start, unique

pytestmark = pytest.mark.integration
T0 = 1_700_000_000_000
MIB = 1 << 20


@pytest.fixture(scope="module")
def metrics_env() -> Iterator[SimEnv]:
    with running_env(variable="SIMKUBE_TEST_METRICS_ENV", prefix=f"usage-{os.getpid()}",
                     up_args=("--nodes", "1", "--metrics-server")) as env:
        yield env


def _trace() -> Trace:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "web", "namespace": "shop"},
                  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                               "containers": [{"name": "app", "image": "web:1", "resources": {
                                   "requests": {"cpu": "250m", "memory": "64Mi"}}}]}}}}
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}
    usage = WorkloadUsage(kind="apps/v1.Deployment", namespace="shop", name="web",
                          period_ms=6000, samples=(
                              UsageSample(t_ms=0, pods=2, cpu_millicores=400,
                                          memory_bytes=100 * MIB),
                              UsageSample(t_ms=6000, pods=2, cpu_millicores=1000,
                                          memory_bytes=100 * MIB)))
    return Trace(header=TraceHeader(), events=[
        TraceEvent(ts_ms=T0, applied=[namespace, deployment]),
        TraceEvent(ts_ms=T0 + 120_000, applied=[])], usage=(usage,))


async def _objects(kube: KubeClient, simulation: str) -> list[dict[str, Any]]:
    listing = await kube.request("GET", CLUSTER_RESOURCE_USAGES.path(),
                                 query={"labelSelector": f"{SIMULATION_LABEL}={simulation}"})
    return list(listing.get("items") or [])


async def _cpu_values(kube: KubeClient, simulation: str) -> tuple[list[str], str]:
    found = await _objects(kube, simulation)
    if len(found) != 1:
        return [], ""
    spec = found[0]["spec"]
    return spec["selector"]["matchNames"], spec["usages"][0]["usage"]["cpu"]["value"]


async def test_recorded_usage_reaches_kwok_and_metrics_server(metrics_env: SimEnv,
                                                               tmp_path: Path) -> None:
    path = tmp_path / "usage.trace"  # native: SimKube's formats hold no usage
    write_trace(_trace(), path)
    kube = await KubeClient.connect(kubeconfig=Path(metrics_env.kubeconfig))
    prefix = unique("u")
    try:
        sim = await start(kube, path, speed=2.0, prefix=prefix)

        async def first() -> bool:
            names, cpu = await _cpu_values(kube, sim.name)
            return len(names) == 2 and cpu == "200m"
        assert await poll(first, timeout=30, interval=0.2), await _objects(kube, sim.name)
        names, _ = await _cpu_values(kube, sim.name)
        assert all(name.startswith("web-") for name in names)

        async def second() -> bool:  # trace second 6 is wall second 3 at speed 2
            return (await _cpu_values(kube, sim.name))[1] == "500m"
        assert await poll(second, timeout=30, interval=0.2)

        # metrics-server (15 s resolution: this environment is not retimed) reports the pods
        # at 500m within two scrapes, long before the replay's 60 s end. Within 20 %: its
        # rate divides KWOK's counter (integrated when KWOK answers) by the times it sent
        # its requests, and on two loaded cores the two drift apart by up to a second.
        seen: list[str] = []

        async def served() -> bool:
            listing = await kube.request("GET", POD_METRICS.path(namespace=f"{prefix}-shop"))
            cpus = [container["usage"]["cpu"] for item in listing.get("items") or []
                    for container in item["containers"]]
            seen[:] = cpus
            return len(cpus) == 2 and all(_millicores(cpu) in range(400, 601) for cpu in cpus)
        assert await poll(served, timeout=55, interval=1.0), seen

        await asyncio.wait_for(sim.wait(), timeout=90)
        assert await _objects(kube, sim.name) == []
    finally:
        await kube.close()


def _millicores(quantity: str) -> int:
    if quantity.endswith("n"):
        return round(int(quantity[:-1]) / 1_000_000)
    if quantity.endswith("u"):
        return round(int(quantity[:-1]) / 1000)
    if quantity.endswith("m"):
        return int(quantity[:-1])
    return round(float(quantity) * 1000)
