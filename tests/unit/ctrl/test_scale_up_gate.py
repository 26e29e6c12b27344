"""The scale-up gate: production's plan moments in trace time, and lifting the annotation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from simkube.core.kubeapi import ApiError
from simkube.core.replay_flags import GATED_DELAY, SCALE_UP_DELAY_ANNOTATION
from simkube.ctrl.scale_up_gate import ScaleUpGate, gated
from tests.unit.core.kubeapi.fakes import ScriptedKube

pytestmark = pytest.mark.unit


CREATED = "2026-11-28T10:00:00Z"
CREATED_S = 1795860000.0  # CREATED as Unix time


def pod(uid: str, *, gate: bool = True, created: str = CREATED) -> dict[str, Any]:
    annotations = {SCALE_UP_DELAY_ANNOTATION: GATED_DELAY} if gate else {}
    return {"metadata": {"uid": uid, "name": f"p-{uid}", "namespace": "virtual-shop",
                         "creationTimestamp": created, "annotations": annotations}}


class Rig:
    """A gate on a trace clock the test moves, recording holds, loops and patches."""

    def __init__(self, *, answer: Any = None, lead_s: float = 0.0,
                 lead_per_pod_s: float = 0.0) -> None:
        self.now = 0.0
        self.wall = CREATED_S + 2.5
        self.kube = ScriptedKube(answer=answer)
        self.calls: list[str] = []
        self.gate = ScaleUpGate(kube=self.kube,  # type: ignore[arg-type]
                                clock=lambda: self.now, scan_s=10.0,
                                hold=lambda: self.calls.append("hold"),
                                loop=lambda: self.calls.append("loop"),
                                wall=lambda: self.wall, lead_s=lead_s,
                                lead_per_pod_s=lead_per_pod_s)

    def arrive(self, uid: str, *, at: float, gate: bool = True) -> None:
        self.now = at
        self.gate.seen(pod(uid, gate=gate))

    def unschedulable(self, uid: str, *, at: float, gate: bool = True) -> None:
        self.now = at
        self.gate.turned_unschedulable(pod(uid, gate=gate))

    async def settle(self) -> None:
        for _ in range(5):
            await asyncio.sleep(0)

    def delays(self) -> dict[str, str | None]:
        return {path.rsplit("/", 1)[-1]: body["metadata"]["annotations"][
                    SCALE_UP_DELAY_ANNOTATION]
                for method, path, body, *_ in self.kube.requests if method == "PATCH"}

    def lifted(self) -> list[str]:
        return [path.rsplit("/", 1)[-1] for method, path, *_ in self.kube.requests
                if method == "PATCH"]


def test_gated_reads_the_annotation() -> None:
    assert gated(pod("a"))
    assert not gated(pod("a", gate=False))
    assert not gated({"metadata": {}})
    lifted = pod("a", gate=False)
    lifted["metadata"]["annotations"] = {SCALE_UP_DELAY_ANNOTATION: "2500ms"}
    assert not gated(lifted)  # a lifted pod's delay has an end


async def test_a_wave_after_two_seconds_releases_every_waiting_pod() -> None:
    rig = Rig()
    rig.arrive("a", at=27.1)
    rig.unschedulable("a", at=27.2)  # a loop, but the pod is "very new": nothing
    rig.arrive("b", at=28.9)
    rig.unschedulable("b", at=29.0)  # the oldest is 1.9 s old: within CA's 2 s buffer
    await rig.settle()
    assert rig.calls == []
    assert rig.lifted() == []
    rig.arrive("c", at=30.0)
    rig.unschedulable("c", at=30.2)  # a's 3.1 s old: production plans for a, b and c
    await rig.settle()
    assert rig.calls == ["hold", "loop"]
    assert sorted(rig.lifted()) == ["p-a", "p-b", "p-c"]
    body = rig.kube.requests[0][2]
    assert body == {"metadata": {"annotations": {SCALE_UP_DELAY_ANNOTATION: "2500ms"}}}
    assert rig.gate.released == 3
    assert not rig.gate.releasing()


async def test_pods_arriving_at_once_wait_for_the_scan() -> None:
    rig = Rig()
    task = asyncio.create_task(rig.gate.run())
    try:
        for uid in "abc":
            rig.arrive(uid, at=3.0)
            rig.unschedulable(uid, at=3.1)
        rig.now = 9.9
        await asyncio.sleep(0.02)
        assert rig.lifted() == []
        rig.now = 13.1  # one scan after the last loop moment (3.1)
        await asyncio.sleep(0.02)
        assert sorted(rig.lifted()) == ["p-a", "p-b", "p-c"]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_only_unschedulable_pods_are_released_and_only_once() -> None:
    rig = Rig()
    rig.arrive("a", at=1.0)
    rig.unschedulable("a", at=1.0)
    rig.arrive("b", at=3.5)  # no verdict yet: production's loop would not see it
    rig.unschedulable("c-never-seen", at=3.5)  # unknown and gated: no hold of its own
    rig.arrive("d", at=3.5)
    rig.gate.gone("d")  # bound meanwhile
    rig.unschedulable("a", at=3.6)
    await rig.settle()
    assert rig.lifted() == ["p-a"]
    rig.gate.seen(pod("a"))  # an older event of a, still annotated: not gated again
    rig.unschedulable("a", at=20.0)
    await rig.settle()
    assert rig.lifted() == ["p-a"]


async def test_an_ungated_pod_asks_the_holder_for_a_loop_at_once() -> None:
    rig = Rig()
    rig.arrive("a", at=1.0, gate=False)
    rig.unschedulable("a", at=1.0, gate=False)
    assert rig.calls == ["loop"]
    await rig.settle()
    assert rig.lifted() == []


async def test_a_pod_gone_before_its_release_is_skipped_quietly() -> None:
    def answer(method: str, path: str) -> Any:
        return ApiError(code=404, reason="NotFound", message=f"{path} not found")
    rig = Rig(answer=answer)
    rig.arrive("a", at=0.0)
    rig.unschedulable("a", at=2.5)
    await rig.settle()
    rig.arrive("b", at=2.6)
    rig.unschedulable("b", at=2.7)
    await rig.settle()
    assert rig.calls == ["hold", "loop"]
    assert not rig.gate.releasing()
    assert rig.lifted() == ["p-a"]  # a is gone, so b is the oldest and "very new"


async def test_a_lift_that_fails_is_tried_again_and_does_not_count_as_lifted() -> None:
    failures = [ApiError(code=500, reason="InternalError", message="etcd timeout")]

    def answer(method: str, path: str) -> Any:
        return failures.pop() if failures else {}
    rig = Rig(answer=answer)
    rig.arrive("a", at=0.0)
    rig.unschedulable("a", at=2.5)
    await rig.settle()
    assert "a" in rig.gate._waiting  # still gated: lifted at the next moment
    rig.arrive("b", at=12.0)
    rig.unschedulable("b", at=12.6)  # a (seen at 0) is still the oldest: both go
    await rig.settle()
    assert sorted(rig.lifted()) == ["p-a", "p-a", "p-b"]


async def test_a_wave_s_delays_all_end_at_one_instant_and_the_loop_is_asked_for_after_it(
        ) -> None:
    rig = Rig(lead_s=0.05, lead_per_pod_s=0.01)
    rig.gate.seen(pod("a", created="2026-11-28T09:59:58Z"))  # two seconds older than b
    rig.gate.seen(pod("b"))
    rig.unschedulable("b", at=1.0)  # both seen at 0: too new yet
    rig.unschedulable("a", at=3.0)
    await rig.settle()
    # 2.5 s after b's creation, plus 0.05 s and 0.01 s for each of two pods: CA's loop
    # that starts before that instant sees neither, one that starts after sees both
    assert rig.delays() == {"p-a": "4570ms", "p-b": "2570ms"}
    assert rig.calls == ["hold"]  # the instant has not come
    await asyncio.sleep(0.1)
    assert rig.calls == ["hold", "loop"]
    assert rig.gate.late == 0


async def test_a_lift_that_overruns_its_instant_is_counted_late() -> None:
    def answer(method: str, path: str) -> Any:
        rig.wall += 1.0  # a patch that takes a second
        return {}
    rig = Rig(answer=answer, lead_s=0.1)
    rig.arrive("a", at=0.0)
    rig.unschedulable("a", at=2.5)
    await rig.settle()
    assert rig.gate.late == 1
    assert rig.calls == ["hold", "loop"]  # asked for at once: the instant has passed


async def test_a_new_pod_while_lifted_ones_wait_for_nodes_asks_for_a_loop_without_a_lift(
        ) -> None:
    rig = Rig()
    rig.arrive("a", at=0.0)
    rig.unschedulable("a", at=2.5)  # lifted: CA's loop plans for it
    await rig.settle()
    assert rig.calls == ["hold", "loop"]
    rig.arrive("b", at=3.0)
    rig.unschedulable("b", at=3.1)  # "very new", but a waits for a node: CA loops for a
    await rig.settle()
    assert rig.calls == ["hold", "loop", "loop"]
    assert rig.lifted() == ["p-a"]  # b stays gated until its own moment
    assert rig.gate.probes == 1
    rig.gate.gone("a")  # a has its node
    rig.arrive("c", at=3.5)
    rig.unschedulable("c", at=3.6)  # nothing lifted waits: production's loop plans nothing
    await rig.settle()
    assert rig.calls == ["hold", "loop", "loop"]
    assert rig.gate.probes == 1
