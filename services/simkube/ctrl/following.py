"""Following one driver run: its progress into status, and ``pausedTime`` into Pause/Resume.

Two loops share the run: one reads WatchSimulation (reconnecting while the driver is
unreachable, within the retry budget) and writes progress at most once a second, state
changes at once; the other waits for spec changes and asks the driver to pause or resume.
The driver's own progress says whether the run is paused, so status follows the truth even
when a Pause raced with the end of the run.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from simkube.core.logs import get_logger
from simkube.ctrl.context import SimulationContext
from simkube.ctrl.driving import FINAL_STATES, STATE, DriverError, report_progress
from simkube.ctrl.retrying import RunLostError, SimulationFailedError
from simkube.ctrl.statuses import progress_fields
from simkube.gen.simkube.driver.v1 import driver_pb2
from simkube.simulation.states import State

log = get_logger(__name__)
SHOWN_STATES = {STATE.SIMULATION_STATE_PENDING: State.INITIALIZING,
                STATE.SIMULATION_STATE_RUNNING: State.RUNNING,
                STATE.SIMULATION_STATE_PAUSED: State.PAUSED}


def wants_pause(simulation: dict[str, Any]) -> bool:
    return (simulation.get("spec") or {}).get("pausedTime") not in (None, "")


async def follow(ctx: SimulationContext, *, name: str, paused: bool,
                 ) -> driver_pb2.SimulationProgress:
    """Follow run ``name`` until it ends; its final progress."""
    pauser = asyncio.create_task(_pause_loop(ctx, name=name, paused=paused))
    try:
        return await _watch(ctx, name=name)
    finally:
        pauser.cancel()
        await asyncio.gather(pauser, return_exceptions=True)


async def _watch(ctx: SimulationContext, *, name: str) -> driver_pb2.SimulationProgress:
    retrier = ctx.deps.retrier()
    while True:
        try:
            async for progress in ctx.deps.driver.watch(name):
                retrier.reset()
                ctx.progress = progress
                report_progress(ctx.clock, progress)
                ctx.on_progress(progress)
                await _report(ctx, progress)
                if progress.state in FINAL_STATES:
                    return progress
        except DriverError as exc:
            if exc.code == grpc.StatusCode.NOT_FOUND:
                raise RunLostError(f"sk-driver no longer knows run {name} (was it "
                                   "restarted?); the run is lost") from None
            if not exc.transient:
                raise SimulationFailedError(f"following run {name}: {exc.message}") from None
            await retrier.backoff(exc, what=f"while running {name}")


async def _report(ctx: SimulationContext, progress: driver_pb2.SimulationProgress) -> None:
    fields = progress_fields(progress)
    shown = SHOWN_STATES.get(progress.state)
    if shown is not None and shown.value != ctx.writer.state:
        await ctx.writer.write(state=shown.value, **fields)
    elif progress.state in FINAL_STATES:
        await ctx.writer.write(**fields)
    else:
        await ctx.writer.progress(**fields)


async def _pause_loop(ctx: SimulationContext, *, name: str, paused: bool) -> None:
    sent = paused
    while True:
        ctx.changed.clear()
        want = wants_pause(ctx.simulation)
        if want != sent:
            try:
                call = ctx.deps.driver.pause if want else ctx.deps.driver.resume
                progress = await call(name)
                sent = want
                at = f"at trace time {progress.trace_time_ms / 1000:.1f}s"
                await ctx.emit("Paused" if want else "Resumed",
                               f"run {name} {'paused' if want else 'resumed'} {at}")
            except DriverError as exc:
                if exc.transient:
                    await asyncio.sleep(ctx.deps.retry_delay)
                    continue
                log.warning("pause/resume refused", run=name, error=exc.message)
                sent = want  # e.g. the run ended meanwhile: nothing left to pause
            continue
        await ctx.changed.wait()
