"""Holding a run's trace clock while the autoscaler reacts to what the replay just did.

At speed 20 one CA loop of 0.1-0.3 s of wall time is 2-6 s of trace time, so a pod the replay
makes unschedulable waits longer (in trace time) for its node than in the recorded cluster.
When a pod of the run is newly seen unschedulable (``unschedulable.py``), the holder reads how
many loops CA has started (``autoscaler_loops.py``), holds sk-driver's clock, and releases it
once a loop that started after that has finished: CA has seen the pod and asked for a node.
Triggers during a hold extend it to a loop after the newest one. The scheduler's verdict
before that is wall time too (a tenth of a second is 2 s of trace at speed 20), so a pod the
replay creates holds the clock until the scheduler has ruled on it (``awaiting``); if it rules
"unschedulable", the hold goes on until CA's loop, as above. Before that, the pods themselves
come from controllers (a scaled Deployment, a new Job) with wall latency: a workload that
owes pods holds the clock until they exist (``owed_pods.py``). After it, a node turning
schedulable while pods wait holds the clock until the scheduler has looked at them again
(``readied_nodes.py``). A hold ends when all are done. With Karpenter a loop is a pass of
its provisioner, which the project's Karpenter build counts, and whose clocks follow the
holds published in the run's ConfigMap (``autoscaler_loops.py``, ``holding_setup.py``).

Bounded, so a stuck or absent CA cannot stall a run: one hold lasts at most ``max_hold_s``
of wall time beyond ``loop_wait_s``, the time a healthy CA may take to start a loop (two of
its scan intervals when pods do not trigger its loops: ``autoscaler_loops.py``); no hold
starts while holds already took ``max_share`` of the run's wall time beyond a first
``SHARE_ALLOWANCE_S`` (a run's first holds, for its initial pods, come before any wall time
has passed to share, and a short run at speed 20 lasts only seconds);
unreadable metrics mean no hold (warned once per run); and sk-driver ends a hold by itself
after ``expires_after`` if this process dies mid-hold. Each hold's start and that expiry go
to ``on_hold`` and, at its release, its wall-clock interval to ``on_held``: sk-cloudprov
lets provisioning and readiness deadlines pass at real time while a hold is on, and moves
them back by the slip of each hold after the instance's request.

A hold does not stop trace time: it runs the replay at real time (``TimeScale.held_speed``),
the speed the recording was made at, so the controllers', scheduler's and CA's wall
latencies inside it are the recorded cluster's trace latencies (stopping it made a burst's
pods, created over half a second in the recording, reach CA's loop as one batch).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from simkube.core.logs import get_logger
from simkube.ctrl.autoscaler_loops import LoopSource, LoopsUnavailableError
from simkube.ctrl.driving import Driver, DriverError, report_progress
from simkube.gen.simkube.driver.v1 import driver_pb2
from simkube.simulation.run_configmap import Hold
from simkube.simulation.trace_clock import TraceClock

log = get_logger(__name__)
POLL_S = 0.03  # between reads of CA's metrics during a hold
SETTLE_POLL_S = 0.005  # between looks at the scheduler's verdicts (in memory, cheap)
MAX_SHARE = 0.5  # of the run's wall time holds may take: the run goes on at half speed or more
SHARE_ALLOWANCE_S = 10.0  # wall seconds of holds allowed beyond that share
EXPIRY_MARGIN_S = 3.0  # the driver's own bound, beyond ours
Warn = Callable[[str, str], Awaitable[None]]  # (reason, message): a Warning Event


class Holder:
    def __init__(self, *, driver: Driver, run: str, loops: LoopSource, clock: TraceClock,
                 max_hold_s: float, warn: Warn, on_held: Callable[[Hold], None],
                 loop_wait_s: float = 0.0,
                 on_hold: Callable[[Hold], None] = lambda _hold: None,
                 poll_s: float = POLL_S, max_share: float = MAX_SHARE,
                 share_allowance_s: float = SHARE_ALLOWANCE_S,
                 monotonic: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time,
                 awaiting: Callable[[], bool] = lambda: False) -> None:
        self._driver, self._run, self._loops, self._clock = driver, run, loops, clock
        self._poll_s, self._max_share = poll_s, max_share
        self._allowance_s = share_allowance_s
        self._bound_s = max_hold_s + loop_wait_s  # one hold's wall time, at most
        self._warn, self._on_held, self._monotonic = warn, on_held, monotonic
        self._on_hold = on_hold
        self._wall = wall  # Unix time, for the holds sk-cloudprov reads
        self._triggered = asyncio.Event()
        self._loop_wanted = False  # a pod turned unschedulable since the last target
        self.awaiting = awaiting  # pods owed or without a verdict (settable)
        self._warned: set[str] = set()
        self._started = monotonic()
        self.held_s = 0.0  # the driver's held_ms at the last release
        self.holds = 0
        self.capped = 0  # holds that ended at max_hold_s
        self.skipped = 0  # holds not begun: holds had taken their share of the run

    def trigger(self) -> None:
        """A pod newly unschedulable: hold until a CA loop that saw it has finished."""
        self._loop_wanted = True
        self._triggered.set()

    def expect(self) -> None:
        """Work is on its way (a controller owes pods, a pod awaits the scheduler's verdict):
        hold until ``awaiting`` says it has come."""
        self._triggered.set()

    async def run(self) -> None:
        self._started = self._monotonic()
        while True:
            await self._triggered.wait()
            self._triggered.clear()
            share = self._max_share * (self._monotonic() - self._started)
            if self.held_s > share + self._allowance_s:
                self.skipped += 1
                log.debug("hold skipped: holds took their share of the run", run=self._run)
                continue
            await self._hold()

    async def _target(self) -> int | None:
        """The count of finished loops that means "a loop that started now has finished"."""
        try:
            return (await self._loops.read()).after_now()
        except LoopsUnavailableError as exc:
            await self._warn_once("AutoscalerMetricsUnavailable",
                                  f"the clock is not held for the autoscaler: {exc}")
            return None

    async def _hold(self) -> None:
        target = None
        if self._loop_wanted:
            self._loop_wanted = False
            target = await self._target()
        if target is None and not self.awaiting():
            return  # nothing to wait for: judged already, or CA's loops cannot be read
        bound_s = self._bound_s + EXPIRY_MARGIN_S
        expiry = f"{round(bound_s * 1000)}ms"
        began = self._wall()
        try:
            progress = await self._driver.hold(self._run, expires_after=expiry)
        except DriverError as exc:  # the run has ended, or the driver is away: no hold
            log.info("hold refused", run=self._run, error=exc.message)
            return
        self._report(progress)
        if progress.held_since_unix_ms:  # the driver's word: its own hold, if taken over,
            began = progress.held_since_unix_ms / 1000  # and the same start observe() sees
        self._on_hold((began, self._wall() + bound_s))
        self.holds += 1
        try:
            reached = await self._wait_for(target)
        finally:
            await self._release(began=began)
        if not reached:
            self.capped += 1
            await self._warn_once("AutoscalerSlow", f"The autoscaler did not finish a loop "
                                  f"within {self._bound_s:g}s of a hold; holds stop there")

    async def _wait_for(self, target: int | None) -> bool:
        """Until every pod has the scheduler's verdict and CA has finished loop ``target``
        (True), or the hold's bound has passed."""
        deadline = self._monotonic() + self._bound_s
        last = -1
        while self._monotonic() < deadline:
            self._triggered.clear()  # what triggers now is waited for here
            if self._loop_wanted:  # a newer pod: wait for a loop that saw it too
                self._loop_wanted = False
                newer = await self._target()
                target = newer if target is None else max(target, newer or target)
            if target is not None:
                try:
                    counts = await self._loops.read()
                except LoopsUnavailableError:
                    return False
                if counts.finished < last:  # CA restarted: the loop we wanted is gone
                    return True
                last = counts.finished
                if counts.finished >= target:
                    target = None
            if target is None and not self.awaiting():
                return True
            await asyncio.sleep(self._poll_s if target is not None else SETTLE_POLL_S)
        return False

    async def _release(self, *, began: float) -> None:
        try:
            progress = await self._driver.release(self._run)
        except DriverError as exc:  # the driver's expiry ends the hold
            log.warning("release failed; the driver's expiry ends the hold", run=self._run,
                        error=exc.message)
            return
        self._report(progress)
        self.held_s = progress.held_ms / 1000
        self._on_held((began, self._wall()))

    def _report(self, progress: driver_pb2.SimulationProgress) -> None:
        report_progress(self._clock, progress)

    async def _warn_once(self, reason: str, message: str) -> None:
        if reason not in self._warned:
            self._warned.add(reason)
            log.warning("holding for the autoscaler", run=self._run, reason=reason,
                        message=message)
            await self._warn(reason, message)
