from __future__ import annotations

import asyncio
import time

import pytest

from simkube.cloudprov.naming import (
    DELETION_COST_ANNOTATION,
    IN_SERVICE_LABEL,
    LOWEST_DELETION_COST,
)
from simkube.core.errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    OutOfRangeError,
    UnavailableError,
)
from tests.unit.cloudprov.fakes import DEPLOYMENT, PODS, REPLICA_SETS, ScalingSetup

pytestmark = pytest.mark.unit


async def test_increase_tests_and_sets_replicas_and_waits(setup: ScalingSetup) -> None:
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
async def test_bad_increases_change_nothing(setup: ScalingSetup, delta: int, error: type[Exception],
                                            message: str) -> None:
    with pytest.raises(error, match=message):
        await setup.scaler.increase("small", delta, deadline=setup.deadline())
    assert setup.writes() == []


async def test_delete_nodes_marks_exactly_those_then_lowers_replicas(setup: ScalingSetup) -> None:
    await setup.scaler.delete_nodes("small", ["a", "c"], deadline=setup.deadline())
    assert setup.replicas() == 1
    assert setup.marked() == {"a", "c"}
    assert setup.writes() == [("PATCH", f"{PODS}/a"), ("PATCH", f"{PODS}/c"),
                              ("PATCH", DEPLOYMENT),
                              ("DELETE", "/api/v1/nodes/a"), ("DELETE", "/api/v1/nodes/c")]
    assert setup.cluster.calls[0][2] == {
        "metadata": {"annotations": {DELETION_COST_ANNOTATION: LOWEST_DELETION_COST},
                     "labels": {IN_SERVICE_LABEL: None}}}
    # Replicas dropped only once the ReplicaSet's status counted the marked pods.
    reads = [i for i, (method, path, _) in enumerate(setup.cluster.calls) if path == REPLICA_SETS]
    lowered = next(i for i, (method, path, _) in enumerate(setup.cluster.calls)
                   if (method, path) == ("PATCH", DEPLOYMENT))
    assert reads
    assert max(reads) < lowered
    setup.replica_set_removes_marked()
    await asyncio.sleep(0.05)
    assert set(setup.cluster.index.groups["small"].pods) == {"b"}
    assert set(setup.cluster.index.groups["small"].nodes) == {"b"}


async def test_delete_nodes_leaves_nodes_held_since_ca_found_them_unneeded(
        setup: ScalingSetup) -> None:
    setup.cluster.soft_taint("a", value=str(int(time.time()) - 1))  # c: never marked
    nodes = setup.cluster.index.groups["small"].nodes
    unneeded = nodes["a"].candidate_since
    assert unneeded is not None
    setup.current.update(timing=setup.current.timing, holds=((unneeded, unneeded + 0.2),))
    await setup.scaler.delete_nodes("small", ["a", "c"], deadline=setup.deadline())
    assert setup.replicas() == 1  # the target drops at once
    assert ("DELETE", "/api/v1/nodes/c") in setup.writes()
    assert ("DELETE", "/api/v1/nodes/a") not in setup.writes()  # the reconciler's, later
    assert set(nodes) == {"a", "b"}


async def test_delete_nodes_accepts_instances_that_never_registered(setup: ScalingSetup) -> None:
    await setup.scaler.increase("small", 1, deadline=setup.deadline())
    setup.cluster.pod("small", "d")  # its Node was never created
    await setup.scaler.delete_nodes("small", ["d"], deadline=setup.deadline())
    assert setup.replicas() == 3
    assert setup.marked() == {"d"}
    assert ("DELETE", "/api/v1/nodes/d") not in setup.writes()


async def test_deleting_again_is_harmless(setup: ScalingSetup) -> None:
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
async def test_bad_deletions_change_nothing(setup: ScalingSetup, names: list[str],
                                            error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        await setup.scaler.delete_nodes("small", names, deadline=setup.deadline())
    assert setup.writes() == []


async def test_status_updates_do_not_conflict(setup: ScalingSetup) -> None:
    deployment = setup.cluster.objects[DEPLOYMENT]
    deployment["status"] = {"observedGeneration": 2}
    setup.cluster.put(DEPLOYMENT, deployment, event="MODIFIED")  # a new resourceVersion
    await setup.scaler.increase("small", 1, deadline=setup.deadline())
    assert setup.replicas() == 4


async def test_decrease_cancels_replicas_without_pods_first(setup: ScalingSetup) -> None:
    await setup.scaler.increase("small", 2, deadline=setup.deadline())
    setup.cluster.calls.clear()
    await setup.scaler.decrease("small", -2, deadline=setup.deadline())
    assert setup.replicas() == 3
    assert setup.writes() == [("PATCH", DEPLOYMENT)]


async def test_decrease_cancels_pods_whose_node_does_not_exist(setup: ScalingSetup) -> None:
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
async def test_bad_decreases_change_nothing(setup: ScalingSetup, delta: int, error: type[Exception],
                                            message: str) -> None:
    with pytest.raises(error, match=message):
        await setup.scaler.decrease("small", delta, deadline=setup.deadline())
    assert setup.writes() == []


async def test_no_deployment_is_unavailable(setup: ScalingSetup) -> None:
    setup.cluster.remove(DEPLOYMENT)
    with pytest.raises(UnavailableError, match="has no Deployment sk-test/small yet"):
        setup.scaler.replicas("small")


async def test_changes_to_one_group_are_serialised(setup: ScalingSetup) -> None:
    await asyncio.gather(*(setup.scaler.increase("small", 1, deadline=setup.deadline())
                           for _ in range(2)))
    assert setup.replicas() == 5
    with pytest.raises(OutOfRangeError):
        await setup.scaler.increase("small", 1, deadline=setup.deadline())
