"""What a simulation's status says about its runs, written as the lifecycle moves on.

The status is the user's view (``kubectl get sim``, ``skctl status``) and a restarted
sk-ctrl's memory: the ``runs`` list tells it which run was in progress. Every change of a
run's state is written at once, with the Event and the metric that go with it, so the three
never disagree; the JSON shape of each entry is ``entries.RunEntry``'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simkube.core.kubeapi import ApiError
from simkube.core.logs import get_logger
from simkube.ctrl.context import SimulationContext
from simkube.ctrl.entries import RunEntry
from simkube.ctrl.statuses import condition, now, run_speed
from simkube.gen.simkube.driver.v1 import driver_pb2
from simkube.simulation.states import State

log = get_logger(__name__)


class RunReport:
    """The ``runs`` list of one simulation's status and the writes that change it."""

    def __init__(self, ctx: SimulationContext) -> None:
        self.ctx = ctx
        self.entries = [RunEntry.from_status(e) for e in ctx.writer.status.get("runs") or []]

    def in_progress(self) -> RunEntry | None:
        """The run a previous sk-ctrl left going, if any."""
        return self.entries[-1] if self.entries and self.entries[-1].active else None

    def unfinished(self) -> list[RunEntry]:
        """Runs that neither finished nor were lost (and so replayed by a later run)."""
        return [entry for entry in self.entries if not entry.finished and not entry.lost]

    def lost_runs(self) -> list[RunEntry]:
        return [entry for entry in self.entries if entry.lost]

    def planned(self, repetitions: int) -> int:
        """How many runs the simulation takes: its repetitions and one more per lost run."""
        return repetitions + len(self.lost_runs())

    def completed(self) -> int:
        return sum(1 for entry in self.entries if entry.finished)

    async def write(self, **fields: Any) -> None:
        await self.ctx.writer.write(runs=[entry.to_status() for entry in self.entries],
                                    **fields)

    async def hold_lease(self) -> None:
        status = self.ctx.writer.status
        await self.ctx.writer.write(conditions=condition(
            kind="LeaseHeld", true=True, reason="Acquired",
            message="this simulation holds the simulation slot",
            existing=status.get("conditions") or [], generation=self.ctx.generation))

    async def begin(self, *, number: int, repetitions: int, run_dir: Path) -> RunEntry:
        """Run ``number`` is being prepared: a new entry, the counters back to zero."""
        entry = RunEntry(run=number, state=State.INITIALIZING.value, start_time=now(),
                         results_dir=str(run_dir))
        self.entries.append(entry)
        fields: dict[str, Any] = {
            "state": State.INITIALIZING.value, "currentRun": number,
            "message": f"preparing run {number} of {repetitions}",
            "resultsDir": str(run_dir.parent), "eventsApplied": 0, "failures": 0,
            "traceTimeSeconds": 0}
        if not self.ctx.writer.status.get("startTime"):
            fields["startTime"] = entry.start_time
        await self.write(**fields)
        await self.ctx.emit("Initializing", f"preparing run {number} of {repetitions}")
        return entry

    async def step(self, entry: RunEntry, *, repetitions: int, doing: str) -> None:
        """What the preparation of ``entry`` is doing now (groups reset, components
        restarted, started in sk-driver), so a status stuck there says where."""
        await self.write(message=f"preparing run {entry.run} of {repetitions}: {doing}")

    async def running(self, entry: RunEntry, *, repetitions: int) -> None:
        entry.state = State.RUNNING.value
        await self.write(state=State.RUNNING.value, message=f"run {entry.run} of {repetitions}")

    async def refused(self, entry: RunEntry, message: str) -> None:
        """sk-driver would not start the run."""
        entry.end(state=State.FAILED.value, end_time=now(), message=message)
        await self.write()

    async def lost(self, entry: RunEntry, message: str) -> None:
        """The driver forgot the run (it restarted): this run failed, and a later one
        replays it."""
        entry.end(state=State.FAILED.value, end_time=now(), message=message)
        entry.lost = True
        self.ctx.deps.metrics.runs_finished.labels("Lost").inc()
        await self.write()
        await self.ctx.emit("RunLost", message, warning=True)

    async def ended(self, entry: RunEntry, *, state: State,
                    final: driver_pb2.SimulationProgress) -> None:
        """The driver's run ended in ``state`` with ``final`` as its last progress."""
        entry.end(state=state.value, end_time=now(), message=final.message or None)
        entry.events_applied, entry.failures = final.events_applied, final.objects_failed
        speed = run_speed(final)
        entry.achieved_speed = speed.get("achievedSpeed")
        entry.held_seconds = speed["heldSeconds"]
        self.ctx.deps.metrics.runs_finished.labels(state.value).inc()
        await self.write(completedRuns=self.completed())


async def conclude(ctx: SimulationContext, *, failure: str | None) -> State:
    """The simulation's outcome: its state, conditions and the Event that says so; a status
    that cannot be written is logged (the Event still goes out)."""
    status = ctx.writer.status
    state = State.FAILED if failure else State.FINISHED
    message = failure or f"{status.get('completedRuns', 0)} run(s) finished"
    generation = ctx.generation
    conditions = condition(kind="Completed", true=failure is None, reason=state.value,
                           message=message, existing=status.get("conditions") or [],
                           generation=generation)
    conditions = condition(kind="LeaseHeld", true=False, reason="Released",
                           message="the simulation ended", existing=conditions,
                           generation=generation)
    try:
        await ctx.writer.write(state=state.value, message=message, endTime=now(),
                                conditions=conditions)
    except ApiError as exc:
        log.warning("final status not written", simulation=ctx.name, error=str(exc))
    await ctx.emit(state.value, message, warning=failure is not None)
    return state
