"""A run's holding for the autoscaler, set up and torn down around following it.

Whether a run holds at all is decided once, at its start, and written to ``status.holding``
with the reason when it does not: the Simulation turned it off (``spec.clock``), the run is
not faster than real time (at speed 1 the autoscaler's latency is production's own), or
sk-ctrl has no autoscaler metrics to read (no ``--autoscaler-metrics-url``: no autoscaler in
the environment). The loops are CA's, or the Karpenter build's provisioner passes
(``autoscaler_loops.py``). While it holds, six tasks run: the
watches of unschedulable pods, of workloads owing pods and of nodes turning schedulable, the
holder, the scale-up gate (``scale_up_gate.py``; idle when the run's pods carry no gate), and
the publisher of the holds (those that ended, and the one in progress) into the
run's ConfigMap, where sk-cloudprov keeps its provisioning and readiness deadlines on the
run's clock with them, and the Karpenter build its clocks and node registrations
(``env/toolchain/karpenter/pace.go``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable

from simkube.cloudprov.config import CloudConfig
from simkube.core.kubeapi import CONFIG_MAPS, ApiError, KubeClient, merge_patch
from simkube.core.logs import get_logger
from simkube.core.simtime import BRIEF_HOLD_BOUND_S
from simkube.ctrl.context import SimulationContext
from simkube.ctrl.holding import Holder
from simkube.ctrl.owed_pods import OwedPodsWatch
from simkube.ctrl.readied_nodes import ReadiedNodesWatch
from simkube.ctrl.scale_up_gate import ScaleUpGate
from simkube.ctrl.timing import loop_wait_s, provision_time_s, scan_interval_s
from simkube.ctrl.unschedulable import UnschedulableWatch
from simkube.gen.simkube.driver.v1 import driver_pb2
from simkube.simulation.run_configmap import RUN_CONFIGMAP, Hold, holds_data
from simkube.simulation.spec import SimulationSpec

log = get_logger(__name__)
# The latest holds go out at most this often. A hold's start must reach sk-cloudprov
# before a deadline passes in it, and a hold lasts tenths of a second: keep it short.
PUBLISH_INTERVAL_S = 0.05
# Holds kept in the ConfigMap: those that ended within KEEP_S (longer than any provisioning
# delay a run faster than real time waits in wall time), at most KEEP_HOLDS of them.
KEEP_S = 600.0
KEEP_HOLDS = 200


def holding_status(ctx: SimulationContext, spec: SimulationSpec) -> tuple[bool, str]:
    """Whether this run holds, and the sentence ``status.holding`` shows."""
    if not spec.hold_for_autoscaler:
        return False, "off: spec.clock.holdForAutoscaler is false"
    if not spec.scale.faster_than_real_time:
        # The autoscaler's wall-clock latency is production's own at speed 1 (the ground
        # truth has it too), and below 1 it is shorter in trace time than production's.
        return False, "off: the run is not faster than real time"
    if ctx.deps.loops is None:
        return False, "off: sk-ctrl has no --autoscaler-metrics-url (no autoscaler to wait for)"
    return True, (f"on: each unschedulable pod holds the clock until the autoscaler "
                  f"finishes a loop, at most {spec.max_hold_s + loop_wait_s(spec):g}s")


class HeldPublisher:
    """The run's recent holds, and the one in progress, into its ConfigMap; the latest state
    wins, failures only log.

    The holder tells of its own holds (``began``, ``update``); the driver's progress
    (``observe``) of the brief holds sk-driver begins by itself as it applies work that makes
    pods, those the holder takes over (published from their start) and those nobody does."""

    def __init__(self, *, kube: KubeClient, namespace: str,
                 wall: Callable[[], float] = time.time) -> None:
        self._kube, self._namespace, self._wall = kube, namespace, wall
        self._holds: list[Hold] = []
        self._holding: Hold | None = None  # the hold in progress: began, expires
        self._driver_since = 0.0  # start of the driver's hold in progress, as last told
        self._wake = asyncio.Event()

    def began(self, hold: Hold) -> None:
        self._holding = hold
        self._wake.set()

    def update(self, hold: Hold) -> None:
        """A hold ended; one with the same start replaces the earlier word on it."""
        kept = [h for h in self._holds if h[1] >= hold[1] - KEEP_S and h[0] != hold[0]]
        self._holds = [*kept[-(KEEP_HOLDS - 1):], hold]
        self._holding = None
        self._wake.set()

    def observe(self, progress: driver_pb2.SimulationProgress) -> None:
        since = progress.held_since_unix_ms / 1000 if progress.held else 0.0
        if since == self._driver_since:
            return
        ended, self._driver_since = self._driver_since, since
        if ended and not any(h[0] == ended for h in self._holds):
            self.update((ended, self._wall()))  # the driver's own, untaken
        if since and self._holding is None:  # the holder's hold, when on, says more
            self.began((since, since + BRIEF_HOLD_BOUND_S))

    async def run(self) -> None:
        path = CONFIG_MAPS.path(namespace=self._namespace, name=RUN_CONFIGMAP)
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await merge_patch(self._kube, path, {
                    "data": holds_data(self._holds, holding=self._holding)})
            except ApiError as exc:  # 404: no sk-cloudprov here; else the next hold retries
                log.debug("holds not published", error=str(exc))
            await asyncio.sleep(PUBLISH_INTERVAL_S)


async def publish_start_hold(kube: KubeClient, *, namespace: str,
                             wall: Callable[[], float] = time.time) -> None:
    """A held run's start, as a brief hold in its ConfigMap, published just before sk-driver
    starts the run. sk-driver holds its clock by itself as it applies the trace's first
    pod-making work, but the publisher hears of that only once sk-ctrl follows the run,
    after the recorder's first list (30-260 ms of wall), and meanwhile the Karpenter build's
    clocks ran at the run's speed: at 20x its 1 s batch window closed after 50 ms, before
    the day's first pods had all come, and it bought four small nodes where the truth bought
    one large. The hold expires by itself after ``BRIEF_HOLD_BOUND_S``, as the driver's own
    does; the publisher's word replaces it."""
    now = wall()
    path = CONFIG_MAPS.path(namespace=namespace, name=RUN_CONFIGMAP)
    try:
        await merge_patch(kube, path, {"data": holds_data(
            [], holding=(now, now + BRIEF_HOLD_BOUND_S))})
    except ApiError as exc:  # 404: nobody reads the run's timing here
        log.debug("start hold not published", error=str(exc))


