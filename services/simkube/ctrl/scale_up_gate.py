"""Production's pod-age wait, played on a held run's trace clock: when CA may plan for a pod.

CA 1.36 plans nothing in a loop whose unschedulable pods are all younger than 2 s
(``unschedulablePodTimeBuffer``). With frequent loops (production's default) a loop starts
when a pod turns unschedulable, at once after a loop that scaled up, and otherwise a scan
interval after the previous one: pods arriving in waves are planned wave by wave, 2-3 s
after the first; pods arriving at once, a scan after them. A run faster than real time
cannot keep that wait on CA's wall clock, so its CA bypasses it (``core/replay_flags.py``).

Instead the driver gives every pod CA's ``pod-scale-up-delay`` annotation (ten years: out of
scale-up), and this gate plays production's loop moments in trace time: when a gated pod
turns unschedulable, when a pod ruled unschedulable under 10 s before changes (its verdict's
words, or its deletion begins: CA's pod observer starts a loop for either), a scan interval
after the previous moment, and at once after a moment
whose CA loop added nodes (CA's ``scaled_up_nodes_total``) while pods of it still wait. At a
moment whose oldest never-lifted unschedulable pod was seen ``AGE_S`` earlier (at once, at
that moment made at once: a wave pod still without a node is older), the gate holds
the clock, lifts the annotation from those pods at one wall instant (``scale_up_lifts.py``,
so no CA loop sees part of a wave) and asks the holder for a CA loop that started after it.

Once that loop has seen a wave, its pods still without a node are gated again and lifted
again at every later moment (``planned``): CA packs pending pods onto upcoming nodes afresh
each loop, in no set order, and a packing that leaves one over buys another node. A replay's
CA loops every ``GATED_SCAN_MS`` of *wall* time (``core/replay_flags.py``), many times per
production loop while the clock is held, so without this it drew more packings than
production and bought nodes production did not. A pod still without a node ``planned_for_s``
after its first plan (CA's max-node-provision-time) is left lifted: no node is coming for it.

What this leaves, in trace time (docs/simulated-time.md has the measurements): a trigger
during production's loop waits for that loop (0.1-0.3 s), here it does not; new pods due at
a scan or trigger moment where planned ones are lifted wait for their own age, where
production's loop plans for them at once if a planned pod is left over (the gate knows one
is only right after a loop that bought nodes for part of a wave); gating again is a patch
per pod right after a loop, not one instant, so a CA loop starting within those
milliseconds sees part of the wave gated; production counts as "oldest" only pods its loop
cannot fit on upcoming nodes, the gate only pods never lifted.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from simkube.core.kubeapi import KubeClient
from simkube.core.logs import get_logger
from simkube.ctrl.autoscaler_loops import (
    LoopCounts,
    LoopSource,
    LoopsUnavailableError,
    next_loop_finished,
)
from simkube.ctrl.gated_pods import GatedPods, gated
from simkube.ctrl.pod_changes import ChangeWatch
from simkube.ctrl.scale_up_lifts import LEAD_PER_POD_S, LEAD_S, GatedPod, lift_wave, regate_wave

log = get_logger(__name__)
AGE_S = 2.0  # CA's unschedulablePodTimeBuffer (30 s for GPU pods is not played)
POLL_S = 0.005  # wall seconds between looks at the trace clock for the next scan moment
PLANNED_FOR_S = 900.0  # CA's max-node-provision-time default, trace seconds


class ScaleUpGate:
    """Lifts CA's scale-up gate from waiting pods at production's plan moments."""

    def __init__(self, *, kube: KubeClient, clock: Callable[[], float], scan_s: float,
                 hold: Callable[[], None], loop: Callable[[], None],
                 loops: LoopSource | None = None, loop_bound_s: float = 0.0,
                 planned_for_s: float = PLANNED_FOR_S, age_s: float = AGE_S, poll_s: float = POLL_S,
                 wall: Callable[[], float] = time.time, lead_s: float = LEAD_S,
                 lead_per_pod_s: float = LEAD_PER_POD_S) -> None:
        self._kube, self._clock, self._scan_s, self._age_s = kube, clock, scan_s, age_s
        self._hold, self._loop, self._poll_s = hold, loop, poll_s
        self._loops, self._loop_bound_s = loops, loop_bound_s  # None: nothing waited for
        self._planned_for_s = planned_for_s
        self._wall, self._lead_s, self._lead_per_pod_s = wall, lead_s, lead_per_pod_s
        self.pods = GatedPods()
        self._changes = ChangeWatch()
        self._last_moment_s = clock()
        self._releases = 0  # in progress
        self._tasks: set[asyncio.Task[None]] = set()
        self.moments = 0
        self.released = 0  # pods lifted for the first time
        self.relifted = 0  # lifts of pods a loop had seen, gated again since
        self.late = 0  # lifts whose patches were not all in before their instant
        self.let_go = 0  # planned pods left lifted: still without a node after planned_for_s
        self.productive = 0  # moments made at once after a wave's loop scaled up

    def releasing(self) -> bool:
        """A release is under way: the holder keeps the clock held until it is done."""
        return self._releases > 0

    def seen(self, pod: dict[str, Any]) -> None:
        """A pending pod without a node, listed or changed. A change production's pod
        observer would start a loop for is a plan moment (``ChangeWatch``)."""
        at = self._clock()
        if self._changes.rouses_ca(pod, at=at):
            self._moment(at)
        self.pods.seen(pod, at=at)

    def gone(self, uid: str) -> None:
        """Bound to a node, or deleted."""
        self.pods.gone(uid)
        self._changes.gone(uid)

    def turned_unschedulable(self, pod: dict[str, Any]) -> None:
        """The scheduler ruled ``pod`` unschedulable: production's CA starts a loop."""
        uid = str((pod.get("metadata") or {}).get("uid") or "")
        self._changes.turned_unschedulable(uid, at=self._clock())
        waiting = self.pods.waiting.get(uid)
        if waiting is None:
            if uid not in self.pods.released and not gated(pod):
                self._loop()  # CA sees it at once: hold for a loop that saw it
            return
        waiting.unschedulable = True
        self._moment(self._clock())

    async def run(self) -> None:
        """Production's scan: a loop moment one scan interval after the previous one."""
        try:
            while True:
                now = self._clock()
                if now >= self._last_moment_s + self._scan_s:
                    self._moment(now)
                await asyncio.sleep(self._poll_s)
        finally:
            for task in self._tasks:
                task.cancel()

    def _moment(self, at: float, *, left_over: bool = False) -> None:
        """A loop moment at ``at``. ``left_over``: pods lifted before are known to be left
        over by production's packing, so its age test passes and the due pods go at once."""
        self._last_moment_s = at
        self.moments += 1
        due = self.pods.take_due(at=at, age_s=0.0 if left_over else self._age_s)
        relifted = set(self.pods.planned)  # production's loop packs them afresh
        wave = self.pods.take_wave(due, at=at)
        if not wave:
            return
        self.relifted += len(relifted)
        self._releases += 1
        self._hold()
        task = asyncio.create_task(self._release(wave, relifted=relifted, at=at))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _release(self, pods: dict[str, GatedPod], *, relifted: set[str],
                       at: float) -> None:
        try:
            before = await self._counts()
            lift = await lift_wave(self._kube, pods, wall=self._wall, lead_s=self._lead_s,
                                   lead_per_pod_s=self._lead_per_pod_s)
            for uid in lift.gone:
                self.pods.gone(uid)
            for uid in lift.failed:  # still gated: lifted at the next moment
                self.pods.lift_failed(uid, pods[uid], relifted=uid in relifted)
            self.released += len(pods) - len(relifted)
            if lift.late:
                self.late += 1
                log.warning("scale-up gate lifted late: a CA loop may plan for part of it",
                            pods=len(pods), spare_ms=round(lift.spare_s * 1000))
            log.info("scale-up gate lifted", pods=len(pods), relifted=len(relifted),
                     trace_s=round(at, 3), lifted_at_s=round(self._clock(), 3),
                     spare_ms=round(lift.spare_s * 1000))
            await asyncio.sleep(max(0.0, lift.spare_s))
            self._loop()  # a CA loop that starts from now on sees them all
            after = await self._loop_finished()
            await self._regate([uid for uid in pods if uid not in lift.failed])
            if (before is not None and after is not None and after.scaled_up > before.scaled_up
                    and any(uid in self.pods.planned for uid in pods)):
                # Production's CA loops again at once, and its age test takes the oldest
                # pod its packing leaves over: a wave pod still waiting for a node is one.
                self.productive += 1
                self._moment(self._clock(), left_over=True)
        finally:
            self._releases -= 1

    async def _counts(self) -> LoopCounts | None:
        if self._loops is None:
            return None
        try:
            return await self._loops.read()
        except LoopsUnavailableError:
            return None

    async def _loop_finished(self) -> LoopCounts | None:
        """Once a CA loop started from now on has finished: CA's counters then."""
        if self._loops is None:
            return None
        return await next_loop_finished(self._loops, bound_s=self._loop_bound_s)

    async def _regate(self, uids: list[str]) -> None:
        """The wave's pods still without a node: out of CA's scale-up until the next moment;
        those planned for longer than ``planned_for_s`` stay lifted, and are let go."""
        self.let_go += self.pods.let_go(uids, now=self._clock(),
                                        planned_for_s=self._planned_for_s)
        wave = self.pods.in_wave
        pods = {uid: wave[uid] for uid in uids if uid in wave}
        if not pods:
            return
        patched = await regate_wave(self._kube, pods)
        for uid in patched.gone:
            self.pods.gone(uid)
        self.pods.planned_again(pods)  # also those whose patch failed: still lifted
