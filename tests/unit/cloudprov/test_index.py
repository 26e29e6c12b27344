from __future__ import annotations

import asyncio
import time

import pytest

from simkube.cloudprov.index import ClusterIndex, Kind, Phase
from tests.unit.cloudprov.fakes import MARKED, FakeCluster, make_config

pytestmark = pytest.mark.unit


@pytest.fixture
def cluster() -> FakeCluster:
    return FakeCluster(ClusterIndex(groups=["small", "gpu"]))


def phases(cluster: FakeCluster, group: str = "small") -> dict[str, Phase]:
    return dict(cluster.index.groups[group].phases)


def test_instance_phases_follow_pods_and_nodes(cluster: FakeCluster) -> None:
    config = make_config()
    cluster.pod("small", "creating")
    cluster.pod("small", "booting")
    cluster.node(config, "small", "booting", ready=False)
    cluster.pod("small", "running")
    cluster.node(config, "small", "running")
    cluster.pod("small", "chosen", **MARKED)
    cluster.pod("small", "cheap", **{"controller.kubernetes.io/pod-deletion-cost": "-5"})
    cluster.node(config, "small", "orphan")
    assert phases(cluster) == {"creating": Phase.CREATING, "booting": Phase.CREATING,
                               "running": Phase.RUNNING, "chosen": Phase.DELETING,
                               "cheap": Phase.CREATING, "orphan": Phase.DELETING}
    assert cluster.index.groups["small"].registered() == 2  # booting and running


def test_terminating_pods_and_nodes_are_deleting(cluster: FakeCluster) -> None:
    config = make_config()
    cluster.pod("small", "a")
    cluster.node(config, "small", "a")
    cluster.pod("small", "b")
    cluster.node(config, "small", "b")
    pods = "/api/v1/namespaces/sk-test/pods"
    cluster.objects[f"{pods}/a"]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    cluster.put(f"{pods}/a", cluster.objects[f"{pods}/a"], event="MODIFIED")
    cluster.objects["/api/v1/nodes/b"]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    cluster.put("/api/v1/nodes/b", cluster.objects["/api/v1/nodes/b"], event="MODIFIED")
    assert phases(cluster) == {"a": Phase.DELETING, "b": Phase.DELETING}
    assert cluster.index.groups["small"].registered() == 0


def test_group_of_knows_pods_and_nodes_until_both_are_gone(cluster: FakeCluster) -> None:
    config = make_config()
    cluster.pod("gpu", "g1")
    cluster.node(config, "gpu", "g1")
    assert cluster.index.group_of("g1") == "gpu"
    cluster.remove("/api/v1/namespaces/sk-test/pods/g1")
    assert cluster.index.group_of("g1") == "gpu"
    cluster.remove("/api/v1/nodes/g1")
    assert cluster.index.group_of("g1") is None
    assert cluster.index.group_of("kwok-node-0") is None


def test_objects_of_unknown_groups_are_ignored(cluster: FakeCluster) -> None:
    cluster.pod("elsewhere", "x")
    assert cluster.index.group_of("x") is None
    cluster.deployment(make_config(), "small", 2)
    cluster.index.observed(Kind.DEPLOYMENT, "ADDED", {"metadata": {
        "name": "not-a-group", "labels": {"simkube.dev/node-group": "small"},
        "resourceVersion": "9"}, "spec": {"replicas": 7}})
    assert cluster.index.groups["small"].replicas == 2


def test_a_list_replaces_what_was_known(cluster: FakeCluster) -> None:
    config = make_config()
    cluster.deployment(config, "small", 3)
    cluster.pod("small", "kept")
    cluster.pod("small", "gone-while-disconnected")
    kept = cluster.objects["/api/v1/namespaces/sk-test/pods/kept"]
    cluster.index.listed(Kind.POD, [kept])
    assert set(cluster.index.groups["small"].pods) == {"kept"}
    assert cluster.index.group_of("gone-while-disconnected") is None
    cluster.index.listed(Kind.DEPLOYMENT, [])
    assert cluster.index.groups["small"].replicas is None


def test_pod_cidrs_in_use_are_tracked(cluster: FakeCluster) -> None:
    config = make_config()
    cluster.node(config, "small", "n1")
    node = cluster.objects["/api/v1/nodes/n1"]
    node["spec"]["podCIDR"] = "10.128.0.0/24"
    cluster.put("/api/v1/nodes/n1", node, event="MODIFIED")
    assert cluster.index.cidrs == {"10.128.0.0/24": "n1"}
    cluster.remove("/api/v1/nodes/n1")
    assert cluster.index.cidrs == {}


