from __future__ import annotations

from typing import Any

import pytest

from simkube.tracer.lifecycles import LifecycleTracker
from simkube.tracer.segments import RunFact
from tests.unit.tracer.conftest import obj, ref

pytestmark = pytest.mark.unit
CHAIN = (ref("batch/v1.Job", "nightly-1"), ref("batch/v1.CronJob", "nightly"))
NOW = 1_700_000_100_000


def pod(phase: str, *, start: str | None = None, finished: str | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase}
    if start:
        status["startTime"] = start
    if finished:
        status["containerStatuses"] = [{"state": {"terminated": {"finishedAt": finished}}}]
    return obj("v1.Pod", "p", metadata={"uid": "u1"}, status=status)


def tracker(running: dict[str, RunFact] | None = None) -> LifecycleTracker:
    return LifecycleTracker(lifecycle_kinds=frozenset({"batch/v1.CronJob", "batch/v1.Job"}),
                            running=running if running is not None else {})


def test_a_run_starts_and_finishes_under_the_outermost_tracked_owner() -> None:
    running: dict[str, RunFact] = {}
    lifecycles = tracker(running)
    assert lifecycles.observe(pod("Pending"), CHAIN, now_ms=NOW, deleted=False) is None
    started = lifecycles.observe(pod("Running", start="2023-11-14T22:13:20Z"), CHAIN,
                                 now_ms=NOW, deleted=False)
    assert started == RunFact(uid="u1", owner_kind="batch/v1.CronJob", owner="ns/nightly",
                              pod="ns/p", start_ms=1_700_000_000_000)
    running["u1"] = started
    assert lifecycles.observe(pod("Running", start="2023-11-14T22:13:20Z"), CHAIN,
                              now_ms=NOW, deleted=False) is None
    done = lifecycles.observe(pod("Succeeded", start="2023-11-14T22:13:20Z",
                                  finished="2023-11-14T22:13:50Z"), CHAIN, now_ms=NOW,
                              deleted=False)
    assert done is not None
    assert done.end_ms == 1_700_000_030_000
    running.pop("u1")
    # Seen again (a re-list): no second run.
    assert lifecycles.observe(pod("Succeeded", start="2023-11-14T22:13:20Z"), CHAIN,
                              now_ms=NOW, deleted=False) is None


def test_pods_first_seen_finished_or_deleted_while_running() -> None:
    lifecycles = tracker()
    done = lifecycles.observe(pod("Failed", start="2023-11-14T22:13:20Z"), CHAIN, now_ms=NOW,
                              deleted=False)
    assert done is not None
    assert (done.start_ms, done.end_ms) == (1_700_000_000_000, NOW)
    known = RunFact(uid="u2", owner_kind="batch/v1.CronJob", owner="ns/nightly", pod="ns/q",
                    start_ms=5)
    lifecycles = tracker({"u2": known})
    gone = obj("v1.Pod", "q", metadata={"uid": "u2"}, status={"phase": "Running"})
    ended = lifecycles.observe(gone, (), now_ms=NOW, deleted=True)  # owners may be gone
    assert ended is not None
    assert (ended.start_ms, ended.end_ms, ended.owner) == (
        5, NOW, "ns/nightly")
    assert lifecycles.observe(pod("Pending"), CHAIN, now_ms=NOW, deleted=True) is None


def test_pods_without_a_tracked_owner_have_no_lifecycle() -> None:
    lifecycles = tracker()
    assert lifecycles.observe(pod("Running", start="2023-11-14T22:13:20Z"),
                              (ref("apps/v1.ReplicaSet", "x"),), now_ms=NOW,
                              deleted=False) is None
    assert lifecycles.owner_of(CHAIN) == ("batch/v1.CronJob", "ns/nightly")
    no_uid = obj("v1.Pod", "p", status={"phase": "Running"})
    assert lifecycles.observe(no_uid, CHAIN, now_ms=NOW, deleted=False) is None


def test_a_run_keeps_the_instance_type_of_its_first_fact() -> None:
    running: dict[str, RunFact] = {}
    lifecycles = tracker(running)
    started = lifecycles.observe(pod("Running", start="2023-11-14T22:13:20Z"), CHAIN,
                                 now_ms=NOW, deleted=False, node_type="m5.large")
    assert started is not None
    assert started.node_type == "m5.large"
    running["u1"] = started
    # The end is seen without a node (the pod was deleted): the run keeps its type.
    ended = lifecycles.observe(pod("Running", start="2023-11-14T22:13:20Z"), CHAIN,
                               now_ms=NOW, deleted=True)
    assert ended is not None
    assert (ended.node_type, ended.end_ms) == ("m5.large", NOW)
