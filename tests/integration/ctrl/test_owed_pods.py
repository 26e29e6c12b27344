"""Workloads owing pods, against the real API server and controller manager: the watch says
"owing" from the replay's change until the controllers have created every pod, and no
longer."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import pytest

from simkube.core.kubeapi import DEPLOYMENTS, JOBS, PODS, KubeClient, merge_patch
from simkube.ctrl.owed_pods import OwedPodsWatch
from tests.integration.ctrl.conftest import unique

pytestmark = pytest.mark.integration
POD_SPEC = {"containers": [{"name": "c", "image": "busybox",
                            "resources": {"requests": {"cpu": "1m"}}}],
            "tolerations": [{"operator": "Exists"}]}


@contextlib.asynccontextmanager
async def watching(api: KubeClient, prefix: str,
                   ) -> AsyncIterator[tuple[OwedPodsWatch, list[float]]]:
    owed: list[float] = []
    watch = OwedPodsWatch(kube=api, prefix=prefix, on_owed=lambda: owed.append(time.monotonic()))
    task = asyncio.create_task(watch.run())
    try:
        for each in watch.watches:
            await asyncio.wait_for(each.synced.wait(), timeout=10)
        yield watch, owed
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@contextlib.asynccontextmanager
async def run_namespace(api: KubeClient) -> AsyncIterator[tuple[str, str]]:
    prefix = unique("owed")
    namespace = f"{prefix}-shop"
    await api.request("POST", "/api/v1/namespaces", body={"metadata": {"name": namespace}})
    try:
        yield prefix, namespace
    finally:
        await api.request("DELETE", f"/api/v1/namespaces/{namespace}")


async def settled(watch: OwedPodsWatch, *, timeout: float = 10) -> None:
    """Until the watch says owing, then no longer."""
    deadline = time.monotonic() + timeout
    while not watch.owing():
        assert time.monotonic() < deadline, "never owing"
        await asyncio.sleep(0.002)
    while watch.owing():
        assert time.monotonic() < deadline, "still owing"
        await asyncio.sleep(0.002)


async def pods_in(api: KubeClient, namespace: str) -> int:
    listed = await api.request("GET", PODS.path(namespace=namespace))
    return sum(1 for pod in listed["items"] if not pod["metadata"].get("deletionTimestamp"))


async def test_a_scaled_deployment_owes_pods_until_the_replica_set_made_them_all(
        api: KubeClient) -> None:
    async with run_namespace(api) as (prefix, namespace), watching(api, prefix) as (watch, owed):
        labels = {"app": "web"}
        await api.request("POST", DEPLOYMENTS.path(namespace=namespace), body={
            "metadata": {"name": "web"},
            "spec": {"replicas": 0, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": POD_SPEC}}})
        await settled(watch)  # the new Deployment, then its ReplicaSet at 0
        count = len(owed)
        await merge_patch(api, DEPLOYMENTS.path(namespace=namespace, name="web"),
                          {"spec": {"replicas": 15}})
        await settled(watch)
        assert len(owed) > count
        assert await pods_in(api, namespace) == 15  # every pod made when it stopped owing


async def test_a_job_owes_its_parallel_pods_until_they_are_active(api: KubeClient) -> None:
    async with run_namespace(api) as (prefix, namespace), watching(api, prefix) as (watch, _):
        await api.request("POST", JOBS.path(namespace=namespace), body={
            "metadata": {"name": "batch"},
            "spec": {"parallelism": 4, "completions": 8, "template": {
                "spec": {**POD_SPEC, "restartPolicy": "Never"}}}})
        await settled(watch)
        assert await pods_in(api, namespace) == 4


async def test_workloads_outside_the_runs_namespaces_owe_nothing(api: KubeClient) -> None:
    elsewhere = unique("other")
    async with run_namespace(api) as (_, namespace), watching(api, elsewhere) as (watch, owed):
        await api.request("POST", JOBS.path(namespace=namespace), body={
            "metadata": {"name": "batch"},
            "spec": {"template": {"spec": {**POD_SPEC, "restartPolicy": "Never"}}}})
        await asyncio.sleep(1)
        assert owed == []
        assert not watch.owing()
