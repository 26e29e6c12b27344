"""The scale-up gate: production's plan moments in trace time, and lifting the annotation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from simkube.core.kubeapi import ApiError
from simkube.core.replay_flags import GATED_DELAY, SCALE_UP_DELAY_ANNOTATION
from simkube.ctrl.autoscaler_loops import LoopCounts
from simkube.ctrl.scale_up_gate import ScaleUpGate
from tests.unit.core.kubeapi.fakes import ScriptedKube

pytestmark = pytest.mark.unit


CREATED = "2026-11-28T10:00:00Z"
CREATED_S = 1795860000.0  # CREATED as Unix time


def pod(uid: str, *, gate: bool = True, created: str = CREATED) -> dict[str, Any]:
    annotations = {SCALE_UP_DELAY_ANNOTATION: GATED_DELAY} if gate else {}
    return {"metadata": {"uid": uid, "name": f"p-{uid}", "namespace": "virtual-shop",
                         "creationTimestamp": created, "annotations": annotations}}


class FakeLoops:
    """CA's counters: each read finds two more loops finished (so a wait for the next loop
    ends at its second read) and the nodes added so far; from read ``pause_at`` on, reads
    wait while ``paused`` is clear."""

    def __init__(self) -> None:
        self.finished = 0
        self.scaled_up = 0
        self.reads = 0
        self.pause_at: int | None = None
        self.paused = asyncio.Event()

    async def read(self) -> LoopCounts:
        self.reads += 1
        if self.pause_at is not None and self.reads >= self.pause_at:
            await self.paused.wait()
        self.finished += 2
        return LoopCounts(started=0, finished=self.finished, scaled_up=self.scaled_up)


class Rig:
    """A gate on a trace clock the test moves, recording holds, loops and patches."""

    def __init__(self, *, answer: Any = None, lead_s: float = 0.0,
                 lead_per_pod_s: float = 0.0) -> None:
        self.now = 0.0
        self.wall = CREATED_S + 2.5
        self.kube = ScriptedKube(answer=answer)
        self.calls: list[str] = []
        self.loops = FakeLoops()
        self.gate = ScaleUpGate(kube=self.kube,  # type: ignore[arg-type]
                                clock=lambda: self.now, scan_s=10.0,
                                hold=lambda: self.calls.append("hold"),
                                loop=lambda: self.calls.append("loop"),
                                loops=self.loops, loop_bound_s=5.0,
                                wall=lambda: self.wall, lead_s=lead_s,
                                lead_per_pod_s=lead_per_pod_s)


    def arrive(self, uid: str, *, at: float, gate: bool = True) -> None:
        self.now = at
        self.gate.seen(pod(uid, gate=gate))

    def unschedulable(self, uid: str, *, at: float, gate: bool = True) -> None:
        self.now = at
        self.gate.turned_unschedulable(pod(uid, gate=gate))

    async def settle(self) -> None:
        for _ in range(20):
            await asyncio.sleep(0)

    def patches(self) -> list[tuple[str, str | None]]:
        """(pod name, delay) of each patch, in order."""
        return [(path.rsplit("/", 1)[-1],
                 body["metadata"]["annotations"][SCALE_UP_DELAY_ANNOTATION])
                for method, path, body, *_ in self.kube.requests if method == "PATCH"]

    def delays(self) -> dict[str, str | None]:
        return {name: delay for name, delay in self.patches() if delay != GATED_DELAY}

    def lifted(self) -> list[str]:
        return [name for name, delay in self.patches() if delay != GATED_DELAY]

    def regated(self) -> list[str]:
        return [name for name, delay in self.patches() if delay == GATED_DELAY]


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
    assert sorted(rig.regated()) == ["p-a", "p-b", "p-c"]  # after the loop, no node yet
    body = rig.kube.requests[0][2]
    assert body == {"metadata": {"annotations": {SCALE_UP_DELAY_ANNOTATION: "2500ms"}}}
    assert rig.gate.released == 3
    assert not rig.gate.releasing()


async def test_a_pending_pods_deletion_is_a_plan_moment_as_in_production() -> None:
    rig = Rig()
    for uid in "ab":
        rig.arrive(uid, at=0.1)
        rig.unschedulable(uid, at=0.2)
        rig.gate.seen({**pod(uid), "status": {"conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
             "message": "0/3 nodes are available"}]}})
    await rig.settle()
    assert rig.lifted() == []  # "very new" at their verdicts' moments
    rig.now = 6.0  # a Deployment scaled down deletes b: CA's pod observer starts a loop
    deleting = {**pod("b"), "status": {"conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
         "message": "0/3 nodes are available"}]}}
    deleting["metadata"]["deletionTimestamp"] = "2026-11-28T10:00:06Z"
    rig.gate.seen(deleting)
    await rig.settle()
    assert sorted(rig.lifted()) == ["p-a", "p-b"]  # a scan before the next timer moment
    assert rig.calls == ["hold", "loop"]


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
    assert rig.regated() == []  # and not gated again


async def test_a_lift_that_fails_is_tried_again_and_does_not_count_as_lifted() -> None:
    failures = [ApiError(code=500, reason="InternalError", message="etcd timeout")]

    def answer(method: str, path: str) -> Any:
        return failures.pop() if failures else {}
    rig = Rig(answer=answer)
    rig.arrive("a", at=0.0)
    rig.unschedulable("a", at=2.5)
    await rig.settle()
    assert "a" in rig.gate.pods.waiting  # still gated: lifted at the next moment
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
    assert rig.calls == ["hold", "loop"]  # at once: the instant has passed


async def test_planned_pods_are_gated_between_moments_and_lifted_again_at_each(
        ) -> None:
    rig = Rig()
    task = asyncio.create_task(rig.gate.run())
    try:
        rig.arrive("a", at=0.0)
        rig.unschedulable("a", at=2.5)  # lifted: CA's loop plans for it
        await asyncio.sleep(0.02)
        assert rig.calls == ["hold", "loop"]
        assert rig.patches() == [("p-a", "2500ms"), ("p-a", GATED_DELAY)]
        rig.now = 9.0  # CA's own loops meanwhile leave a out: no moment of production's
        await asyncio.sleep(0.02)
        assert len(rig.patches()) == 2
        rig.arrive("b", at=10.0)
        rig.unschedulable("b", at=10.1)  # a moment: b is "very new", a is packed afresh
        await asyncio.sleep(0.02)
        assert rig.calls == ["hold", "loop"] * 2
        assert rig.lifted() == ["p-a", "p-a"]  # b stays gated until its own age
        assert rig.gate.relifted == 1
        assert rig.gate.released == 1
        rig.gate.gone("a")  # a has its node
        rig.now = 20.2  # the scan: b is due (10.1 s old), a is not lifted again
        await asyncio.sleep(0.02)
        assert rig.lifted() == ["p-a", "p-a", "p-b"]
        assert rig.regated() == ["p-a", "p-a", "p-b"]
        assert (rig.gate.relifted, rig.gate.released) == (1, 2)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_a_pod_bound_while_its_wave_loops_is_not_gated_again() -> None:
    rig = Rig()
    rig.loops.pause_at = 3  # before the lift, the loop's target: CA's loop is not over
    for uid in "ab":
        rig.arrive(uid, at=0.0)
    rig.unschedulable("a", at=1.0)  # "very new"
    rig.unschedulable("b", at=2.5)  # one wave: a and b
    await rig.settle()
    assert sorted(rig.lifted()) == ["p-a", "p-b"]
    assert rig.gate.releasing()  # the holder keeps the clock until the loop is over
    rig.gate.gone("a")  # bound on an existing node
    rig.loops.paused.set()
    await rig.settle()
    assert rig.regated() == ["p-b"]
    assert not rig.gate.releasing()
    rig.unschedulable("c-unknown", at=3.0)  # b waits: a moment lifts it again
    await rig.settle()
    assert rig.lifted()[-1] == "p-b"


async def test_a_failed_lift_of_a_planned_pod_keeps_it_planned() -> None:
    refuse = [False]

    def answer(method: str, path: str) -> Any:
        if refuse[0]:
            return ApiError(code=500, reason="InternalError", message="etcd timeout")
        return {}
    rig = Rig(answer=answer)
    rig.arrive("a", at=0.0)
    rig.unschedulable("a", at=2.5)
    await rig.settle()
    refuse[0] = True
    rig.arrive("b", at=3.0)
    rig.unschedulable("b", at=3.0)  # a moment: a's lift again fails
    await rig.settle()
    assert "a" in rig.gate.pods.planned
    assert "a" not in rig.gate.pods.waiting
    refuse[0] = False
    rig.arrive("c", at=6.0)
    rig.unschedulable("c", at=6.1)  # a moment: a again, and b (3.1 s old) with c
    await rig.settle()
    assert sorted(rig.lifted()[-3:]) == ["p-a", "p-b", "p-c"]
    assert set(rig.gate.pods.planned) == {"a", "b", "c"}
    assert not rig.gate.pods.waiting


async def test_a_pod_planned_for_longer_than_a_node_takes_is_left_lifted() -> None:
    rig = Rig()
    rig.gate._planned_for_s = 30.0  # CA's max-node-provision-time, shortened
    rig.arrive("a", at=0.0)
    rig.unschedulable("a", at=2.5)  # planned at 2.5
    await rig.settle()
    rig.arrive("b", at=20.0)
    rig.unschedulable("b", at=20.0)  # 17.5 s on: lifted again, and gated again
    await rig.settle()
    assert rig.regated() == ["p-a", "p-a"]
    rig.arrive("c", at=40.0)
    rig.unschedulable("c", at=40.0)  # 37.5 s on: lifted, then let go (no node will come)
    await rig.settle()
    assert rig.lifted().count("p-a") == 3
    assert rig.regated().count("p-a") == 2
    assert rig.gate.let_go == 1
    assert "a" not in rig.gate.pods.planned
    rig.arrive("d", at=50.0)
    rig.unschedulable("d", at=50.0)  # b and c are lifted again; a is not
    await rig.settle()
    assert rig.lifted().count("p-a") == 3


async def test_a_wave_whose_loop_scaled_up_makes_the_next_moment_at_once() -> None:
    """Production's CA loops again at once after a loop that added nodes: a wave needing
    two groups gets its second plan then, not a scan later."""
    rig = Rig()
    rig.loops.scaled_up = 3
    rig.arrive("a", at=0.0)
    rig.arrive("b", at=0.0)
    rig.unschedulable("a", at=1.0)
    rig.loops.pause_at = 3
    rig.unschedulable("b", at=2.5)  # the wave
    await rig.settle()
    rig.loops.scaled_up = 5  # CA's loop planned large +2
    rig.loops.paused.set()
    await rig.settle()
    assert rig.gate.productive == 1
    assert rig.lifted().count("p-a") == 2  # lifted again at once, with no trigger or scan
    assert rig.gate.relifted == 2
    await rig.settle()
    assert rig.gate.productive == 1  # that loop added nothing: production waits for a trigger
    assert rig.lifted().count("p-a") == 2


async def test_the_moment_after_a_productive_loop_plans_new_pods_at_once() -> None:
    """Production's age test takes the oldest pod its packing leaves over: right after a
    loop that bought nodes for part of a wave, a wave pod still waiting is one, so a pod
    that arrived a moment ago is planned with it, not after its own 2 s."""
    rig = Rig()
    rig.loops.scaled_up = 3
    rig.arrive("a", at=0.0)
    rig.unschedulable("a", at=2.5)  # the wave
    rig.loops.pause_at = 3
    await rig.settle()
    rig.arrive("n", at=2.9)
    rig.unschedulable("n", at=3.0)  # 0.1 s old: a scan or trigger moment would wait for it
    rig.loops.scaled_up = 5  # the wave's loop bought nodes; "a" still waits for one
    rig.loops.paused.set()
    await rig.settle()
    assert rig.gate.productive == 1
    assert rig.lifted().count("p-n") == 1  # planned at the moment made at once
    assert rig.lifted().count("p-a") == 2


async def test_a_scan_moment_still_waits_for_a_new_pods_age() -> None:
    """Without a loop that bought nodes, nothing is known to be left over: a pod 0.5 s old
    waits, as production's loop does when every left-over pod is new."""
    rig = Rig()
    rig.arrive("a", at=0.0)
    rig.unschedulable("a", at=2.5)  # planned; its loop bought nothing
    await rig.settle()
    rig.arrive("n", at=12.0)
    rig.unschedulable("n", at=12.0)
    rig.now = 12.5
    rig.gate._moment(12.5)  # the scan
    await rig.settle()
    assert "p-n" not in rig.lifted()
    assert rig.gate.productive == 0
