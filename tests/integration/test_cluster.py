"""The simulated cluster behaves like a real one: the real scheduler binds pods to fake
nodes, KWOK runs them, and the real garbage collector cleans up after a Deployment."""

from __future__ import annotations

import pytest
from kubernetes_asyncio import client

from tests.support.kube import deployment, eventually, pods_of

pytestmark = pytest.mark.integration


async def test_deployment_pods_run_on_fake_nodes_bound_by_real_scheduler(
        kube: client.ApiClient, namespace: str) -> None:
    apps = client.AppsV1Api(kube)
    await apps.create_namespaced_deployment(namespace, deployment("web", replicas=3))

    async def all_running() -> list[client.V1Pod] | None:
        pods = await pods_of(kube, namespace, "web")
        running = [p for p in pods if p.status.phase == "Running"]
        return running if len(running) == 3 else None

    pods = await eventually(all_running, timeout=60, what="3 Running pods")
    nodes = {n.metadata.name: n for n in (await client.CoreV1Api(kube).list_node()).items}
    for pod in pods:
        node = nodes[pod.spec.node_name]
        assert node.metadata.annotations["kwok.x-k8s.io/node"] == "fake"
        scheduled = next(c for c in pod.status.conditions if c.type == "PodScheduled")
        assert scheduled.status == "True"
    events = await client.CoreV1Api(kube).list_namespaced_event(
        namespace, field_selector="reason=Scheduled")
    sources = {e.reporting_component or e.source.component for e in events.items}
    assert sources == {"default-scheduler"}
    assert len(events.items) >= 3


async def test_deleting_deployment_garbage_collects_replicaset_and_pods(
        kube: client.ApiClient, namespace: str) -> None:
    apps = client.AppsV1Api(kube)
    await apps.create_namespaced_deployment(namespace, deployment("gc", replicas=3))

    async def replicaset_and_pods() -> bool:
        sets = await apps.list_namespaced_replica_set(namespace)
        return bool(sets.items) and len(await pods_of(kube, namespace, "gc")) == 3

    await eventually(replicaset_and_pods, timeout=60, what="a ReplicaSet with 3 pods")
    await apps.delete_namespaced_deployment("gc", namespace,
                                            propagation_policy="Background")

    async def all_gone() -> bool:
        sets = await apps.list_namespaced_replica_set(namespace)
        return not sets.items and not await pods_of(kube, namespace, "gc")

    await eventually(all_gone, timeout=60, what="the ReplicaSet and pods to be collected")


def _ready(pod: client.V1Pod) -> str:
    return next((c.status for c in pod.status.conditions or [] if c.type == "Ready"), "")


async def test_a_running_pod_marked_not_ready_is_ready_again(
        kube: client.ApiClient, namespace: str) -> None:
    """What the node lifecycle controller writes to every pod of a Node whose heartbeats
    lapsed (``MarkPodsNotReady``); a kubelet reports the pod ready again, and so must KWOK."""
    core = client.CoreV1Api(kube)
    await client.AppsV1Api(kube).create_namespaced_deployment(
        namespace, deployment("lapse", replicas=1))

    async def running_and_ready() -> client.V1Pod | None:
        pods = await pods_of(kube, namespace, "lapse")
        ready = [p for p in pods if p.status.phase == "Running" and _ready(p) == "True"]
        return ready[0] if ready else None

    pod = await eventually(running_and_ready, timeout=60, what="a Running, Ready pod")
    await core.patch_namespaced_pod_status(pod.metadata.name, namespace, {"status": {
        "conditions": [{"type": "Ready", "status": "False", "reason": "NodeNotReady"}]}})
    marked = await core.read_namespaced_pod(pod.metadata.name, namespace)
    assert marked.metadata.resource_version != pod.metadata.resource_version

    async def ready_again() -> bool:
        now = await core.read_namespaced_pod(pod.metadata.name, namespace)
        return now.status.phase == "Running" and _ready(now) == "True"

    await eventually(ready_again, timeout=30, what="KWOK to report the pod Ready again")
