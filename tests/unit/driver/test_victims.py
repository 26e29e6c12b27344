from __future__ import annotations

import pytest

from simkube.driver.victims import CERTAIN_COST, GROUP_COST, VictimPlan
from simkube.trace import PodLifecycle, PodRun

pytestmark = pytest.mark.unit
START = 1_000_000
WEB = "apps/v1.Deployment shop/web"


def _plan(*runs: tuple[int, int | None], kind: str = "apps/v1.Deployment") -> VictimPlan:
    """Runs as (start, end) in seconds after the trace's start."""
    lifecycle = PodLifecycle(owner_kind=kind, owner="shop/web", runs=tuple(
        PodRun(start_ms=START + start * 1000,
               end_ms=None if end is None else START + end * 1000) for start, end in runs))
    return VictimPlan([lifecycle], start_ms=START)


def _start(plan: VictimPlan, count: int) -> None:
    for number in range(count):
        plan.started(WEB, pod=("sim-shop", f"web-{number}"))


def test_the_pod_the_recording_removed_is_marked_certain() -> None:
    # Started at 0, 10 and 20 s; the middle one went when the replicas dropped at 30 s.
    plan = _plan((0, None), (10, 31), (20, None))
    _start(plan, 3)
    marks = plan.scale_down(WEB, offset_ms=30_000, removed=1)
    assert marks.costs == {("sim-shop", "web-1"): CERTAIN_COST}
    assert marks.cleared == ()


def test_a_group_launched_in_one_second_is_left_to_the_replicaset() -> None:
    # Two of three pods started at 0 s went: the trace cannot say which pod had which node.
    plan = _plan((0, 40), (0, None), (0, 40), (10, 40))
    _start(plan, 4)
    marks = plan.scale_down(WEB, offset_ms=39_500, removed=3)
    assert marks.costs == {("sim-shop", "web-0"): GROUP_COST, ("sim-shop", "web-1"): GROUP_COST,
                           ("sim-shop", "web-2"): GROUP_COST,
                           ("sim-shop", "web-3"): CERTAIN_COST}


def test_only_runs_ending_near_the_scale_down_count() -> None:
    # The first ended long after (evicted, say); the second was this scale-down's victim.
    plan = _plan((0, 200), (5, 61), (6, None))
    _start(plan, 3)
    assert plan.scale_down(WEB, offset_ms=60_000, removed=2).costs == {
        ("sim-shop", "web-1"): CERTAIN_COST}


def test_earlier_marks_come_off_at_the_next_scale_down() -> None:
    plan = _plan((0, 30), (0, None), (10, None), (20, 61))
    _start(plan, 4)
    first = plan.scale_down(WEB, offset_ms=30_000, removed=1)
    assert set(first.costs) == {("sim-shop", "web-0"), ("sim-shop", "web-1")}
    # The replay's ReplicaSet took web-1 instead of web-0: web-0 keeps a stale mark.
    plan.gone(("sim-shop", "web-1"))
    second = plan.scale_down(WEB, offset_ms=60_000, removed=1)
    assert second.costs == {("sim-shop", "web-3"): CERTAIN_COST}
    assert second.cleared == (("sim-shop", "web-0"),)


def test_gone_and_unlaunched_pods_are_never_marked() -> None:
    plan = _plan((0, 30), (1, 30), (2, None))
    _start(plan, 2)  # the third has not started in the replay
    plan.gone(("sim-shop", "web-0"))
    marks = plan.scale_down(WEB, offset_ms=30_000, removed=2)
    assert marks.costs == {("sim-shop", "web-1"): CERTAIN_COST}


def test_retain_forgets_pods_missing_from_a_listing() -> None:
    plan = _plan((0, 30), (1, 30))
    _start(plan, 2)
    plan.retain({("sim-shop", "web-1")})
    assert set(plan.scale_down(WEB, offset_ms=30_000, removed=2).costs) == {
        ("sim-shop", "web-1")}


def test_a_pod_counts_once_and_starts_beyond_the_recording_are_left_alone() -> None:
    plan = _plan((0, 30))
    _start(plan, 3)
    plan.started(WEB, pod=("sim-shop", "web-0"))  # seen again: still the first
    assert plan.scale_down(WEB, offset_ms=30_000, removed=2).costs == {
        ("sim-shop", "web-0"): CERTAIN_COST}


def test_owners_are_deployments_and_replicasets_with_runs() -> None:
    assert _plan((0, None)).owners == {WEB}
    assert _plan((0, None), kind="apps/v1.StatefulSet").owners == frozenset()
    assert VictimPlan([PodLifecycle(owner_kind="apps/v1.Deployment", owner="shop/web")],
                      start_ms=START).owners == frozenset()


def test_nothing_to_mark_without_a_recorded_victim() -> None:
    plan = _plan((0, None), (1, None))
    _start(plan, 2)
    marks = plan.scale_down(WEB, offset_ms=30_000, removed=1)
    assert not marks
    assert not plan.scale_down("apps/v1.Deployment shop/other", offset_ms=0, removed=1)
    assert not plan.scale_down(WEB, offset_ms=30_000, removed=0)


