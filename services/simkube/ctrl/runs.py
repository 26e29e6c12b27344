"""One simulation's lifecycle: its runs one after another, from Initializing to Finished or Failed.

Run *n* is the driver simulation ``<simulation>-r<n>``, started with ``cleanup=false`` so its
objects stay for the recorder until the run ends; then Cancel deletes its root and waits for
garbage collection, so the next run starts on a clean cluster. Progress flows from
WatchSimulation into status. A restarted sk-ctrl finds the run in progress through the
status's ``runs`` list: the driver still knows it (re-attach, same results directory) or
not (that run is lost and the next one follows).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import grpc

from simkube.cloudprov.config import CloudConfig
from simkube.core.kubeapi import ApiError, KubeClient
from simkube.core.logs import get_logger
from simkube.core.simtime import REAL_TIME
from simkube.ctrl import events, nodegroups
from simkube.ctrl.driving import STATE, DriverClient, DriverError
from simkube.ctrl.following import RunLostError, SimulationFailedError, follow
from simkube.ctrl.leasing import RENEW_INTERVAL_S, SimulationLease
from simkube.ctrl.metrics import ControllerMetrics
from simkube.ctrl.recording import RunRecorder, set_aside_previous, unstarted_warning
from simkube.ctrl.statuses import StatusWriter, condition, generation_of, now
from simkube.ctrl.timing import TimerTarget, prepare_timers, restore_timers
from simkube.gen.simkube.driver.v1 import driver_pb2
from simkube.simulation.names import run_name
from simkube.simulation.spec import SimulationSpec, parse_spec
from simkube.simulation.states import ACTIVE, State
from simkube.simulation.trace_clock import TraceClock

log = get_logger(__name__)
T = TypeVar("T")


@dataclass(kw_only=True)
class Deps:
    """What every simulation's lifecycle shares."""

    kube: KubeClient
    driver: DriverClient
    lease: SimulationLease
    results_dir: Path
    node_groups: str | None
    metrics: ControllerMetrics
    retry_budget: float = 60.0
    timer_target: TimerTarget | None = None


def driver_summary(progress: driver_pb2.SimulationProgress | None) -> dict[str, Any]:
    if progress is None:
        return {}
    return {"events_applied": progress.events_applied, "events_total": progress.events_total,
            "objects_failed": progress.objects_failed, "lag_p99_ms": progress.lag_p99_ms}


