from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from simkube.cloudprov.config import CloudConfig
from simkube.cloudprov.current_run import CurrentRun
from simkube.cloudprov.index import ClusterIndex, Kind, NodeEntry
from simkube.cloudprov.reconciling import Reconciler, cidr_for_slot
from tests.unit.cloudprov.fakes import (
    GROUPS,
    HELD_AT_HALF,
    MARKED,
    NAMESPACE,
    FakeCluster,
    make_config,
)

pytestmark = pytest.mark.unit
CONFIG = make_config()


@contextlib.asynccontextmanager
async def reconciling(current: CurrentRun | None = None, *,
                      config: CloudConfig = CONFIG) -> AsyncIterator[FakeCluster]:
    cluster = FakeCluster(ClusterIndex(groups=config.groups))
    for group in config.groups:
        cluster.deployment(config, group, 0)
    reconciler = Reconciler(api=cluster, index=cluster.index, config=config,
                            current=current, retry=0.05)
    task = asyncio.create_task(reconciler.run())
    try:
        yield cluster
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@pytest.fixture
async def cluster() -> AsyncIterator[FakeCluster]:
    async with reconciling() as cluster:
        yield cluster


async def settle(cluster: FakeCluster, predicate: object, what: str) -> None:
    assert await cluster.index.wait_until(predicate, timeout=5), what  # type: ignore[arg-type]


