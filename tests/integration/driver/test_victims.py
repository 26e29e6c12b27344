"""A replayed scale-down removes the pod the recording removed, not the one the ReplicaSet
would pick by its own rules (the newest), and from the kind of node the recording removed
it from when the trace cannot tell the pods apart otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simkube.core.kubeapi import INSTANCE_TYPE_LABEL, KubeClient
from simkube.driver.names import SIMULATION_LABEL
from simkube.driver.victims import DELETION_COST
from simkube.trace import PodLifecycle, PodRun
from tests.integration.driver.conftest import start, unique, wait_finished
from tests.support.kube import eventually
from tests.support.traces import START_MS, build_trace, write_native

pytestmark = pytest.mark.integration


def _web(replicas: int, **placement: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{
                                      "name": "c", "image": "web",
                                      "resources": {"requests": {"cpu": "10m"}}}],
                                           **placement}}}}


def _node(name: str, *, instance_type: str, pool: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {
                "type": "kwok", "kubernetes.io/hostname": name, "victims-pool": pool,
                INSTANCE_TYPE_LABEL: instance_type}},
            "spec": {"providerID": f"kwok://{name}"},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "20"}}}


async def test_the_recorded_victim_goes_not_the_newest_pod(driver_kube: KubeClient,
                                                           tmp_path: Path) -> None:
    # One pod, two more 3 s later; at 8 s the recording lost the first one. A ReplicaSet left
    # to itself deletes one of the two newer pods (Ready for less time).
    runs = (PodRun(start_ms=START_MS, end_ms=START_MS + 8_300),
            PodRun(start_ms=START_MS + 3_000), PodRun(start_ms=START_MS + 3_000))
    trace = write_native(tmp_path / "victims.trace", build_trace(
        [(0, [_web(1)]), (3_000, [_web(3)]), (8_000, [_web(2)])],
        lifecycles=[PodLifecycle(owner_kind="apps/v1.Deployment", owner="shop/web",
                                 runs=runs)]))
    simulation = await start(driver_kube, trace, duration="11s")
    selector = {"labelSelector": f"{SIMULATION_LABEL}={simulation.name}"}

    async def pods() -> list[dict[str, Any]]:
        items = (await driver_kube.request("GET", "/api/v1/pods", query=selector))["items"]
        return [pod for pod in items if not pod["metadata"].get("deletionTimestamp")]

    async def first_pod() -> str | None:
        found = await pods()
        return str(found[0]["metadata"]["name"]) if len(found) == 1 else None
    first = await eventually(first_pod, timeout=10, what="the first web pod")

    async def three_ready() -> bool:
        found = await pods()
        return len(found) == 3 and all(
            any(c["type"] == "Ready" and c["status"] == "True"
                for c in pod.get("status", {}).get("conditions") or []) for pod in found)
    await eventually(three_ready, timeout=10, what="three Ready web pods")
    await wait_finished(simulation, timeout=30)
    left = await pods()
    assert len(left) == 2
    assert first not in {pod["metadata"]["name"] for pod in left}
    assert all(DELETION_COST not in (pod["metadata"].get("annotations") or {}) for pod in left)
    assert simulation.snapshot().state.value == "Succeeded"
    await simulation.cancel()


async def test_a_same_second_group_loses_the_pod_on_the_recorded_instance_type(
        driver_kube: KubeClient, tmp_path: Path) -> None:
    # Two pods started in one second, one per node; the recording removed the one on the
    # small node. Only the instance types tell the replay's two pods apart.
    pool = unique("pool")
    small, large = unique("small"), unique("large")
    placement = {
        "nodeSelector": {"victims-pool": pool},
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}},
             "topologyKey": "kubernetes.io/hostname"}]}}}
    runs = (PodRun(start_ms=START_MS + 1_000, end_ms=START_MS + 8_300, node_type="it-small"),
            PodRun(start_ms=START_MS + 1_000, node_type="it-large"))
    trace = write_native(tmp_path / "typed.trace", build_trace(
        [(0, [_node(small, instance_type="it-small", pool=pool),
              _node(large, instance_type="it-large", pool=pool), _web(2, **placement)]),
         (8_000, [_web(1, **placement)])],
        lifecycles=[PodLifecycle(owner_kind="apps/v1.Deployment", owner="shop/web",
                                 runs=runs)]))
    simulation = await start(driver_kube, trace, duration="11s")
    selector = {"labelSelector": f"{SIMULATION_LABEL}={simulation.name}"}

    async def running_on() -> list[str]:
        items = (await driver_kube.request("GET", "/api/v1/pods", query=selector))["items"]
        return sorted(str(pod["spec"].get("nodeName")) for pod in items
                      if not pod["metadata"].get("deletionTimestamp")
                      and pod.get("status", {}).get("phase") == "Running")

    async def both_running() -> list[str] | None:
        nodes = await running_on()
        return nodes if len(nodes) == 2 else None
    assert set(await eventually(both_running, timeout=10, what="two running web pods")) == {
        small, large}
    await wait_finished(simulation, timeout=30)
    assert await running_on() == [large]
    assert simulation.snapshot().state.value == "Succeeded"
    await simulation.cancel()
