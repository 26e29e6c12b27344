"""One simulation from start to cleanup: the state machine callers see.

``start`` does everything that can be refused (CRD, name, namespaces, root) before the replay
begins, so a refused start leaves nothing behind. The replay then runs as a task; its
progress is observable (``snapshot``, ``changes``) and mirrored onto the root's status.
``cancel`` stops the replay first (so nothing is applied behind the cleanup's back), then
deletes the root and waits until garbage collection has removed everything it owned.

States: PENDING → RUNNING ⇄ PAUSED → SUCCEEDED | FAILED; any of them → CANCELLING →
CANCELLED. A hold (sk-ctrl's, or sk-driver's own as it applies work that makes pods:
``holds.py``) slows the clock to real time without changing the state. A rejected object is
a recorded failure, not a failed simulation.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
import traceback
from collections.abc import AsyncIterator, Callable

from simkube.core.errors import SimkubeError
from simkube.core.kubeapi import ApiError, Discovery, KubeClient
from simkube.core.logs import get_logger
from simkube.core.simtime import BRIEF_HOLD_BOUND_S, BRIEF_HOLD_S
from simkube.driver import namespaces, roots
from simkube.driver.applying import Applier
from simkube.driver.clock import ReplayClock
from simkube.driver.cronjobs import CronFirer
from simkube.driver.errors import SimulationStateError
from simkube.driver.holds import Holds
from simkube.driver.lifecycles import Assignment, LifetimePlan
from simkube.driver.options import SimulationOptions
from simkube.driver.pod_work import PodWork
from simkube.driver.podtimer import PodTimer
from simkube.driver.progress import FailureRecord, Progress, ProgressSnapshot, SimulationState
from simkube.driver.replaying import Replayer
from simkube.driver.rewriting import Rewriter, RootRef
from simkube.driver.scanning import TraceScan
from simkube.driver.signals import Signal
from simkube.driver.usage import UsagePlayer
from simkube.driver.usage_objects import workload_key
from simkube.driver.victim_marking import VictimMarker
from simkube.driver.victims import VictimPlan
from simkube.trace import KubeObject, ObjectRef, TraceSource

log = get_logger(__name__)
STATUS_INTERVAL = 2.0
WATCH_READY_TIMEOUT = 10.0
HOLD_EXPIRY_S = 10.0  # a Hold without expires_after ends by itself after this long


class Simulation:
    def __init__(self, *, options: SimulationOptions, source: TraceSource, scan: TraceScan,
                 kube: KubeClient, gc_timeout: float = roots.GC_TIMEOUT) -> None:
        self.options = options
        self.name = options.name
        self.source = source
        self.scan = scan
        self.clock = ReplayClock(scale=options.scale)
        self.progress = Progress(name=options.name, speed=options.scale.speed,
                                 events_total=scan.events_total,
                                 trace_length_ms=scan.length_ms)
        self.root: RootRef | None = None
        self._kube = kube
        self._gc_timeout = gc_timeout
        self._plan = LifetimePlan(list(scan.lifecycles), scale=options.scale,
                                  jitter_ms=options.pod_timing.lifetime_jitter_ms)
        self._victims = VictimPlan(scan.lifecycles, start_ms=scan.start_ms)
        self._marker = VictimMarker(kube=kube, plan=self._victims)
        self._task: asyncio.Task[None] | None = None
        self._cleanup: asyncio.Task[None] | None = None
        self._cleanup_expected = options.cleanup
        self._cleanup_done = False
        self._changed = Signal()
        self._started_at: float | None = None
        self._ended_at: float | None = None
        self._hold_changed = Signal()
        self.holds = Holds(clock=self.clock, simulation=self.name, changed=self._held)
        self._pod_work = PodWork(hold=self._hold_for_pod_work)
        self.usage: UsagePlayer | None = None  # while recorded usage plays (its write count)

    # -- observing ---------------------------------------------------------------------

    @property
    def state(self) -> SimulationState:
        return self.progress.state

    def snapshot(self) -> ProgressSnapshot:
        if self.clock.started and self.state in (SimulationState.RUNNING,
                                                 SimulationState.PAUSED):
            self.progress.trace_time_ms = int(min(self.clock.trace_offset_ms(),
                                                  self.scan.length_ms))
        end = self._ended_at or time.monotonic()
        wall = 0 if self._started_at is None else int((end - self._started_at) * 1000)
        started = self.clock.started
        paused = int(self.clock.paused_seconds() * 1000) if started else 0
        held = int(self.clock.held_seconds() * 1000) if started else 0
        return self.progress.snapshot(wall_time_ms=wall, paused_ms=paused, held_ms=held,
                                      held=self.clock.held,
                                      held_since_unix_ms=int(self.holds.since_unix * 1000))

    def _notify(self) -> None:
        self._changed.fire()

    def _held(self) -> None:
        """A hold began or ended: watchers hear at once, not an interval later, since
        sk-ctrl's trace clock and the holds it publishes for sk-cloudprov follow it."""
        self._hold_changed.fire()
        self._notify()

    async def changes(self, *, interval: float) -> AsyncIterator[ProgressSnapshot]:
        """The current snapshot, then one per change at most every ``interval`` seconds,
        ending with the final state (and again once cleaned up, if that is still to come)."""
        while True:
            changed, held = self._changed.arm(), self._hold_changed.arm()
            snapshot = self.snapshot()
            yield snapshot
            if snapshot.state.finished and (self._cleanup_done or not self._cleanup_expected):
                return
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(interval):
                    await held.wait()
            if not changed.is_set():
                # Without news, still every second or so: the clock and wall time move on.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(max(interval, 1.0)):
                        await changed.wait()

    # -- running -----------------------------------------------------------------------

    async def start(self) -> RootRef:
        """Create the root and begin the replay; raises (having created nothing) if refused."""
        await roots.ensure_crd(self._kube)
        names = [f"{self.options.prefix}-{ns}" for ns in self.scan.namespaces]
        await namespaces.check_free(self._kube, names)
        spec = {"trace": self.source.name, "speed": self.options.scale.speed,
                "namespacePrefix": self.options.prefix,
                "driver": f"{socket.gethostname()}/{os.getpid()}"}
        if self.options.duration_ms is not None:
            spec["durationMs"] = self.options.duration_ms
        self.root = await roots.create_root(self._kube, name=self.name, spec=spec)
        self.progress.root_uid = self.root.uid
        log.info("simulation started", simulation=self.name, trace=self.source.name,
                 events=self.scan.events_total, speed=self.options.scale.speed)
        self._task = asyncio.create_task(self._run(self.root))
        return self.root

    async def wait(self) -> ProgressSnapshot:
        """The final snapshot, once the replay (and any cleanup) has finished."""
        if self._task is not None:
            await asyncio.wait({self._task})
        if self._cleanup is not None:
            await asyncio.wait({self._cleanup})
        return self.snapshot()

    async def _run(self, root: RootRef) -> None:
        discovery = Discovery(self._kube)
        counted = self._plan.owners | self._victims.owners  # owners whose pods the timer counts
        rewriter = Rewriter(simulation=self.name, prefix=self.options.prefix, root=root,
                            header=self.source.header, placement=self.options.placement,
                            timing=self.options.pod_timing, lifecycle_owners=counted,
                            usage_workloads=frozenset(map(workload_key, self.scan.usage)))
        firer = CronFirer(kube=self._kube, clock=self.clock, start_ms=self.scan.start_ms,
                          simulation=self.name, failed=self._fire_failed,
                          makes_pods=self._hold_for_pod_work)
        applier = Applier(kube=self._kube, discovery=discovery, rewriter=rewriter,
                          namespaces=namespaces.Namespaces(self._kube, root=root,
                                                           simulation=self.name),
                          concurrency=self.options.max_concurrency,
                          retry_deadline_s=self.options.retry_deadline_s,
                          applied=firer.track, deleted=self._deleted(firer),
                          before_apply=self._before_apply)
        timer = PodTimer(kube=self._kube, simulation=self.name, plan=self._plan,
                         timed=self._pod_timed, victims=self._victims)
        helpers = [asyncio.create_task(self._report_status(root))]
        player: UsagePlayer | None = None
        try:
            if self.scan.usage:
                player = await self._usage_player(root, rewriter)
            if counted:
                helpers.append(asyncio.create_task(timer.run()))
                async with asyncio.timeout(WATCH_READY_TIMEOUT):
                    await timer.ready.wait()
            self._set_state(SimulationState.RUNNING)
            self._started_at = time.monotonic()
            self.clock.start()
            if player is not None:  # its samples are due on the clock, which runs now
                helpers.append(asyncio.create_task(player.run()))
            await Replayer(source=self.source, scan=self.scan, clock=self.clock,
                           applier=applier, progress=self.progress,
                           changed=self._notify, remove_hpas=self.options.remove_hpas).run()
            await timer.flush()
            self.progress.trace_time_ms = self.scan.length_ms
            self._finish(SimulationState.SUCCEEDED)
        except asyncio.CancelledError:
            self._ended_at = time.monotonic()
            raise
        except (ApiError, TimeoutError, OSError) as exc:
            self._finish(SimulationState.FAILED, message=f"the replay stopped: {exc}")
        except Exception as exc:
            self._finish(SimulationState.FAILED, message=f"internal error: {exc!r}")
            # The traceback as a plain field: the state is already FAILED, and no renderer's
            # exception formatting can get in the way of the cleanup below.
            log.error("simulation crashed", simulation=self.name,  # noqa: TRY400
                      traceback="".join(traceback.format_exception(exc)))
        finally:
            await firer.close()
            for helper in helpers:
                helper.cancel()
            await asyncio.gather(*helpers, return_exceptions=True)
            if player is not None:
                await player.close()
        await roots.report_status(self._kube, root, self.snapshot())
        if self.options.cleanup:
            with contextlib.suppress(SimkubeError):  # recorded in the message
                await self._clean_up()

    def _fire_failed(self, failure: FailureRecord) -> None:
        self.progress.fail_object(failure)
        log.warning("cronjob firing failed", simulation=self.name, object=failure.object,
                    code=failure.code, reason=failure.reason, message=failure.message)
        self._notify()

    async def _usage_player(self, root: RootRef, rewriter: Rewriter) -> UsagePlayer | None:
        """The recorded usage's player, or None when the environment has no usage emulation
        (a warning says so)."""
        usage = self.scan.usage
        player = UsagePlayer(
            kube=self._kube, simulation=self.name, clock=self.clock, series=usage,
            namespace_of={s.namespace: rewriter.namespace(s.namespace or "default")
                          for s in usage},
            owner=root.owner_reference())
        if not await player.supported():
            return None
        self.usage = player
        return player

    def _pod_timed(self, assignment: Assignment) -> None:
        if assignment.lifetime_ms is not None:
            self.progress.pods_timed += 1
            self._notify()

    def _set_state(self, state: SimulationState, *, message: str | None = None) -> None:
        self.progress.state = state
        if message is not None:
            self.progress.message = message
        log.info("simulation state", simulation=self.name, state=state.value,
                 message=message or None)
        self._notify()

    def _finish(self, state: SimulationState, *, message: str | None = None) -> None:
        self._ended_at = time.monotonic()
        self.holds.end()  # nothing is left to hold for
        self._set_state(state, message=message)
        snapshot = self.snapshot()
        log.info("simulation finished", simulation=self.name, state=state.value,
                 events=f"{snapshot.events_applied}/{snapshot.events_total}",
                 failed=snapshot.objects_failed, lag_p99_ms=round(snapshot.lag_p99_ms, 2),
                 victims_marked=self._marker.marked, pod_work=self._pod_work.holds,
                 own_holds=self.holds.own_holds,
                 own_holds_untaken=self.holds.own_expired)

    async def _report_status(self, root: RootRef) -> None:
        while True:
            await roots.report_status(self._kube, root, self.snapshot())
            await asyncio.sleep(STATUS_INTERVAL)

    # -- controlling -------------------------------------------------------------------

    def pause(self) -> None:
        if self.state is not SimulationState.RUNNING:
            raise SimulationStateError(f"simulation {self.name} is {self.state.value}; only a "
                                       "Running simulation can be paused")
        self.clock.pause()
        self._set_state(SimulationState.PAUSED)

    def resume(self) -> None:
        if self.state is not SimulationState.PAUSED:
            raise SimulationStateError(f"simulation {self.name} is {self.state.value}; only a "
                                       "Paused simulation can be resumed")
        self.clock.resume()
        self._set_state(SimulationState.RUNNING)

    def hold(self, *, expires_after_s: float = HOLD_EXPIRY_S) -> None:
        """Slow the clock to real time for sk-ctrl (the autoscaler is reacting; ``ReplayClock``
        and ``TimeScale.held_speed``); the state does not change,
        so a user's pause and a hold compose (``ReplayClock``). The hold ends by itself after
        ``expires_after_s`` unless held again: a caller that dies mid-hold cannot stall us."""
        if self.state not in (SimulationState.RUNNING, SimulationState.PAUSED):
            raise SimulationStateError(f"simulation {self.name} is {self.state.value}; only a "
                                       "Running or Paused simulation can be held")
        self.holds.hold(expires_after_s=expires_after_s)

    def release(self) -> None:
        """End a hold; nothing to do (and no error) when there is none, e.g. once the
        replay has ended: the caller's release may race with the end."""
        self.holds.release()

    def _hold_for_pod_work(self) -> None:
        """Work that makes pods is about to be applied: hold briefly for sk-ctrl, when the
        run asked for it (``pod_work.py``)."""
        if self.options.hold_pod_work and self.state is SimulationState.RUNNING:
            self.holds.hold_briefly(expires_after_s=BRIEF_HOLD_S, bound_s=BRIEF_HOLD_BOUND_S)

    async def _before_apply(self, obj: KubeObject, offset_ms: int) -> None:
        await self._pod_work.before_apply(obj, offset_ms)
        await self._marker.before_apply(obj, offset_ms)

    def _deleted(self, firer: CronFirer) -> Callable[[ObjectRef], None]:
        def deleted(ref: ObjectRef) -> None:
            firer.deleted(ref)
            self._pod_work.deleted(ref)
        return deleted

    async def cancel(self, *, wait: bool = True) -> ProgressSnapshot:
        """Stop the replay, delete the root and (with ``wait``) wait for garbage collection.

        Calls share one cleanup; after a failed one (see ``message``) the next call retries."""
        failed = (self._cleanup is not None and self._cleanup.done()
                  and not self._cleanup.cancelled() and self._cleanup.exception() is not None)
        if self._cleanup is None or failed:
            self._cleanup_expected = True
            self._cleanup_done = False
            running = self._task is not None and not self._task.done()
            if running:
                self.clock.resume()
                self.holds.end()
                self._set_state(SimulationState.CANCELLING)
            self._cleanup = asyncio.create_task(self._cancel(running=running))
            self._cleanup.add_done_callback(_retrieve)
        if wait:
            await asyncio.shield(self._cleanup)
        return self.snapshot()

    async def _cancel(self, *, running: bool) -> None:
        if running and self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task})
            self._ended_at = self._ended_at or time.monotonic()
            await self._clean_up(final=SimulationState.CANCELLED)
        else:
            await self._clean_up()

    async def _clean_up(self, *, final: SimulationState | None = None) -> None:
        if self.root is None or self.progress.cleaned_up:
            self._cleanup_done = True
            self._notify()
            return
        try:
            await roots.delete_root(self._kube, self.root.name, timeout=self._gc_timeout)
        except SimkubeError as exc:
            self._cleanup_done = True
            self._set_state(final or self.state, message=f"cleanup failed: {exc}")
            raise
        self.progress.cleaned_up = True
        self._cleanup_done = True
        log.info("simulation cleaned up", simulation=self.name)
        self._set_state(final or self.state)


def _retrieve(task: asyncio.Task[None]) -> None:
    """A cleanup nobody waits for still has its failure read (it is in the message)."""
    if not task.cancelled():
        task.exception()