class SimulationRun:
    def __init__(self, *, deps: Deps, simulation: dict[str, Any]) -> None:
        self.deps = deps
        self.name = str(simulation["metadata"]["name"])
        self.simulation = simulation
        self.changed = asyncio.Event()
        self.writer = StatusWriter(kube=deps.kube, name=self.name,
                                   status=simulation.get("status") or {},
                                   generation=lambda: generation_of(self.simulation))
        self.progress: driver_pb2.SimulationProgress | None = None
        self.clock = TraceClock(scale=REAL_TIME)  # replaced with the run's when it starts
        self._runs: list[dict[str, Any]] = []
        self._current: str | None = None
        self._recorder: RunRecorder | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._main(), name=f"simulation {self.name}")

    @property
    def done(self) -> bool:
        return self._task is not None and self._task.done()

    def update(self, simulation: dict[str, Any]) -> None:
        self.simulation = simulation
        self.changed.set()

    async def detach(self) -> None:
        """Stop following (sk-ctrl is shutting down); the driver's run goes on."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def delete(self) -> None:
        """The Simulation is being deleted: stop, cancel the driver's run, close the results."""
        await self.detach()
        if self._current is not None:
            with contextlib.suppress(SimulationFailedError):
                await self._cleanup(self._current)
        if self._recorder is not None:
            await self._recorder.stop(state="Cancelled", driver=driver_summary(self.progress))
        with contextlib.suppress(Exception):
            await restore_timers(self.deps.kube, target=self.deps.timer_target,
                                 config=await self._groups(parse_spec(self.simulation)))

    async def emit(self, reason: str, message: str, *, warning: bool = False) -> None:
        await events.emit(self.deps.kube, self.simulation, reason=reason, message=message,
                          warning=warning)

    async def retry(self, call: Callable[[], Awaitable[T]], *, what: str) -> T:
        """``call()`` until it answers; an unreachable driver gets ``retry_budget`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.deps.retry_budget
        while True:
            try:
                return await call()
            except DriverError as exc:
                if not exc.transient:
                    raise
                if loop.time() >= deadline:
                    raise SimulationFailedError(
                        f"sk-driver at {self.deps.driver.address} did not answer for "
                        f"{self.deps.retry_budget:.0f}s ({what}): {exc.message}") from None
                log.warning("sk-driver unreachable, retrying", what=what, error=exc.message)
                await asyncio.sleep(1.0)

    async def _main(self) -> None:
        renewer = asyncio.create_task(self._renew_lease())
        try:
            await self._run_all()
        except SimulationFailedError as exc:
            await self._finish(failure=exc.message)
        except (ApiError, OSError, ValueError, nodegroups.NodeGroupError) as exc:
            log.exception("simulation failed", simulation=self.name)
            await self._finish(failure=f"sk-ctrl could not go on: {exc}")
        finally:
            renewer.cancel()

    async def _renew_lease(self) -> None:
        while True:
            await asyncio.sleep(RENEW_INTERVAL_S)
            try:
                await self.deps.lease.renew(self.name)
            except ApiError as exc:
                log.warning("lease not renewed", simulation=self.name, error=str(exc))

    async def _groups(self, spec: SimulationSpec) -> CloudConfig | None:
        reference = spec.node_groups or self.deps.node_groups
        if reference is None:
            return None
        try:
            return await nodegroups.load(self.deps.kube, reference)
        except Exception as exc:
            raise SimulationFailedError(f"node groups {reference}: {exc}") from None

    async def _run_all(self) -> None:
        spec = parse_spec(self.simulation)
        config = await self._groups(spec)
        self._runs = [dict(entry) for entry in self.writer.status.get("runs") or []]
        conditions = condition(kind="LeaseHeld", true=True, reason="Acquired",
                               message="this simulation holds the simulation slot",
                               existing=self.writer.status.get("conditions") or [],
                               generation=generation_of(self.simulation))
        await self.writer.write(conditions=conditions)
        if self._runs and self._runs[-1].get("state") in ACTIVE:
            await self._reattach(self._runs[-1], spec, config)
        for number in range(len(self._runs) + 1, spec.repetitions + 1):
            await self._run(number, spec, config)
        unfinished = [r for r in self._runs if r.get("state") != State.FINISHED]
        if unfinished:
            first = unfinished[0]
            raise SimulationFailedError(
                f"{len(unfinished)} of {spec.repetitions} runs did not finish; run "
                f"{first['run']}: {first.get('message', first.get('state'))}")
        await self._finish(failure=None)

    async def _reattach(self, entry: dict[str, Any], spec: SimulationSpec,
                        config: CloudConfig | None) -> None:
        number = int(entry["run"])
        name = run_name(self.name, number)
        known = await self.retry(self.deps.driver.runs, what="list runs")
        progress = known.get(name)
        gone = (STATE.SIMULATION_STATE_CANCELLING, STATE.SIMULATION_STATE_CANCELLED)
        if progress is None or progress.state in gone:
            await self._lost(entry, f"sk-driver no longer knows run {name} (was it "
                                    "restarted?); the run is lost")
            return
        await self.emit("Reattached", f"following run {number} ({name}) again after a restart")
        await self._follow(number, entry, spec, config, paused=(
            progress.state == STATE.SIMULATION_STATE_PAUSED))

    async def _lost(self, entry: dict[str, Any], message: str) -> None:
        entry.update(state=State.FAILED.value, message=message, endTime=now())
        self.deps.metrics.runs_finished.labels("Lost").inc()
        await self.writer.write(runs=self._runs)
        await self.emit("RunLost", message, warning=True)

    async def _run(self, number: int, spec: SimulationSpec, config: CloudConfig | None) -> None:
        name = run_name(self.name, number)
        if number == 1:  # a fresh start: anything there belongs to an older namesake
            set_aside_previous(self.deps.results_dir / self.name)
        run_dir = self.deps.results_dir / self.name / f"run-{number}"
        entry: dict[str, Any] = {"run": number, "state": State.INITIALIZING.value,
                                 "startTime": now(), "resultsDir": str(run_dir)}
        self._runs.append(entry)
        fields: dict[str, Any] = {
            "state": State.INITIALIZING.value, "currentRun": number, "runs": self._runs,
            "message": f"preparing run {number} of {spec.repetitions}",
            "resultsDir": str(self.deps.results_dir / self.name), "eventsApplied": 0,
            "failures": 0, "traceTimeSeconds": 0}
        if not self.writer.status.get("startTime"):
            fields["startTime"] = entry["startTime"]
        await self.writer.write(**fields)
        await self.emit("Initializing", f"preparing run {number} of {spec.repetitions}")
        timers = await prepare_timers(self.deps.kube, target=self.deps.timer_target,
                                      spec=spec, config=config, run=name)
        await self.writer.write(timers=timers.status)
        for warning in timers.warnings:
            await self.emit("TimerFloored", f"run {number}: {warning}", warning=True)
        if config is not None and spec.reset_node_groups:
            try:
                await nodegroups.reset(self.deps.kube, config)
            except nodegroups.NodeGroupError as exc:
                raise SimulationFailedError(exc.message) from None
        try:
            await self.retry(lambda: self.deps.driver.start(name=name, spec=spec),
                             what=f"start run {name}")
        except DriverError as exc:
            mine = (exc.code == grpc.StatusCode.ALREADY_EXISTS
                    and name in await self.retry(self.deps.driver.runs, what="list runs"))
            if not mine:  # else: started just before an sk-ctrl crash
                entry.update(state=State.FAILED.value, message=exc.message, endTime=now())
                await self.writer.write(runs=self._runs)
                raise SimulationFailedError(
                    f"sk-driver refused run {number}: {exc.message}") from None
        self.deps.metrics.runs_started.inc()
        await self.emit("RunStarted", f"run {number} of {spec.repetitions} started as {name}")
        await self._follow(number, entry, spec, config, paused=False)

    async def _follow(self, number: int, entry: dict[str, Any], spec: SimulationSpec,
                      config: CloudConfig | None, *, paused: bool) -> None:
        name = run_name(self.name, number)
        self._current = name
        self.progress = None
        self.clock = TraceClock(scale=spec.scale)
        recorder = RunRecorder(
            kube=self.deps.kube, run_dir=Path(entry["resultsDir"]), simulation=self.name,
            run=number, namespace_prefix=spec.namespace_prefix,
            groups=nodegroups.prices(config), scale=spec.scale,
            trace_clock=self.clock.now,
            timers=self.writer.status.get("timers"))
        self._recorder = recorder
        if not await recorder.start():
            await self.emit("RecorderFailed", recorder.error or "", warning=True)
        entry["state"] = State.RUNNING.value
        await self.writer.write(state=State.RUNNING.value, runs=self._runs,
                                message=f"run {number} of {spec.repetitions}")
        try:
            final = await follow(self, name=name, paused=paused)
        except RunLostError as exc:
            await recorder.stop(state=State.FAILED.value, driver=driver_summary(self.progress))
            self._recorder = self._current = None
            await self._lost(entry, exc.message)
            return
        state = (State.FINISHED if final.state == STATE.SIMULATION_STATE_SUCCEEDED
                 else State.FAILED)
        summary = await recorder.stop(state=state.value, driver=driver_summary(final))
        self._recorder = None
        warning = unstarted_warning(summary)
        if warning:
            entry["warning"] = warning
            await self.emit("PodsNeverStarted", f"run {number}: {warning}", warning=True)
        await self._cleanup(name)
        self._current = None
        entry.update(state=state.value, endTime=now(), eventsApplied=final.events_applied,
                     failures=final.objects_failed)
        if final.message:
            entry["message"] = final.message
        self.deps.metrics.runs_finished.labels(state.value).inc()
        completed = sum(1 for r in self._runs if r.get("state") == State.FINISHED)
        await self.writer.write(runs=self._runs, completedRuns=completed)
        if state is State.FAILED:
            why = final.message or STATE.Name(final.state)
            raise SimulationFailedError(f"run {number} failed in sk-driver: {why}")
        await self.emit("RunFinished", f"run {number} of {spec.repetitions} finished: "
                        f"{final.events_applied}/{final.events_total} events, "
                        f"{final.objects_failed} objects failed")

    async def _cleanup(self, name: str) -> None:
        try:
            await self.retry(lambda: self.deps.driver.cancel(name), what=f"clean up {name}")
        except DriverError as exc:
            if exc.code != grpc.StatusCode.NOT_FOUND:
                raise SimulationFailedError(f"sk-driver could not clean up run {name}: "
                                            f"{exc.message}") from None

    async def _finish(self, *, failure: str | None) -> None:
        try:
            await restore_timers(self.deps.kube, target=self.deps.timer_target,
                                 config=await self._groups(parse_spec(self.simulation)))
        except Exception as exc:  # the Simulation's outcome must still be written
            log.exception("timers not restored", simulation=self.name)
            failure = failure or f"the run finished but its timers were not restored: {exc}"
        state = State.FAILED if failure else State.FINISHED
        message = failure or f"{self.writer.status.get('completedRuns', 0)} run(s) finished"
        existing: list[Mapping[str, Any]] = self.writer.status.get("conditions") or []
        generation = generation_of(self.simulation)
        conditions = condition(kind="Completed", true=failure is None, reason=state.value,
                               message=message, existing=existing, generation=generation)
        conditions = condition(kind="LeaseHeld", true=False, reason="Released",
                               message="the simulation ended", existing=conditions,
                               generation=generation)
        try:
            await self.writer.write(state=state.value, message=message, endTime=now(),
                                    conditions=conditions)
        except ApiError as exc:
            log.warning("final status not written", simulation=self.name, error=str(exc))
        await self.emit(state.value, message, warning=failure is not None)
