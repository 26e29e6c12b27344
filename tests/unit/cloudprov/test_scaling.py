from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import cast

import pytest

from simkube.cloudprov.errors import (
    AbortedError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    OutOfRangeError,
    UnavailableError,
)
from simkube.cloudprov.index import ClusterIndex
from simkube.cloudprov.kubeapi import KubeApi
from simkube.cloudprov.naming import LOWEST_DELETION_COST
from simkube.cloudprov.scaling import Scaler
from tests.unit.cloudprov.fakes import NAMESPACE, FakeCluster, make_config

pytestmark = pytest.mark.unit
COST = "controller.kubernetes.io/pod-deletion-cost"
CONFIG = make_config()  # small: minSize 1, maxSize 5
DEPLOYMENT = f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/small"
PODS = f"/api/v1/namespaces/{NAMESPACE}/pods"


class Setup:
    def __init__(self) -> None:
        self.cluster = FakeCluster(ClusterIndex(groups=CONFIG.groups))
        self.scaler = Scaler(api=cast(KubeApi, self.cluster), index=self.cluster.index,
                             config=CONFIG, settle=0.5)

    def deadline(self) -> float:
        return asyncio.get_running_loop().time() + 5

    def replicas(self) -> int:
        return self.scaler.replicas("small")

    def marked(self) -> set[str]:
        return {name for name, pod in self.cluster.index.groups["small"].pods.items()
                if pod.marked}

    def writes(self) -> list[tuple[str, str]]:
        return [(m, p) for m, p, _ in self.cluster.calls if m != "GET"]

    def replica_set_removes_marked(self) -> None:
        """What the ReplicaSet controller does with pods cheaper than the rest."""
        for name in sorted(self.marked()):
            self.cluster.remove(f"{PODS}/{name}")


@pytest.fixture
async def setup() -> AsyncIterator[Setup]:
    """Group ``small`` at 3 replicas with Nodes a, b, c; group ``gpu`` with node g."""
    setup = Setup()
    cluster = setup.cluster
    cluster.deployment(CONFIG, "small", 3)
    cluster.deployment(CONFIG, "gpu", 1)
    for name in "abc":
        cluster.pod("small", name)
        cluster.node(CONFIG, "small", name)
    cluster.pod("gpu", "g")
    cluster.node(CONFIG, "gpu", "g")
    cluster.calls.clear()
    yield setup
    await setup.scaler.close()


async def test_increase_tests_and_sets_replicas_and_waits(setup: Setup) -> None:
    await setup.scaler.increase("small", 2, deadline=setup.deadline())
    assert setup.replicas() == 5
    assert setup.cluster.calls == [("PATCH", DEPLOYMENT, [
        {"op": "test", "path": "/spec/replicas", "value": 3},
        {"op": "replace", "path": "/spec/replicas", "value": 5}])]


@pytest.mark.parametrize(("delta", "error", "message"), [
    (3, OutOfRangeError, r"increasing node group 'small' by 3 to 6 would exceed its maxSize 5 "
                         r"\(target size is 3\)"),
    (0, InvalidArgumentError, r"delta must be positive .* got 0"),
    (-1, InvalidArgumentError, r"delta must be positive .* got -1"),
])
async def test_bad_increases_change_nothing(setup: Setup, delta: int, error: type[Exception],
                                            message: str) -> None:
    with pytest.raises(error, match=message):
        await setup.scaler.increase("small", delta, deadline=setup.deadline())
    assert setup.writes() == []


async def test_delete_nodes_marks_exactly_those_then_lowers_replicas(setup: Setup) -> None:
    await setup.scaler.delete_nodes("small", ["a", "c"], deadline=setup.deadline())
    assert setup.replicas() == 1
    assert setup.marked() == {"a", "c"}
    assert setup.writes() == [("PATCH", f"{PODS}/a"), ("PATCH", f"{PODS}/c"),
                              ("PATCH", DEPLOYMENT),
                              ("DELETE", "/api/v1/nodes/a"), ("DELETE", "/api/v1/nodes/c")]
    assert setup.cluster.calls[0][2] == {"metadata": {"annotations": {COST: LOWEST_DELETION_COST}}}
    setup.replica_set_removes_marked()
    await asyncio.sleep(0.05)
    assert set(setup.cluster.index.groups["small"].pods) == {"b"}
    assert set(setup.cluster.index.groups["small"].nodes) == {"b"}


async def test_delete_nodes_accepts_instances_that_never_registered(setup: Setup) -> None:
    await setup.scaler.increase("small", 1, deadline=setup.deadline())
    setup.cluster.pod("small", "d")  # its Node was never created
    await setup.scaler.delete_nodes("small", ["d"], deadline=setup.deadline())
    assert setup.replicas() == 3
    assert setup.marked() == {"d"}
    assert ("DELETE", "/api/v1/nodes/d") not in setup.writes()


async def test_deleting_again_is_harmless(setup: Setup) -> None:
    await setup.scaler.delete_nodes("small", ["a"], deadline=setup.deadline())
    await setup.scaler.delete_nodes("small", ["a", "a"], deadline=setup.deadline())
    assert setup.replicas() == 2