@contextlib.asynccontextmanager
async def holding(ctx: SimulationContext, *, spec: SimulationSpec, run: str,
                  config: CloudConfig | None) -> AsyncIterator[Holder | None]:
    """Hold run ``run``'s clock for the autoscaler while inside; the holder, or None."""
    on, sentence = holding_status(ctx, spec)
    await ctx.writer.write(holding=sentence)
    if not on or ctx.deps.loops is None:
        yield None
        return
    publisher = (HeldPublisher(kube=ctx.deps.kube, namespace=config.namespace)
                 if config is not None else None)

    async def warn(reason: str, message: str) -> None:
        await ctx.emit(reason, f"run {run}: {message}", warning=True)
    holder = Holder(driver=ctx.deps.driver, run=run, loops=ctx.deps.loops, clock=ctx.clock,
                    max_hold_s=spec.max_hold_s, loop_wait_s=loop_wait_s(spec), warn=warn,
                    on_held=publisher.update if publisher else lambda _hold: None,
                    on_hold=publisher.began if publisher else lambda _hold: None)
    gate = ScaleUpGate(kube=ctx.deps.kube, clock=ctx.clock.now, scan_s=scan_interval_s(spec),
                       hold=holder.expect, loop=holder.trigger,
                       planned_for_s=provision_time_s(spec), loops=ctx.deps.loops,
                       loop_bound_s=spec.max_hold_s + loop_wait_s(spec))
    watch = UnschedulableWatch(kube=ctx.deps.kube, prefix=spec.namespace_prefix,
                               on_new=gate.turned_unschedulable, on_created=holder.expect,
                               on_seen=gate.seen, on_gone=gate.gone)
    owed = OwedPodsWatch(kube=ctx.deps.kube, prefix=spec.namespace_prefix,
                         on_owed=holder.expect)
    holder.awaiting = lambda: owed.owing() or watch.awaiting() or gate.releasing()

    def node_step() -> None:
        watch.rejudge()
        holder.expect()
    readied = ReadiedNodesWatch(kube=ctx.deps.kube, on_step=node_step)
    tasks = [asyncio.create_task(task)
             for task in (watch.run(), owed.run(), readied.run(), holder.run(), gate.run())]
    if publisher is not None:
        tasks.append(asyncio.create_task(publisher.run()))
        ctx.on_progress = publisher.observe
    try:
        yield holder
    finally:
        ctx.on_progress = lambda _progress: None
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        log.info("holding ended", run=run, holds=holder.holds, capped=holder.capped,
                 skipped=holder.skipped,
                 held_s=round(holder.held_s, 3), gate_moments=gate.moments,
                 gate_released=gate.released, gate_relifted=gate.relifted, gate_let_go=gate.let_go,
                 gate_productive=gate.productive, gate_late=gate.late)
