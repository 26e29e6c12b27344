"""The round trip a user does: env up, sk-tracer, a Deployment's life, skctl export, info."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from simkube.trace import read_trace
from tests.conftest import skctl
from tests.integration.tracer.conftest import TracerProcess
from tests.integration.tracer.test_recording import DEPLOYMENT, recorded
from tests.support.kube import deployment, eventually, pods_of

pytestmark = pytest.mark.e2e


async def test_deployment_round_trip_exports_one_create_one_change_one_delete(
        kube: client.ApiClient, namespace: str,
        tracer: Callable[[dict[str, Any]], TracerProcess], tmp_path: Path) -> None:
    process = tracer({"trackedObjects": {
        DEPLOYMENT: {"podSpecTemplatePaths": ["/spec/template"], "trackLifecycle": True},
        "v1.Pod": {}}, "namespaces": [namespace]})
    await process.start(watching=2)
    apps = client.AppsV1Api(kube)
    await apps.create_namespaced_deployment(namespace, deployment("web", replicas=3))

    async def running(count: int) -> bool:
        pods = await pods_of(kube, namespace, "web")
        return sum(pod.status.phase == "Running" for pod in pods) == count
    await eventually(lambda: running(3), timeout=90, what="3 Running pods")
    await apps.patch_namespaced_deployment_scale("web", namespace, {"spec": {"replicas": 5}})
    await eventually(lambda: running(5), timeout=90, what="5 Running pods")
    await apps.delete_namespaced_deployment("web", namespace)
    await recorded(process, DEPLOYMENT, 3)
    await eventually(lambda: _no_pods(kube, namespace), timeout=90, what="pods collected")

    output = tmp_path / "t.trace"
    skctl("export", "--tracer", process.address, "-o", str(output))
    info = json.loads(skctl("trace", "info", "--json", str(output)).stdout)
    assert info["applied_by_kind"] == {DEPLOYMENT: 2}  # created, then scaled
    assert info["deleted_by_kind"] == {DEPLOYMENT: 1}
    assert info["namespaces"] == [namespace]
    trace = read_trace(output)
    assert [e.applied[0]["spec"]["replicas"] for e in trace.events if e.applied] == [3, 5]
    status = json.loads(skctl("tracer", "status", "--tracer", process.address, "--json").stdout)
    assert {k["kind"]: k["state"] for k in status["kinds"]} == {DEPLOYMENT: "WATCHING",
                                                               "v1.Pod": "WATCHING"}
    # Five pods ran for the exported Deployment; their runs come with it.
    [lifecycle] = trace.lifecycles
    assert (lifecycle.owner_kind, lifecycle.owner) == (DEPLOYMENT, f"{namespace}/web")
    assert len(lifecycle.runs) == 5
    assert all(run.end_ms is not None for run in lifecycle.runs)


async def _no_pods(kube: client.ApiClient, namespace: str) -> bool:
    return not await pods_of(kube, namespace, "web")
