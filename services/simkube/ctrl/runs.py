"""One simulation's lifecycle: its runs one after another, from Initializing to Finished or Failed.

This is the thin orchestrator; each job has its own module. While the simulation holds the
slot its Lease is renewed (``leasing.keep_renewed``). A restarted sk-ctrl first looks for the
run a previous one left going (``reattaching``); then runs are started (``starting``) and
followed to their end (``running``) until ``repetitions`` of them finished; the status
says what happened (``reporting``) and the timers go back (``preparing.restore``) however it
ended. A failure anywhere ends the simulation with a message on its status, never an
unhandled exception.

A run sk-driver lost (it was killed or restarted) is replayed as a new run rather than
resumed where it stopped: what the dead driver kept in memory (pods waiting for their start
delay or lifetime, the cron schedule, the usage player, the autoscaler hold) cannot be read
back from the cluster, so a run stitched together at the trace time reached would not be one
replay of the trace, and its results would say things the trace never did. The lost run's
objects are deleted first (``running.bury``), so nothing is doubled; ``LOST_RUNS_REPLAYED``
bounds the replays, so a driver that keeps crashing fails the simulation instead of looping.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from simkube.core.errors import SimkubeError
from simkube.core.kubeapi import ApiError
from simkube.core.logs import get_logger
from simkube.ctrl import preparing, reattaching
from simkube.ctrl.context import Deps, SimulationContext
from simkube.ctrl.driving import STATE
from simkube.ctrl.leasing import keep_renewed
from simkube.ctrl.recording import driver_summary
from simkube.ctrl.reporting import RunReport, conclude
from simkube.ctrl.retrying import SimulationFailedError
from simkube.ctrl.running import LOST_RUNS_REPLAYED, clean_up, run_through
from simkube.ctrl.starting import start_run

log = get_logger(__name__)


class SimulationRun:
    """The task that runs one Simulation, as the reconciler starts, updates and stops it."""

    def __init__(self, *, deps: Deps, simulation: dict[str, Any]) -> None:
        self.ctx = SimulationContext(deps=deps, simulation=simulation)
        self._task: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        return self.ctx.name

    @property
    def simulation(self) -> dict[str, Any]:
        return self.ctx.simulation

    def start(self) -> None:
        self._task = asyncio.create_task(self._main(), name=f"simulation {self.name}")

    @property
    def done(self) -> bool:
        return self._task is not None and self._task.done()

    def update(self, simulation: dict[str, Any]) -> None:
        self.ctx.update(simulation)

    async def detach(self) -> None:
        """Stop following (sk-ctrl is shutting down); the driver's run goes on."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def delete(self) -> None:
        """The Simulation is being deleted: stop, cancel the driver's run, close the results."""
        await self.detach()
        ctx = self.ctx
        if ctx.current is not None:
            with contextlib.suppress(SimulationFailedError):
                await clean_up(ctx, ctx.current)
        if ctx.recorder is not None:
            await ctx.recorder.stop(state="Cancelled", driver=driver_summary(ctx.progress))
        with contextlib.suppress(Exception):
            await preparing.restore(ctx)

    async def _main(self) -> None:
        renewer = asyncio.create_task(keep_renewed(self.ctx.deps.lease, self.name))
        try:
            await self._run_all()
        except SimulationFailedError as exc:
            await self._finish(failure=exc.message)
        except (ApiError, OSError, ValueError, SimkubeError) as exc:
            log.exception("simulation failed", simulation=self.name)
            await self._finish(failure=f"sk-ctrl could not go on: {exc}")
        except Exception as exc:  # a bug: the status must still say so, not stay Initializing
            log.exception("simulation failed on an unexpected error", simulation=self.name)
            await self._finish(failure=f"sk-ctrl hit an unexpected error ({type(exc).__name__}): "
                                       f"{exc}; its log has the traceback")
        finally:
            renewer.cancel()

    async def _run_all(self) -> None:
        ctx = self.ctx
        spec = ctx.spec()
        config = await preparing.node_groups(ctx, spec)
        report = RunReport(ctx)
        await report.hold_lease()
        left_going = report.in_progress()
        if left_going is not None:
            progress = await reattaching.find_again(ctx, report, left_going)
            if progress is not None:
                paused = progress.state == STATE.SIMULATION_STATE_PAUSED
                await run_through(ctx, report, left_going, spec=spec, config=config,
                                  paused=paused)
        while report.completed() < spec.repetitions:
            lost = report.lost_runs()
            if len(lost) > LOST_RUNS_REPLAYED:
                raise SimulationFailedError(
                    f"sk-driver lost {len(lost)} runs (is it crashing?); run {lost[-1].run}: "
                    f"{lost[-1].message}")
            entry = await start_run(ctx, report, number=len(report.entries) + 1, spec=spec,
                                    config=config)
            await run_through(ctx, report, entry, spec=spec, config=config, paused=False)
        unfinished = report.unfinished()
        if unfinished:
            first = unfinished[0]
            raise SimulationFailedError(
                f"{len(unfinished)} of {spec.repetitions} runs did not finish; run "
                f"{first.run}: {first.message or first.state}")
        await self._finish(failure=None)

    async def _finish(self, *, failure: str | None) -> None:
        try:
            await preparing.restore(self.ctx)
        except Exception as exc:  # the Simulation's outcome must still be written
            log.exception("timers not restored", simulation=self.name)
            failure = failure or f"the run finished but its timers were not restored: {exc}"
        await conclude(self.ctx, failure=failure)
