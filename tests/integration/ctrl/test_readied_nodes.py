"""A node turning schedulable, against the real API server, controller manager, scheduler and
KWOK: the watch sees each of its three steps (sk-cloudprov's annotation, KWOK's Ready, the
node lifecycle controller lifting the not-ready taint), and the pod waiting for it is
awaited from the last step until the scheduler has bound it."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from simkube.cloudprov.naming import NOT_READY_TAINT_KEY, READY_AFTER_ANNOTATION, READY_NOW
from simkube.core.kubeapi import NODES, PODS, KubeClient, merge_patch
from simkube.ctrl.readied_nodes import ReadiedNodesWatch
from simkube.ctrl.unschedulable import UnschedulableWatch
from tests.integration.ctrl.conftest import unique
from tests.support.kube import eventually

pytestmark = pytest.mark.integration
OWN_TAINT = "simkube.dev/readied-nodes-test"


def held_node(name: str) -> dict[str, Any]:
    """A KWOK node registering as sk-cloudprov's do (Ready=False and the not-ready taint, as
    a kubelet registers; without the condition the node lifecycle controller lifts the taint
    at once), whose readiness sk-cloudprov holds."""
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name},
                         "annotations": {"kwok.x-k8s.io/node": "fake",
                                         READY_AFTER_ANNOTATION: "876000h"}},
            "spec": {"taints": [{"key": OWN_TAINT, "effect": "NoSchedule"},
                                {"key": NOT_READY_TAINT_KEY, "effect": "NoSchedule"}]},
            "status": {"capacity": {"cpu": "2", "memory": "4Gi", "pods": "10"},
                       "allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"},
                       "conditions": [{"type": "Ready", "status": "False",
                                       "reason": "KubeletNotReady", "message": "starting"}]}}


def pod_for(node: str) -> dict[str, Any]:
    return {"metadata": {"name": "waits"},
            "spec": {"nodeSelector": {"kubernetes.io/hostname": node},
                     "tolerations": [{"key": OWN_TAINT, "operator": "Exists"}],
                     "containers": [{"name": "c", "image": "busybox",
                                     "resources": {"requests": {"cpu": "1"}}}]}}


@contextlib.asynccontextmanager
async def a_run_and_a_held_node(api: KubeClient) -> AsyncIterator[tuple[str, str, str]]:
    prefix, node = unique("readied"), unique("readied-node")
    namespace = f"{prefix}-shop"
    await api.request("POST", "/api/v1/namespaces", body={"metadata": {"name": namespace}})
    await api.request("POST", NODES.path(), body=held_node(node))
    try:
        yield prefix, namespace, node
    finally:
        await api.request("DELETE", f"/api/v1/namespaces/{namespace}")
        await api.request("DELETE", NODES.path(name=node))


async def test_the_pod_a_readied_node_takes_is_awaited_until_it_is_bound(
        api: KubeClient) -> None:
    steps: list[float] = []
    async with a_run_and_a_held_node(api) as (prefix, namespace, node):
        # The bound never runs out here: only a binding or a new verdict ends the wait.
        pods = UnschedulableWatch(kube=api, prefix=prefix, on_new=lambda _pod: None,
                                  monotonic=lambda: 0.0)

        def step() -> None:
            pods.rejudge()
            steps.append(time.monotonic())
        nodes = ReadiedNodesWatch(kube=api, on_step=step)
        tasks = [asyncio.create_task(pods.run()), asyncio.create_task(nodes.run())]
        try:
            await asyncio.wait_for(nodes.watch.synced.wait(), timeout=10)

            await api.request("POST", PODS.path(namespace=namespace), body=pod_for(node))

            async def judged() -> bool:
                return bool(pods._seen)
            await eventually(judged, timeout=30, what="the pod ruled unschedulable")
            assert steps == []
            await merge_patch(api, NODES.path(name=node),
                              {"metadata": {"annotations": {READY_AFTER_ANNOTATION: READY_NOW}}})

            async def three_steps() -> bool:
                return len(steps) == 3
            await eventually(three_steps, timeout=30, what="annotation, Ready, taint lifted",
                             interval=0.005)

            async def waited() -> bool:
                return not pods.awaiting()
            await eventually(waited, timeout=30, what="the wait's end", interval=0.002)
            found = await api.request("GET", PODS.path(namespace=namespace, name="waits"))
            assert found["spec"].get("nodeName") == node  # bound by the time the wait ended
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
