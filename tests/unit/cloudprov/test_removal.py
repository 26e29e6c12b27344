"""Marks, withdrawal and follow-up of a scale-down, seen through the Scaler that uses them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from structlog.testing import capture_logs

from simkube.cloudprov.index import PodEntry
from simkube.cloudprov.naming import DELETION_COST_ANNOTATION, IN_SERVICE, IN_SERVICE_LABEL
from simkube.cloudprov.removal import removed_instead
from simkube.core.errors import AbortedError, UnavailableError
from tests.unit.cloudprov.fakes import DEPLOYMENT, MARKED, PODS, ScalingSetup

pytestmark = pytest.mark.unit


async def test_a_failed_replicas_update_withdraws_the_marks(setup: ScalingSetup) -> None:
    setup.cluster.fail("PATCH", "/deployments/small", code=500)
    with pytest.raises(UnavailableError, match="cannot update node group 'small'"):
        await setup.scaler.delete_nodes("small", ["a"], deadline=setup.deadline())
    assert setup.marked() == set()
    assert setup.replicas() == 3
    assert set(setup.cluster.index.groups["small"].nodes) == {"a", "b", "c"}


async def test_a_concurrent_edit_aborts_and_withdraws_the_marks(setup: ScalingSetup) -> None:
    setup.cluster.echo = False  # someone scaled the Deployment; our watch has not seen it yet
    setup.cluster.objects[DEPLOYMENT]["spec"]["replicas"] = 4
    setup.cluster.echo = True
    with pytest.raises(AbortedError, match=r"replicas of node group 'small' changed meanwhile "
                                           r"\(they were 3\); nothing was changed"):
        await setup.scaler.delete_nodes("small", ["b"], deadline=setup.deadline())
    assert setup.marked() == set()
    assert setup.cluster.objects[DEPLOYMENT]["spec"]["replicas"] == 4


async def test_pods_the_replica_set_keeps_are_deleted_by_the_follow_up(setup: ScalingSetup) -> None:
    await setup.scaler.increase("small", 2, deadline=setup.deadline())  # 2 pods not yet created
    await setup.scaler.delete_nodes("small", ["a"], deadline=setup.deadline())
    assert setup.replicas() == 4
    # The ReplicaSet has 3 pods for 4 replicas: it removes nothing, so the follow-up must.
    state = setup.cluster.index.groups["small"]
    assert await setup.cluster.index.wait_until(lambda: "a" not in state.pods, timeout=5)
    assert ("DELETE", f"{PODS}/a") in setup.writes()


async def test_stale_marks_are_withdrawn_before_choosing(setup: ScalingSetup) -> None:
    setup.cluster.pod("small", "d", **MARKED)  # left by a crash
    await setup.scaler.delete_nodes("small", ["a"], deadline=setup.deadline())
    assert setup.marked() == {"a"}


async def test_recover_withdraws_marks_no_scale_down_will_honour(setup: ScalingSetup) -> None:
    setup.cluster.pod("small", "b", **MARKED)
    await setup.scaler.recover()
    assert setup.marked() == set()


async def test_replicas_wait_until_the_replica_set_controller_counts_the_marks(
        setup: ScalingSetup) -> None:
    # Its cache predates the marks: it would rank a, b and c alike and could remove any.
    setup.cluster.replica_set_cache["small"] = {"replicas": 3, "fullyLabeledReplicas": 3}

    await remove_a_once(setup, lambda: setup.cluster.replica_set_cache.pop("small"),
                        why="replicas dropped before the controller saw the mark")


async def test_a_replica_set_controller_that_never_counts_the_marks_changes_nothing(
        setup: ScalingSetup) -> None:
    setup.cluster.replica_set_cache["small"] = {"replicas": 3, "fullyLabeledReplicas": 3}
    deadline = asyncio.get_running_loop().time() + 0.3
    with pytest.raises(UnavailableError, match=r"the ReplicaSet controller has not yet counted "
                                               r"the pods of node group 'small' marked"):
        await setup.scaler.delete_nodes("small", ["a"], deadline=deadline)
    assert setup.replicas() == 3
    assert setup.marked() == set()
    pod = setup.cluster.objects[f"{PODS}/a"]["metadata"]
    assert pod["labels"][IN_SERVICE_LABEL] == IN_SERVICE  # back in service
    assert DELETION_COST_ANNOTATION not in pod["annotations"]
    assert set(setup.cluster.index.groups["small"].nodes) == {"a", "b", "c"}


async def test_the_follow_up_names_the_pods_removed_in_place_of_the_chosen(
        setup: ScalingSetup) -> None:
    """The controller ranks phase and readiness before the cost: when it takes another pod,
    the log says which, as the watch showed it before replicas dropped."""
    with capture_logs() as logs:
        await setup.scaler.delete_nodes("small", ["a"], deadline=setup.deadline())
        setup.cluster.remove(f"{PODS}/b")  # the ReplicaSet's choice, not ours
        state = setup.cluster.index.groups["small"]
        assert await setup.cluster.index.wait_until(lambda: "a" not in state.pods, timeout=5)
    [kept] = [entry for entry in logs
              if entry["event"] == "the ReplicaSet kept pods chosen for removal; deleting them"]
    assert kept["pods"] == ["a"]
    assert kept["removed_instead"] == [
        {"pod": "b", "phase": "Running", "ready": True, "marked": False}]


def test_removed_instead_lists_only_pods_that_went() -> None:
    before = {"b": PodEntry(name="b", terminating=False, marked=False, phase="Pending"),
              "c": PodEntry(name="c", terminating=False, marked=False, phase="Running",
                            ready=True),
              "d": PodEntry(name="d", terminating=False, marked=False, phase="Running",
                            ready=True)}
    now = {"c": PodEntry(name="c", terminating=True, marked=False),
           "d": before["d"]}
    assert removed_instead(before, now) == [
        {"pod": "b", "phase": "Pending", "ready": False, "marked": False},
        {"pod": "c", "phase": "Running", "ready": True, "marked": False}]


async def test_replicas_wait_until_every_unmarked_pod_is_running_and_ready(
        setup: ScalingSetup) -> None:
    """The controller would remove a Pending or not-Ready pod before the marked one: a new
    instance's pod, or one the ReplicaSet just made in place of another."""
    setup.cluster.pod("small", "d", ready=False)

    await remove_a_once(setup, lambda: setup.cluster.pod("small", "d"),
                        why="replicas dropped while d could have gone instead of a")