async def test_wait_until_wakes_on_changes_and_times_out(cluster: FakeCluster) -> None:
    config = make_config()
    state = cluster.index.groups["small"]

    async def later() -> None:
        await asyncio.sleep(0.05)
        cluster.deployment(config, "small", 4)
    task = asyncio.create_task(later())
    assert await cluster.index.wait_until(lambda: state.replicas == 4, timeout=5)
    await task
    assert not await cluster.index.wait_until(lambda: state.replicas == 5, timeout=0.05)


def test_listeners_hear_every_change(cluster: FakeCluster) -> None:
    heard: list[tuple[str, str]] = []
    cluster.index.listeners.append(lambda group, name: heard.append((group, name)))
    cluster.deployment(make_config(), "small", 1)
    cluster.pod("small", "p")
    assert heard == [("small", ""), ("small", "p")]


def test_phase_counts_and_generation_move_only_with_phases(cluster: FakeCluster) -> None:
    config = make_config()
    state = cluster.index.groups["small"]
    cluster.pod("small", "a")
    cluster.node(config, "small", "a", ready=False)
    assert state.counts[Phase.CREATING] == 1
    generation = state.generation
    cluster.put("/api/v1/nodes/a", cluster.objects["/api/v1/nodes/a"], event="MODIFIED")
    assert state.generation == generation  # a heartbeat changes no phase
    cluster.node(config, "small", "a", ready=True)
    assert state.generation == generation + 1
    assert (state.counts[Phase.CREATING], state.counts[Phase.RUNNING]) == (0, 1)
    cluster.remove("/api/v1/namespaces/sk-test/pods/a")
    cluster.remove("/api/v1/nodes/a")
    assert state.phases == {}
    assert sum(state.counts.values()) == 0


@pytest.mark.parametrize("turns", [0, 1, 2, 3])
async def test_a_cancelled_wait_stays_cancelled_when_a_change_arrives_with_it(
        cluster: FakeCluster, turns: int) -> None:
    # Python 3.11's asyncio.wait_for loses a cancellation that arrives just after the
    # awaited event was set; a stopping sk-cloudprov then waited forever on the task.
    waiter = asyncio.create_task(cluster.index.wait_until(lambda: False, timeout=30))
    for _ in range(3):
        await asyncio.sleep(0)
    cluster.pod("small", f"p{turns}")  # sets the change event
    for _ in range(turns):
        await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):  # not TimeoutError: the wait really ended
        async with asyncio.timeout(2):
            await waiter


def test_when_ca_found_a_node_unneeded_is_kept_from_its_soft_taint(cluster: FakeCluster) -> None:
    config = make_config()
    nodes = cluster.index.groups["small"].nodes
    cluster.node(config, "small", "watched")
    assert nodes["watched"].candidate_since is None
    now = time.time()
    cluster.soft_taint("watched", value=str(int(now)))  # seen as it is put on: now
    assert nodes["watched"].candidate_since == pytest.approx(now, abs=0.05)
    first = nodes["watched"].candidate_since
    cluster.put("/api/v1/nodes/watched", cluster.objects["/api/v1/nodes/watched"],
                event="MODIFIED")  # a heartbeat later: still the first sighting
    assert nodes["watched"].candidate_since == first
    cluster.node(config, "small", "listed")
    cluster.soft_taint("listed", value=str(int(now) - 60))  # seen long after (a relist)
    assert nodes["listed"].candidate_since == int(now) - 59  # the latest it can have been
    node = cluster.objects["/api/v1/nodes/watched"]
    node["spec"]["taints"] = [t for t in node["spec"]["taints"]
                              if t["key"] != "DeletionCandidateOfClusterAutoscaler"]
    cluster.put("/api/v1/nodes/watched", node, event="MODIFIED")  # needed again
    assert nodes["watched"].candidate_since is None


def test_a_pods_phase_and_readiness_are_kept(cluster: FakeCluster) -> None:
    """What the ReplicaSet controller ranks before the cost (removal.py waits on them)."""
    cluster.pod("small", "running")
    cluster.pod("small", "starting", ready=False)
    pods = cluster.index.groups["small"].pods
    assert (pods["running"].phase, pods["running"].ready) == ("Running", True)
    assert (pods["starting"].phase, pods["starting"].ready) == ("Pending", False)
