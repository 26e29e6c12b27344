from __future__ import annotations

import asyncio
from typing import Any

import pytest

from simkube.core.kubeapi import MERGE_PATCH, ApiError
from simkube.core.simtime import TimeScale
from simkube.driver.lifecycles import Assignment, LifetimePlan, owner_key
from simkube.driver.names import LIFECYCLE_OWNER, POD_LIFETIME
from simkube.driver.podtimer import PodTimer
from simkube.driver.victims import VictimPlan
from simkube.trace import PodLifecycle, PodRun
from tests.unit.driver.fakes import Call, FakeKube

pytestmark = pytest.mark.unit
OWNER = owner_key("batch/v1.CronJob", "default/hello")


def _pod(name: str, created: str, *, owner: str | None = OWNER, job: bool = True,
         **annotations: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "v-default", "uid": f"uid-{name}",
                            "creationTimestamp": created, "annotations": dict(annotations)}
    if owner:
        meta["annotations"][LIFECYCLE_OWNER] = owner
    if job:
        meta["ownerReferences"] = [{"kind": "Job", "name": "hello-1"}]
    return {"metadata": meta}


def _plan() -> LifetimePlan:
    return LifetimePlan([PodLifecycle(owner_kind="batch/v1.CronJob", owner="default/hello",
                                      runs=(PodRun(start_ms=0, end_ms=30_000),
                                            PodRun(start_ms=60_000, end_ms=72_000)))],
                        scale=TimeScale(1.0))


async def _run_until_patched(kube: FakeKube, count: int) -> list[Assignment]:
    timed: list[Assignment] = []
    timer = PodTimer(kube=kube, simulation="sim", plan=_plan(), timed=timed.append)  # type: ignore[arg-type]
    task = asyncio.create_task(timer.run())
    try:
        for _ in range(200):
            if len(kube.made("PATCH")) >= count:
                break
            await asyncio.sleep(0.01)
        await timer.flush()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    return timed


async def test_pods_get_runs_in_creation_order() -> None:
    listed = {"metadata": {"resourceVersion": "5"}, "items": [
        _pod("second", "2024-01-01T00:00:02Z"), _pod("first", "2024-01-01T00:00:01Z")]}
    kube = FakeKube(answer=lambda call: listed if call.method == "GET" else {})
    kube.watches = [[{"type": "ADDED", "object": _pod("third", "2024-01-01T00:00:03Z")},
                     {"type": "MODIFIED", "object": _pod("first", "2024-01-01T00:00:01Z")}]]
    timed = await _run_until_patched(kube, 3)
    assert [(a.launch, a.lifetime_ms) for a in timed] == [(0, 30_000), (1, 12_000), (2, 0)]
    patches = {call.path.rsplit("/", 1)[1]: call for call in kube.made("PATCH")}
    assert patches["first"].body == {"metadata": {"annotations": {POD_LIFETIME: "30000ms"}}}
    assert patches["second"].body["metadata"]["annotations"][POD_LIFETIME] == "12000ms"
    assert patches["first"].content_type == MERGE_PATCH
    assert patches["first"].query == {"fieldManager": "simkube-driver-lifecycles"}
    (watch,) = kube.made("WATCH")
    assert watch.query is not None
    assert watch.query["labelSelector"] == "simkube.dev/simulation=sim"
    assert watch.query["resourceVersion"] == "5"


async def test_pods_without_a_marker_or_already_timed_are_left_alone() -> None:
    listed = {"metadata": {"resourceVersion": "1"}, "items": [
        _pod("plain", "2024-01-01T00:00:01Z", owner=None),
        _pod("done", "2024-01-01T00:00:02Z", **{POD_LIFETIME: "5s"}),
        _pod("web", "2024-01-01T00:00:03Z", owner=owner_key("apps/v1.Deployment", "a/web"),
             job=False),
        _pod("timed", "2024-01-01T00:00:04Z")]}
    kube = FakeKube(answer=lambda call: listed if call.method == "GET" else {})
    timed = await _run_until_patched(kube, 1)
    assert [(a.owner, a.launch) for a in timed] == [
        (owner_key("apps/v1.Deployment", "a/web"), 0), (OWNER, 0)]
    assert [call.path.rsplit("/", 1)[1] for call in kube.made("PATCH")] == ["timed"]


async def test_a_gone_watch_lists_again_and_counts_nobody_twice() -> None:
    pods = [_pod("first", "2024-01-01T00:00:01Z")]

    def answer(call: Call) -> Any:
        if call.method == "GET":
            return {"metadata": {"resourceVersion": "9"}, "items": list(pods)}
        return {}
    kube = FakeKube(answer=answer)
    pods_after = _pod("second", "2024-01-01T00:00:02Z")
    kube.watches = [[{"type": "ERROR", "object": {"code": 410}}], []]
    pods.append(pods_after)
    timed = await _run_until_patched(kube, 2)
    assert [a.launch for a in timed] == [0, 1]
    assert len(kube.made("GET")) >= 1


async def test_patch_failures_do_not_stop_the_timer() -> None:
    listed = {"metadata": {"resourceVersion": "1"},
              "items": [_pod("gone", "2024-01-01T00:00:01Z")]}

    def answer(call: Call) -> Any:
        if call.method == "PATCH":
            return ApiError(code=404, reason="NotFound", message="")
        return listed
    kube = FakeKube(answer=answer)
    timed = await _run_until_patched(kube, 1)
    assert len(timed) == 1


async def test_replicaset_pods_are_counted_for_the_victim_plan_as_they_start() -> None:
    web = owner_key("apps/v1.Deployment", "a/web")
    victims = VictimPlan([PodLifecycle(owner_kind="apps/v1.Deployment", owner="a/web",
                                       runs=(PodRun(start_ms=0, end_ms=5_000),
                                             PodRun(start_ms=1_000, end_ms=5_000),
                                             PodRun(start_ms=2_000, end_ms=5_000)))],
                         start_ms=0)

    def pod(name: str, *, started: bool, deleting: bool = False) -> dict[str, Any]:
        made = _pod(name, "2024-01-01T00:00:01Z", owner=web, job=False)
        if started:
            made["status"] = {"phase": "Running", "startTime": "2024-01-01T00:00:02Z"}
        if deleting:
            made["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:09Z"
        return made
    # w0 runs from the start; w1 is pending until after w2 has started, so it is the third
    # run; w0 is then deleted, and w2 is being deleted.
    listed = {"metadata": {"resourceVersion": "1"},
              "items": [pod("w0", started=True), pod("w1", started=False)]}
    kube = FakeKube(answer=lambda call: listed if call.method == "GET" else {})
    kube.watches = [[{"type": "ADDED", "object": pod("w2", started=True)},
                     {"type": "MODIFIED", "object": pod("w1", started=True)},
                     {"type": "DELETED", "object": pod("w0", started=True)},
                     {"type": "MODIFIED", "object": pod("w2", started=True, deleting=True)}]]
    timer = PodTimer(kube=kube, simulation="sim", plan=_plan(),  # type: ignore[arg-type]
                     victims=victims)
    task = asyncio.create_task(timer.run())
    try:
        for _ in range(200):
            if kube.made("WATCH"):
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    # Only w1 is left, as the third run (started at 2 s, alone in its second).
    assert victims.scale_down(web, offset_ms=5_000, removed=3).costs == {
        ("v-default", "w1"): -2}
    assert kube.made("PATCH") == []  # no lifetimes for ReplicaSet pods