def test_a_group_member_that_goes_takes_the_run_that_ended_first() -> None:
    # Two pods started at 0 s; the recording removed one at 30 s and the other at 60 s.
    plan = _plan((0, 30), (0, 60), (10, None))
    _start(plan, 3)
    first = plan.scale_down(WEB, offset_ms=30_000, removed=1)
    assert first.costs == {("sim-shop", "web-0"): GROUP_COST, ("sim-shop", "web-1"): GROUP_COST}
    # The ReplicaSet took web-1, numbered for the run that ended at 60 s: web-0 stays for it.
    plan.gone(("sim-shop", "web-1"))
    second = plan.scale_down(WEB, offset_ms=60_000, removed=1)
    assert second.costs == {("sim-shop", "web-0"): CERTAIN_COST}


def test_a_pod_that_goes_alone_in_its_second_keeps_its_own_run() -> None:
    plan = _plan((0, 30), (10, 60), (20, 90))
    _start(plan, 3)
    plan.gone(("sim-shop", "web-1"))  # evicted, say: the others keep their numbers
    assert plan.scale_down(WEB, offset_ms=30_000, removed=1).costs == {
        ("sim-shop", "web-0"): CERTAIN_COST}
    assert plan.scale_down(WEB, offset_ms=90_000, removed=1).costs == {
        ("sim-shop", "web-2"): CERTAIN_COST}


def test_a_pod_beyond_the_recorded_runs_goes_without_trading() -> None:
    plan = _plan((0, 30))
    _start(plan, 2)
    plan.gone(("sim-shop", "web-1"))
    assert plan.scale_down(WEB, offset_ms=30_000, removed=1).costs == {
        ("sim-shop", "web-0"): CERTAIN_COST}


def _typed_plan(*runs: tuple[int, int | None, str | None]) -> VictimPlan:
    """Runs as (start, end, instance type) in seconds after the trace's start."""
    lifecycle = PodLifecycle(owner_kind="apps/v1.Deployment", owner="shop/web", runs=tuple(
        PodRun(start_ms=START + start * 1000, node_type=node_type,
               end_ms=None if end is None else START + end * 1000)
        for start, end, node_type in runs))
    return VictimPlan([lifecycle], start_ms=START)


def _start_on(plan: VictimPlan, *node_types: str | None) -> None:
    for number, node_type in enumerate(node_types):
        plan.started(WEB, pod=("sim-shop", f"web-{number}"), node_type=node_type)


def test_a_group_loses_the_pod_on_the_instance_type_the_recording_removed_from() -> None:
    # Two pods started at 0 s: the recording removed the one on the large node and kept the
    # one on the small node. The replay numbered them the other way round.
    plan = _typed_plan((0, 30, "small"), (0, None, "large"))
    _start_on(plan, "large", "small")
    marks = plan.scale_down(WEB, offset_ms=30_000, removed=1)
    assert marks.costs == {("sim-shop", "web-1"): CERTAIN_COST}


def test_more_pods_on_the_removed_type_than_removed_are_left_to_the_replicaset() -> None:
    plan = _typed_plan((0, 30, "large"), (0, None, "large"), (0, None, "small"))
    _start_on(plan, "large", "small", "large")
    marks = plan.scale_down(WEB, offset_ms=30_000, removed=1)
    assert marks.costs == {("sim-shop", "web-0"): GROUP_COST, ("sim-shop", "web-2"): GROUP_COST}


def test_too_few_pods_on_the_removed_type_offer_the_rest_of_the_group() -> None:
    # Both removed pods were on large nodes; the replay has one pod there.
    plan = _typed_plan((0, 30, "large"), (0, 30, "large"), (0, None, "small"))
    _start_on(plan, "small", "large", "small")
    marks = plan.scale_down(WEB, offset_ms=30_000, removed=2)
    assert marks.costs == {("sim-shop", "web-1"): CERTAIN_COST,
                           ("sim-shop", "web-0"): GROUP_COST, ("sim-shop", "web-2"): GROUP_COST}


def test_runs_without_a_type_leave_the_group_to_the_replicaset() -> None:
    plan = _typed_plan((0, 30, None), (0, None, "small"))
    _start_on(plan, "large", "small")
    marks = plan.scale_down(WEB, offset_ms=30_000, removed=1)
    assert marks.costs == {("sim-shop", "web-0"): GROUP_COST, ("sim-shop", "web-1"): GROUP_COST}


def test_a_pod_that_goes_takes_the_run_of_its_own_instance_type() -> None:
    # The pod on the small node goes (evicted, say) before any scale-down: it takes the
    # small run, though the large run ended first, so the large pod keeps the large run.
    plan = _typed_plan((0, 30, "large"), (0, 90, "small"))
    _start_on(plan, "small", "large")
    plan.gone(("sim-shop", "web-0"))
    assert plan.scale_down(WEB, offset_ms=30_000, removed=1).costs == {
        ("sim-shop", "web-1"): CERTAIN_COST}


def test_knows_the_pods_numbered_until_they_go() -> None:
    plan = _typed_plan((0, None, "small"))
    assert not plan.knows(("sim-shop", "web-0"))
    _start_on(plan, "small")
    assert plan.knows(("sim-shop", "web-0"))
    plan.gone(("sim-shop", "web-0"))
    assert not plan.knows(("sim-shop", "web-0"))
