from __future__ import annotations

import pytest

from simkube.core.simtime import TimeScale
from simkube.driver.lifecycles import LifetimePlan, owner_key
from simkube.driver.names import POD_LIFETIME, POD_LIFETIME_MAX
from simkube.trace import PodLifecycle, PodRun

pytestmark = pytest.mark.unit
CRON = owner_key("batch/v1.CronJob", "default/hello")


def _plan(*, speed: float = 1.0, jitter_ms: int = 0) -> LifetimePlan:
    return LifetimePlan([
        PodLifecycle(owner_kind="batch/v1.CronJob", owner="default/hello", runs=(
            PodRun(start_ms=1_000, end_ms=31_000), PodRun(start_ms=61_000, end_ms=81_000))),
        PodLifecycle(owner_kind="batch/v1.CronJob", owner="default/hello", runs=(
            PodRun(start_ms=121_000),)),
        PodLifecycle(owner_kind="v1.Pod", owner="ns/empty"),
    ], scale=TimeScale(speed), jitter_ms=jitter_ms)


def test_runs_are_handed_out_in_launch_order() -> None:
    plan = _plan()
    assert plan.owners == {CRON}
    first, second, third = (plan.assign(CRON, job_owned=True) for _ in range(3))
    assert (first.launch, first.lifetime_ms, first.annotations) == (
        0, 30_000, {POD_LIFETIME: "30000ms"})
    assert (second.launch, second.lifetime_ms) == (1, 20_000)
    assert third.lifetime_ms is None  # still running when the trace ended: runs until deleted
    assert third.annotations == {}


def test_launches_beyond_the_record() -> None:
    plan = _plan()
    for _ in range(3):
        plan.assign(CRON, job_owned=True)
    job = plan.assign(CRON, job_owned=True)
    assert job.lifetime_ms == 0  # like any Job pod without lifecycle data: completes at once
    assert job.annotations == {POD_LIFETIME: "0ms"}
    other = plan.assign(owner_key("apps/v1.Deployment", "ns/web"), job_owned=False)
    assert other.lifetime_ms is None


def test_lifetimes_are_trace_time_and_jitter_is_an_upper_bound() -> None:
    plan = _plan(speed=4.0, jitter_ms=2_000)
    assignment = plan.assign(CRON, job_owned=True)
    assert assignment.lifetime_ms == 7_500
    assert assignment.annotations == {POD_LIFETIME: "7500ms", POD_LIFETIME_MAX: "9500ms"}


def test_replica_controllers_runs_are_not_lifetimes() -> None:
    web = owner_key("apps/v1.Deployment", "ns/web")
    plan = LifetimePlan([
        PodLifecycle(owner_kind="apps/v1.Deployment", owner="ns/web", runs=(
            PodRun(start_ms=0, end_ms=40_000),)),  # deleted by a scale-down, not finished
        PodLifecycle(owner_kind="apps/v1.StatefulSet", owner="ns/db", runs=(
            PodRun(start_ms=0, end_ms=10_000),)),
    ], scale=TimeScale(1.0))
    assert plan.owners == frozenset()
    assignment = plan.assign(web, job_owned=False)
    assert assignment.lifetime_ms is None
    assert assignment.annotations == {}
