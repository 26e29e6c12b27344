"""One started run followed to its end: the recorder around it, its outcome, its clean-up.

The recorder starts before following (and holding the clock for the autoscaler while the run
runs, ``holding_setup.py``) (its list of the cluster is the run's first row) and
stops once the driver's run has ended, before Cancel deletes the run's objects, so it sees
the cluster as the run left it. Cancel then waits for garbage collection, so the next run
starts on a clean cluster. A run the driver forgets meanwhile (it was restarted) is lost,
not failed: what it created is deleted all the same (Cancel deletes the root a dead driver
left), so the run that replays it starts on a clean cluster too; a run the driver says
failed fails the simulation.
"""

from __future__ import annotations

from pathlib import Path

import grpc

from simkube.cloudprov.config import CloudConfig
from simkube.ctrl import nodegroups
from simkube.ctrl.context import SimulationContext
from simkube.ctrl.driving import STATE, DriverError
from simkube.ctrl.entries import RunEntry
from simkube.ctrl.following import follow
from simkube.ctrl.holding_setup import holding
from simkube.ctrl.recording import RunRecorder, driver_summary, unstarted_warning
from simkube.ctrl.reporting import RunReport
from simkube.ctrl.retrying import RunLostError, SimulationFailedError
from simkube.simulation.names import run_name
from simkube.simulation.spec import SimulationSpec
from simkube.simulation.states import State
from simkube.simulation.trace_clock import TraceClock

LOST_RUNS_REPLAYED = 3  # a driver that loses more is crashing: the simulation fails


async def run_through(ctx: SimulationContext, report: RunReport, entry: RunEntry, *,
                      spec: SimulationSpec, config: CloudConfig | None, paused: bool) -> None:
    """Follow ``entry``'s run (started, or found again) until it ends and is cleaned up."""
    number = entry.run
    name = run_name(ctx.name, number)
    ctx.current, ctx.progress = name, None
    ctx.clock = TraceClock(scale=spec.scale)
    recorder = RunRecorder(
        kube=ctx.deps.kube, run_dir=Path(entry.results_dir), simulation=ctx.name, run=number,
        namespace_prefix=spec.namespace_prefix, groups=nodegroups.prices(config),
        scale=spec.scale, trace_clock=ctx.clock.now, timers=ctx.writer.status.get("timers"))
    ctx.recorder = recorder
    if not await recorder.start():
        await ctx.emit("RecorderFailed", recorder.error or "", warning=True)
    runs = report.planned(spec.repetitions)
    await report.running(entry, repetitions=runs)
    try:
        async with holding(ctx, spec=spec, run=name, config=config):
            final = await follow(ctx, name=name, paused=paused)
    except RunLostError as exc:
        await recorder.stop(state=State.FAILED.value, driver=driver_summary(ctx.progress))
        ctx.recorder = None
        await bury(ctx, report, entry, exc.message)
        return
    state = (State.FINISHED if final.state == STATE.SIMULATION_STATE_SUCCEEDED
             else State.FAILED)
    summary = await recorder.stop(state=state.value, driver=driver_summary(final))
    ctx.recorder = None
    warning = unstarted_warning(summary)
    if warning:
        entry.warning = warning
        await ctx.emit("PodsNeverStarted", f"run {number}: {warning}", warning=True)
    await clean_up(ctx, name)
    ctx.current = None
    await report.ended(entry, state=state, final=final)
    if state is State.FAILED:
        why = final.message or STATE.Name(final.state)
        raise SimulationFailedError(f"run {number} failed in sk-driver: {why}")
    await ctx.emit("RunFinished", f"run {number} of {runs} finished: "
                   f"{final.events_applied}/{final.events_total} events, "
                   f"{final.objects_failed} objects failed")


async def bury(ctx: SimulationContext, report: RunReport, entry: RunEntry,
               message: str) -> None:
    """Run ``entry`` is lost: delete what it left in the cluster, then say so."""
    await clean_up(ctx, run_name(ctx.name, entry.run))
    ctx.current = None
    then = (f"run {len(report.entries) + 1} replays it"
            if len(report.lost_runs()) < LOST_RUNS_REPLAYED else "too many runs were lost")
    await report.lost(entry, f"{message}; what it created was deleted and {then}")


async def clean_up(ctx: SimulationContext, name: str) -> None:
    """Cancel run ``name`` in the driver: its objects deleted and garbage-collected."""
    try:
        await ctx.deps.retrier().call(lambda: ctx.deps.driver.cancel(name),
                                      what=f"clean up {name}")
    except DriverError as exc:
        if exc.code != grpc.StatusCode.NOT_FOUND:
            raise SimulationFailedError(f"sk-driver could not clean up run {name}: "
                                        f"{exc.message}") from None