@pytest.mark.parametrize(("names", "error", "message"), [
    (["zzz"], NotFoundError, r"node 'zzz' is not an instance of node group 'small'"),
    (["a", "g"], FailedPreconditionError, r"node 'g' belongs to node group 'gpu', not 'small'"),
    (["a", "b", "c"], OutOfRangeError,
     r"deleting 3 node\(s\) would shrink node group 'small' to 0, below its minSize 1"),
    ([], InvalidArgumentError, r"names no nodes"),
])
async def test_bad_deletions_change_nothing(setup: Setup, names: list[str],
                                            error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        await setup.scaler.delete_nodes("small", names, deadline=setup.deadline())
    assert setup.writes() == []


async def test_a_failed_replicas_update_withdraws_the_marks(setup: Setup) -> None:
    setup.cluster.fail("PATCH", "/deployments/small", code=500)
    with pytest.raises(UnavailableError, match="cannot update node group 'small'"):
        await setup.scaler.delete_nodes("small", ["a"], deadline=setup.deadline())
    assert setup.marked() == set()
    assert setup.replicas() == 3
    assert set(setup.cluster.index.groups["small"].nodes) == {"a", "b", "c"}


async def test_a_concurrent_edit_aborts_and_withdraws_the_marks(setup: Setup) -> None:
    setup.cluster.echo = False  # someone scaled the Deployment; our watch has not seen it yet
    setup.cluster.objects[DEPLOYMENT]["spec"]["replicas"] = 4
    setup.cluster.echo = True
    with pytest.raises(AbortedError, match=r"replicas of node group 'small' changed meanwhile "
                                           r"\(they were 3\); nothing was changed"):
        await setup.scaler.delete_nodes("small", ["b"], deadline=setup.deadline())
    assert setup.marked() == set()
    assert setup.cluster.objects[DEPLOYMENT]["spec"]["replicas"] == 4


async def test_status_updates_do_not_conflict(setup: Setup) -> None:
    deployment = setup.cluster.objects[DEPLOYMENT]
    deployment["status"] = {"observedGeneration": 2}
    setup.cluster.put(DEPLOYMENT, deployment, event="MODIFIED")  # a new resourceVersion
    await setup.scaler.increase("small", 1, deadline=setup.deadline())
    assert setup.replicas() == 4


async def test_pods_the_replica_set_keeps_are_deleted_by_the_follow_up(setup: Setup) -> None:
    await setup.scaler.increase("small", 2, deadline=setup.deadline())  # 2 pods not yet created
    await setup.scaler.delete_nodes("small", ["a"], deadline=setup.deadline())
    assert setup.replicas() == 4
    # The ReplicaSet has 3 pods for 4 replicas: it removes nothing, so the follow-up must.
    state = setup.cluster.index.groups["small"]
    assert await setup.cluster.index.wait_until(lambda: "a" not in state.pods, timeout=5)
    assert ("DELETE", f"{PODS}/a") in setup.writes()


async def test_stale_marks_are_withdrawn_before_choosing(setup: Setup) -> None:
    setup.cluster.pod("small", "d", **{COST: LOWEST_DELETION_COST})  # left by a crash
    await setup.scaler.delete_nodes("small", ["a"], deadline=setup.deadline())
    assert setup.marked() == {"a"}


async def test_recover_withdraws_marks_no_scale_down_will_honour(setup: Setup) -> None:
    setup.cluster.pod("small", "b", **{COST: LOWEST_DELETION_COST})
    await setup.scaler.recover()
    assert setup.marked() == set()


async def test_decrease_cancels_replicas_without_pods_first(setup: Setup) -> None:
    await setup.scaler.increase("small", 2, deadline=setup.deadline())
    setup.cluster.calls.clear()
    await setup.scaler.decrease("small", -2, deadline=setup.deadline())
    assert setup.replicas() == 3
    assert setup.writes() == [("PATCH", DEPLOYMENT)]


async def test_decrease_cancels_pods_whose_node_does_not_exist(setup: Setup) -> None:
    await setup.scaler.increase("small", 1, deadline=setup.deadline())
    setup.cluster.pod("small", "d")
    await setup.scaler.decrease("small", -1, deadline=setup.deadline())
    assert setup.replicas() == 3
    assert setup.marked() == {"d"}


@pytest.mark.parametrize(("delta", "error", "message"), [
    (-1, FailedPreconditionError, r"decreasing node group 'small' by 1 to 2 would remove "
                                  r"registered nodes: 3 of its 3 instances are registered"),
    (0, InvalidArgumentError, r"delta must be negative .* got 0"),
    (2, InvalidArgumentError, r"delta must be negative .* got 2"),
])
async def test_bad_decreases_change_nothing(setup: Setup, delta: int, error: type[Exception],
                                            message: str) -> None:
    with pytest.raises(error, match=message):
        await setup.scaler.decrease("small", delta, deadline=setup.deadline())
    assert setup.writes() == []


async def test_no_deployment_is_unavailable(setup: Setup) -> None:
    setup.cluster.remove(DEPLOYMENT)
    with pytest.raises(UnavailableError, match="has no Deployment sk-test/small yet"):
        setup.scaler.replicas("small")


async def test_changes_to_one_group_are_serialised(setup: Setup) -> None:
    await asyncio.gather(*(setup.scaler.increase("small", 1, deadline=setup.deadline())
                           for _ in range(2)))
    assert setup.replicas() == 5
    with pytest.raises(OutOfRangeError):
        await setup.scaler.increase("small", 1, deadline=setup.deadline())
