"""Following one driver run: its progress into status, and ``pausedTime`` into Pause/Resume.

Two loops share the run: one reads WatchSimulation (reconnecting while the driver is
unreachable, within the retry budget) and writes progress at most once a second, state
changes at once; the other waits for spec changes and asks the driver to pause or resume.
The driver's own progress says whether the run is paused, so status follows the truth even
when a Pause raced with the end of the run.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

import grpc

from simkube.core.logs import get_logger
from simkube.ctrl.driving import FINAL_STATES, STATE, DriverError
from simkube.ctrl.statuses import progress_fields
from simkube.gen.simkube.driver.v1 import driver_pb2
from simkube.simulation.states import State

if TYPE_CHECKING:
    from simkube.ctrl.driving import DriverClient
    from simkube.ctrl.statuses import StatusWriter
    from simkube.simulation.trace_clock import TraceClock

log = get_logger(__name__)
SHOWN_STATES = {STATE.SIMULATION_STATE_PENDING: State.INITIALIZING,
                STATE.SIMULATION_STATE_RUNNING: State.RUNNING,
                STATE.SIMULATION_STATE_PAUSED: State.PAUSED}


class SimulationFailedError(Exception):
    """The simulation cannot go on; ``message`` goes to its status and an Event."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class RunLostError(SimulationFailedError):
    """The driver does not know the run any more (it restarted); only this run is lost."""


class FollowDeps(Protocol):
    @property
    def driver(self) -> DriverClient: ...

    @property
    def retry_budget(self) -> float: ...


class FollowedRun(Protocol):
    """What following needs of a simulation's lifecycle (``runs.SimulationRun``), named here
    so this module does not import the one that calls it."""

    progress: driver_pb2.SimulationProgress | None
    simulation: dict[str, Any]
    changed: asyncio.Event

    @property
    def deps(self) -> FollowDeps: ...

    @property
    def clock(self) -> TraceClock: ...

    @property
    def writer(self) -> StatusWriter: ...

    async def emit(self, reason: str, message: str, *, warning: bool = False) -> None: ...


def wants_pause(simulation: dict[str, Any]) -> bool:
    return (simulation.get("spec") or {}).get("pausedTime") not in (None, "")


async def follow(run: FollowedRun, *, name: str, paused: bool,
                 ) -> driver_pb2.SimulationProgress:
    """Follow run ``name`` until it ends; its final progress."""
    pauser = asyncio.create_task(_pause_loop(run, name=name, paused=paused))
    try:
        return await _watch(run, name=name)
    finally:
        pauser.cancel()
        await asyncio.gather(pauser, return_exceptions=True)


async def _watch(run: FollowedRun, *, name: str) -> driver_pb2.SimulationProgress:
    loop = asyncio.get_running_loop()
    deadline: float | None = None
    budget = run.deps.retry_budget
    while True:
        try:
            async for progress in run.deps.driver.watch(name):
                deadline = None
                run.progress = progress
                run.clock.report(trace_s=progress.trace_time_ms / 1000,
                                 running=progress.state == STATE.SIMULATION_STATE_RUNNING,
                                 length_s=progress.trace_length_ms / 1000)
                await _report(run, progress)
                if progress.state in FINAL_STATES:
                    return progress
        except DriverError as exc:
            if exc.code == grpc.StatusCode.NOT_FOUND:
                raise RunLostError(f"sk-driver no longer knows run {name} (was it "
                                   "restarted?); the run is lost") from None
            if not exc.transient:
                raise SimulationFailedError(f"following run {name}: {exc.message}") from None
            deadline = deadline or loop.time() + budget
            if loop.time() >= deadline:
                raise SimulationFailedError(
                    f"sk-driver at {run.deps.driver.address} did not answer for "
                    f"{budget:.0f}s while running {name}: {exc.message}") from None
            log.warning("watch broke, reconnecting", run=name, error=exc.message)
            await asyncio.sleep(1.0)


async def _report(run: FollowedRun, progress: driver_pb2.SimulationProgress) -> None:
    fields = progress_fields(progress)
    shown = SHOWN_STATES.get(progress.state)
    if shown is not None and shown.value != run.writer.state:
        await run.writer.write(state=shown.value, **fields)
    elif progress.state in FINAL_STATES:
        await run.writer.write(**fields)
    else:
        await run.writer.progress(**fields)


async def _pause_loop(run: FollowedRun, *, name: str, paused: bool) -> None:
    sent = paused
    while True:
        run.changed.clear()
        want = wants_pause(run.simulation)
        if want != sent:
            try:
                call = run.deps.driver.pause if want else run.deps.driver.resume
                progress = await call(name)
                sent = want
                at = f"at trace time {progress.trace_time_ms / 1000:.1f}s"
                await run.emit("Paused" if want else "Resumed",
                               f"run {name} {'paused' if want else 'resumed'} {at}")
            except DriverError as exc:
                if exc.transient:
                    await asyncio.sleep(1.0)
                    continue
                log.warning("pause/resume refused", run=name, error=exc.message)
                sent = want  # e.g. the run ended meanwhile: nothing left to pause
            continue
        await run.changed.wait()