async def test_each_live_pod_gets_its_node(cluster: FakeCluster) -> None:
    cluster.pod("small", "small-abc-1")
    cluster.pod("small", "small-abc-2")
    nodes = cluster.index.groups["small"].nodes
    await settle(cluster, lambda: len(nodes) == 2, "two nodes")
    node = cluster.objects["/api/v1/nodes/small-abc-1"]
    assert node["spec"]["providerID"] == "simkube://small-abc-1"
    assert node["metadata"]["labels"]["simkube.dev/node-group"] == "small"
    assert node["metadata"]["labels"]["simkube.dev/node-group-namespace"] == NAMESPACE
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "small-abc-1"
    assert node["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "s2"
    assert node["metadata"]["annotations"] == {"kwok.x-k8s.io/node": "fake",
                                               "simkube.dev/placeholder-pod":
                                                   f"{NAMESPACE}/small-abc-1"}
    assert {"key": "kwok.x-k8s.io/node", "value": "fake", "effect": "NoSchedule"} in \
        node["spec"]["taints"]
    assert node["status"]["capacity"]["cpu"] == "2"
    cidrs = {cluster.objects[f"/api/v1/nodes/{n}"]["spec"]["podCIDR"] for n in nodes}
    assert cidrs == {cidr_for_slot(0), cidr_for_slot(1)}


async def test_nodes_whose_pod_is_gone_are_deleted(cluster: FakeCluster) -> None:
    cluster.node(CONFIG, "gpu", "gpu-abc-1")
    await settle(cluster, lambda: not cluster.index.groups["gpu"].nodes, "the orphan deleted")


async def test_pods_chosen_for_removal_get_no_node_and_keep_theirs(cluster: FakeCluster) -> None:
    cluster.pod("small", "kept", **MARKED)
    cluster.pod("small", "going", **MARKED)
    cluster.node(CONFIG, "small", "kept")
    cluster.pod("small", "other")
    await settle(cluster, lambda: "other" in cluster.index.groups["small"].nodes, "other's node")
    await asyncio.sleep(0.1)
    assert set(cluster.index.groups["small"].nodes) == {"kept", "other"}


async def test_a_missing_deployment_is_created_at_min_size(cluster: FakeCluster) -> None:
    cluster.remove(f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/small")
    state = cluster.index.groups["small"]
    await settle(cluster, lambda: state.replicas == 1, "the Deployment back at minSize 1")


async def test_failures_are_retried(cluster: FakeCluster) -> None:
    cluster.fail("POST", "/api/v1/nodes", code=503)
    cluster.pod("small", "p")
    await settle(cluster, lambda: "p" in cluster.index.groups["small"].nodes, "the retried node")
    posts = [c for c in cluster.calls if c[:2] == ("POST", "/api/v1/nodes")]
    assert len(posts) == 2


async def test_a_foreign_node_with_the_same_name_is_left_alone(cluster: FakeCluster) -> None:
    cluster.echo = False
    cluster.put("/api/v1/nodes/clash", {"metadata": {"name": "clash", "labels": {}}})
    cluster.echo = True
    cluster.pod("small", "clash")
    for _ in range(500):  # the GET changes nothing the index could wake on: poll
        if ("GET", "/api/v1/nodes/clash", None) in cluster.calls:
            break
        await asyncio.sleep(0.01)
    assert ("GET", "/api/v1/nodes/clash", None) in cluster.calls
    assert cluster.objects["/api/v1/nodes/clash"]["metadata"]["labels"] == {}
    assert cluster.paths(Kind.NODE) == ["/api/v1/nodes/clash"]


@pytest.fixture(params=[CONFIG], ids=["own-options"])
async def on_a_run(request: pytest.FixtureRequest
                   ) -> AsyncIterator[tuple[FakeCluster, CurrentRun, dict[str, NodeEntry]]]:
    """A run at speed 2, and instance ``going`` of group ``small`` with its Node."""
    current = CurrentRun(timing=HELD_AT_HALF)
    async with reconciling(current, config=request.param) as cluster:
        nodes = cluster.index.groups["small"].nodes
        cluster.pod("small", "going")
        await settle(cluster, lambda: "going" in nodes, "its node")
        yield cluster, current, nodes


async def test_a_node_stays_for_the_slip_of_the_holds_since_ca_found_it_unneeded(
        on_a_run: tuple[FakeCluster, CurrentRun, dict[str, NodeEntry]]) -> None:
    cluster, current, nodes = on_a_run
    unneeded = time.time()
    cluster.soft_taint("going", value=str(int(unneeded)))
    assert nodes["going"].candidate_since == pytest.approx(unneeded, abs=0.05)
    # CA's unneeded time ran through 0.4 s of holds at the run's pace; trace time, at half.
    current.update(timing=current.timing, holds=((unneeded + 0.05, unneeded + 0.45),))
    await asyncio.sleep(0.5)
    removed = time.time()
    cluster.remove(f"/api/v1/namespaces/{NAMESPACE}/pods/going")
    assert not await cluster.index.wait_until(lambda: "going" not in nodes, timeout=0.15)
    assert await cluster.index.wait_until(lambda: "going" not in nodes, timeout=1)
    assert time.time() - removed >= 0.18


# CA's timers of 0.6 s + 0.2 s of trace time: 0.4 s of wall at speed 2, for a group without
# its own scale-down-unneeded-time.
WITH_TIMERS = replace(HELD_AT_HALF, scale_down_unneeded_s=0.6, delete_delay_after_taint_s=0.2)
RUN_TIMERS = make_config(GROUPS.replace("scaleDownUnneededDuration: 2m, ", ""))


async def ca_asks_after(on_a_run: tuple[FakeCluster, CurrentRun, dict[str, NodeEntry]], *,
                        seconds: float) -> float:
    """CA marks ``going`` unneeded, the run publishes WITH_TIMERS and 0.4 s of holds at half
    pace (a 0.2 s slip), and CA asks to delete it ``seconds`` later (its pod goes); returns
    when CA marked it."""
    cluster, current, _ = on_a_run
    unneeded = time.time()
    cluster.soft_taint("going", value=str(int(unneeded)))
    current.update(timing=WITH_TIMERS, holds=((unneeded + 0.05, unneeded + 0.45),))
    await asyncio.sleep(seconds)
    cluster.remove(f"/api/v1/namespaces/{NAMESPACE}/pods/going")
    return unneeded


@pytest.mark.parametrize("on_a_run", [RUN_TIMERS], ids=["run-timers"], indirect=True)
async def test_a_node_goes_at_the_instant_cas_timers_meant_on_the_runs_clock(
        on_a_run: tuple[FakeCluster, CurrentRun, dict[str, NodeEntry]]) -> None:
    cluster, _, nodes = on_a_run
    # CA asks on time; the slip moves the timers' end to 0.6 s after the mark
    unneeded = await ca_asks_after(on_a_run, seconds=0.45)
    assert not await cluster.index.wait_until(lambda: "going" not in nodes, timeout=0.08)
    assert await cluster.index.wait_until(lambda: "going" not in nodes, timeout=1)
    assert time.time() - unneeded == pytest.approx(0.6, abs=0.1)


@pytest.mark.parametrize("on_a_run", [RUN_TIMERS], ids=["run-timers"], indirect=True)
async def test_ca_asking_later_than_its_timers_is_not_slipped_again(
        on_a_run: tuple[FakeCluster, CurrentRun, dict[str, NodeEntry]]) -> None:
    cluster, _, nodes = on_a_run
    # CA's next loop came 0.9 s after: past the 0.6 s its timers meant, so no wait is left
    # (counting the slip from its request would keep the node 0.2 s more)
    await ca_asks_after(on_a_run, seconds=0.9)
    assert await cluster.index.wait_until(lambda: "going" not in nodes, timeout=0.15)


async def test_a_groups_own_unneeded_time_is_the_one_ca_counted(
        on_a_run: tuple[FakeCluster, CurrentRun, dict[str, NodeEntry]]) -> None:
    cluster, _, nodes = on_a_run
    # The group's 2 m is longer than what CA took: its 0.9 s is slipped by the 0.2 s
    await ca_asks_after(on_a_run, seconds=0.9)
    assert not await cluster.index.wait_until(lambda: "going" not in nodes, timeout=0.1)
    assert await cluster.index.wait_until(lambda: "going" not in nodes, timeout=1)


async def test_a_hold_while_the_node_stays_slows_its_removal(
        on_a_run: tuple[FakeCluster, CurrentRun, dict[str, NodeEntry]]) -> None:
    cluster, current, nodes = on_a_run
    unneeded = time.time()
    cluster.soft_taint("going", value=str(int(unneeded)))
    current.update(timing=current.timing, holds=((unneeded, unneeded + 0.4),))
    await asyncio.sleep(0.45)
    cluster.remove(f"/api/v1/namespaces/{NAMESPACE}/pods/going")
    removed = time.time()  # it stays 0.2 s (half the 0.4 s held) ...
    current.update(timing=current.timing, holds=current.holds,
                   holding=(removed + 0.05, removed + 60))
    await asyncio.sleep(0.25)  # ... and the hold from +0.05 s halves the pace: +0.35 s
    assert "going" in nodes
    assert await cluster.index.wait_until(lambda: "going" not in nodes, timeout=0.5)
    assert current.holding


@pytest.mark.parametrize("taint", [None, "not-a-time"])
async def test_a_node_ca_never_marked_goes_at_once_whatever_was_held(
        taint: str | None, on_a_run: tuple[FakeCluster, CurrentRun, dict[str, NodeEntry]]) -> None:
    cluster, current, nodes = on_a_run
    if taint is not None:
        cluster.soft_taint("going", value=taint)
    now = time.time()
    current.update(timing=current.timing, holds=((now - 0.5, now),))
    assert nodes["going"].candidate_since is None
    cluster.remove(f"/api/v1/namespaces/{NAMESPACE}/pods/going")
    assert await cluster.index.wait_until(lambda: "going" not in nodes, timeout=0.15)


async def test_without_holds_a_marked_node_goes_at_once(cluster: FakeCluster) -> None:
    nodes = cluster.index.groups["small"].nodes
    cluster.pod("small", "going")
    await settle(cluster, lambda: "going" in nodes, "its node")
    cluster.soft_taint("going", value=str(int(time.time() - 30)))
    cluster.remove(f"/api/v1/namespaces/{NAMESPACE}/pods/going")
    assert await cluster.index.wait_until(lambda: "going" not in nodes, timeout=0.15)
