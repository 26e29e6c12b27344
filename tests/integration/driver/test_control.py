"""Controlling a replay against the local environment: pause, cancel, duration, bad objects,
cluster-scoped kinds and Nodes, and starts that must be refused without leaving anything."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from simkube.core.kubeapi import ApiError, KubeClient
from simkube.driver.errors import SimulationConflictError
from simkube.driver.names import FAKE_NODE_KEY, ROOTS_PATH
from simkube.driver.progress import SimulationState
from tests.integration.driver.conftest import (
    DATA,
    Recorder,
    assert_nothing_left,
    start,
    unique,
    wait_finished,
)
from tests.support.kube import eventually
from tests.support.traces import build_trace, config_map, write_native

pytestmark = pytest.mark.integration


async def test_pause_shifts_the_remaining_schedule(driver_kube: KubeClient,
                                                   tmp_path: Path) -> None:
    offsets = [0, 1500, 3000, 4500]
    trace = write_native(tmp_path / "steps.trace", build_trace(
        [(offset, [config_map(f"step-{index}")]) for index, offset in enumerate(offsets)]))
    name = unique("pause")
    async with Recorder(kube=driver_kube, path="/api/v1/configmaps", simulation=name) as seen:
        simulation = await start(driver_kube, trace, name=name)
        await asyncio.sleep(0.5)
        simulation.pause()
        await asyncio.sleep(2.0)
        assert len(seen.seen) == 1, "nothing is applied while paused"
        simulation.resume()
        await wait_finished(simulation, timeout=30)
    snapshot = simulation.snapshot()
    assert snapshot.state is SimulationState.SUCCEEDED
    assert 1900 <= snapshot.paused_ms <= 2600
    for index, offset in enumerate(offsets):
        at = seen.timeline(f"step-{index}", lambda obj: True)[0][0]
        # step-0 was due before the pause; every later step is due the pause later.
        due = simulation.clock.t0 if index == 0 else simulation.clock.due(offset)
        assert -0.05 <= at - due <= 1.0, (index, at - due)
    await simulation.cancel()
    await assert_nothing_left(driver_kube, simulation)


async def test_cancel_mid_replay_leaves_nothing(driver_kube: KubeClient) -> None:
    simulation = await start(driver_kube, DATA / "dsb-scaling.sktrace", speed=1.0)

    async def pods_running() -> bool:
        pods = await driver_kube.request(
            "GET", "/api/v1/pods", query={"labelSelector": f"simkube.dev/simulation="
                                                           f"{simulation.name}"})
        return any(p.get("status", {}).get("phase") == "Running" for p in pods["items"])
    await eventually(pods_running, timeout=60, what="the replay's pods to run")
    final = await simulation.cancel(wait=True)
    assert final.state is SimulationState.CANCELLED
    assert final.cleaned_up
    assert final.events_applied < final.events_total
    await assert_nothing_left(driver_kube, simulation)


async def test_duration_cuts_the_trace_short(driver_kube: KubeClient) -> None:
    simulation = await start(driver_kube, DATA / "dsb-scaling.sktrace", speed=100.0,
                             duration="500s")
    await wait_finished(simulation, timeout=60)
    snapshot = simulation.snapshot()
    assert snapshot.state is SimulationState.SUCCEEDED
    assert (snapshot.events_applied, snapshot.events_total) == (3, 3)
    assert snapshot.wall_time_ms >= 5000 - 50  # 500 s of trace time at speed 100
    deployments = await driver_kube.request(
        "GET", f"/apis/apps/v1/namespaces/{simulation.options.prefix}-dsb/deployments")
    replicas = {d["metadata"]["name"]: d["spec"]["replicas"] for d in deployments["items"]}
    assert replicas["social-graph-service"] == 3  # scaled at 423 s
    assert replicas["url-shorten-service"] == 1  # its change at 548 s is cut off
    await simulation.cancel()


async def test_duration_past_the_end_waits(driver_kube: KubeClient, tmp_path: Path) -> None:
    trace = write_native(tmp_path / "one.trace", build_trace([(0, [config_map("only")])]))
    simulation = await start(driver_kube, trace, duration="3s")
    await wait_finished(simulation, timeout=30)
    assert simulation.snapshot().wall_time_ms >= 3000 - 50
    await simulation.cancel()


def _invalid_deployment() -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "broken", "namespace": "app"},
            "spec": {"replicas": -1, "selector": {"matchLabels": {"app": "x"}},
                     "template": {"metadata": {"labels": {"app": "x"}},
                                  "spec": {"containers": [{"name": "c", "image": "i"}]}}}}


async def test_rejected_objects_are_reported_and_the_replay_goes_on(
        driver_kube: KubeClient, tmp_path: Path) -> None:
    widget = {"apiVersion": "example.com/v1", "kind": "Widget",
              "metadata": {"name": "w", "namespace": "app"}}
    trace = write_native(tmp_path / "bad.trace", build_trace([
        (0, [_invalid_deployment(), config_map("first"), widget]),
        (500, [config_map("second")], [config_map("never-existed")]),
    ]))
    simulation = await start(driver_kube, trace, retry_deadline_s=2.0)
    await wait_finished(simulation, timeout=30)
    snapshot = simulation.snapshot()
    assert snapshot.state is SimulationState.SUCCEEDED
    assert (snapshot.objects_applied, snapshot.objects_failed) == (3, 2)
    failures = {f.object.split()[0]: f for f in snapshot.failures}
    assert failures["apps/v1.Deployment"].code == 422
    assert failures["apps/v1.Deployment"].reason == "Invalid"
    assert "replicas" in failures["apps/v1.Deployment"].message
    assert failures["example.com/v1.Widget"].reason == "KindNotServed"
    assert failures["example.com/v1.Widget"].attempts > 1
    root = await driver_kube.request("GET", f"{ROOTS_PATH}/{simulation.name}")
    assert root["status"]["objectsFailed"] == 2
    assert {f["reason"] for f in root["status"]["failures"]} == {"Invalid", "KindNotServed"}
    await simulation.cancel()
    await assert_nothing_left(driver_kube, simulation)


async def test_nodes_become_fake_and_cluster_scoped_kinds_keep_their_names(
        driver_kube: KubeClient, tmp_path: Path) -> None:
    node_name, class_name = unique("traced-node"), unique("traced-priority")
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": node_name, "labels": {"type": "kwok"}},
            "spec": {"providerID": f"kwok://{node_name}"},
            "status": {"capacity": {"cpu": "3", "memory": "6Gi", "pods": "20"},
                       "conditions": [{"type": "Ready", "status": "False"}]}}
    priority = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": class_name}, "value": 1000}
    trace = write_native(tmp_path / "cluster.trace", build_trace([(0, [node, priority])]))
    simulation = await start(driver_kube, trace)
    await wait_finished(simulation, timeout=30)
    assert simulation.snapshot().objects_failed == 0

    async def ready() -> dict[str, Any] | None:
        got = await driver_kube.request("GET", f"/api/v1/nodes/{node_name}")
        conditions = got.get("status", {}).get("conditions") or []
        return got if any(c["type"] == "Ready" and c["status"] == "True"
                          for c in conditions) else None
    got = await eventually(ready, timeout=30, what=f"node {node_name} Ready")
    assert got["metadata"]["annotations"][FAKE_NODE_KEY] == "fake"
    assert {"key": FAKE_NODE_KEY, "value": "fake", "effect": "NoSchedule"} in got["spec"]["taints"]
    assert got["status"]["capacity"]["cpu"] == "3"
    pc = await driver_kube.request("GET", f"/apis/scheduling.k8s.io/v1/priorityclasses/"
                                          f"{class_name}")
    assert pc["value"] == 1000
    assert pc["metadata"]["ownerReferences"][0]["name"] == simulation.name
    await simulation.cancel()
    await assert_nothing_left(driver_kube, simulation)
    for path in (f"/api/v1/nodes/{node_name}",
                 f"/apis/scheduling.k8s.io/v1/priorityclasses/{class_name}"):
        with pytest.raises(ApiError) as gone:
            await driver_kube.request("GET", path)
        assert gone.value.code == 404


async def test_refused_starts_create_nothing(driver_kube: KubeClient) -> None:
    prefix = unique("v")
    await driver_kube.request("POST", "/api/v1/namespaces", body={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"{prefix}-dsb"}})
    try:
        name = unique("taken")
        with pytest.raises(SimulationConflictError, match=f"{prefix}-dsb already exists"):
            await start(driver_kube, DATA / "dsb-scaling.sktrace", name=name, prefix=prefix)
        with pytest.raises(ApiError) as missing:
            await driver_kube.request("GET", f"{ROOTS_PATH}/{name}")
        assert missing.value.code == 404
    finally:
        await driver_kube.request("DELETE", f"/api/v1/namespaces/{prefix}-dsb")

    first = await start(driver_kube, DATA / "dsb-scaling.sktrace", speed=1000.0)
    with pytest.raises(SimulationConflictError, match="already exists"):
        await start(driver_kube, DATA / "dsb-scaling.sktrace", name=first.name)
    await first.cancel()
    await assert_nothing_left(driver_kube, first)


async def test_validation_sample_is_rejected_with_the_api_servers_reasons(
        driver_kube: KubeClient) -> None:
    simulation = await start(driver_kube, DATA / "validation_trace.json")
    await wait_finished(simulation, timeout=60)
    snapshot = simulation.snapshot()
    assert snapshot.state is SimulationState.SUCCEEDED  # a rejected object is not fatal
    assert (snapshot.objects_applied, snapshot.objects_failed) == (0, 1)
    (failure,) = snapshot.failures
    namespace = f"{simulation.options.prefix}-default"
    assert failure.object == f"apps/v1.Deployment {namespace}/test-deployment"
    assert (failure.code, failure.reason) == (422, "Invalid")
    assert "spec.selector: Required value" in failure.message
    await simulation.cancel()
    await assert_nothing_left(driver_kube, simulation)


async def test_startup_delay_is_a_kwok_stage_parameter(driver_kube: KubeClient,
                                                       tmp_path: Path) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "late", "namespace": "app"},
           "spec": {"containers": [{"name": "c", "image": "registry.example/c:1"}]}}
    trace = write_native(tmp_path / "pod.trace", build_trace([(0, [pod])]))
    name = unique("delay")
    async with Recorder(kube=driver_kube, path="/api/v1/pods", simulation=name) as seen:
        simulation = await start(driver_kube, trace, name=name, startup_delay="2s")

        async def running() -> list[tuple[float, Any]] | None:
            phases = seen.timeline("late", lambda obj: obj.get("status", {}).get("phase"))
            return phases if phases and phases[-1][1] == "Running" else None
        phases = await eventually(running, timeout=30, what="the delayed pod to run")
    created = seen.seen[0].at
    assert 2.0 - 0.1 <= phases[-1][0] - created <= 2.0 + 1.0
    await simulation.cancel()
    await assert_nothing_left(driver_kube, simulation)