async def test_an_unmarked_pod_that_never_starts_fails_the_removal_and_says_which(
        setup: ScalingSetup) -> None:
    setup.cluster.pod("small", "d", ready=False)
    deadline = asyncio.get_running_loop().time() + 0.3
    with pytest.raises(UnavailableError, match=r"pod\(s\) d of node group 'small' are not yet "
                                               r"Running and Ready.*nothing was changed"):
        await setup.scaler.delete_nodes("small", ["a"], deadline=deadline)
    assert setup.replicas() == 3
    assert setup.marked() == set()


async def test_replicas_wait_until_the_controller_sees_the_pods_ready(
        setup: ScalingSetup) -> None:
    status = setup.cluster.replica_set_status("small")
    setup.cluster.replica_set_cache["small"] = {**status, "readyReplicas": 0}

    async def mark_status() -> None:
        # The status the controller writes once it has seen a marked: counts catch up.
        await asyncio.sleep(0.1)
        setup.cluster.replica_set_cache["small"] = {
            **setup.cluster.replica_set_status("small"), "readyReplicas": 1}
        await asyncio.sleep(0.2)
        assert setup.replicas() == 3, "replicas dropped while the controller saw pods unready"
        del setup.cluster.replica_set_cache["small"]
    await asyncio.gather(mark_status(), setup.scaler.delete_nodes(
        "small", ["a"], deadline=setup.deadline()))
    assert setup.replicas() == 2


async def remove_a_once(setup: ScalingSetup, unblock: Callable[[], object], *, why: str) -> None:
    """DeleteNodes for a while something holds the removal back: replicas stay at 3 until
    ``unblock`` runs (0.2 s in), then drop to 2 with a the one marked."""
    async def later() -> None:
        await asyncio.sleep(0.2)
        assert setup.replicas() == 3, why
        unblock()
    await asyncio.gather(later(), setup.scaler.delete_nodes(
        "small", ["a"], deadline=setup.deadline()))
    assert setup.replicas() == 2
    assert setup.marked() == {"a"}
