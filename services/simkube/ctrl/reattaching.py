"""After an sk-ctrl restart: follow the run a previous sk-ctrl left going, or call it lost.

sk-ctrl keeps no state of its own: the Simulation's ``runs`` list says which run was in
progress and sk-driver's list says whether it still is. A run the driver still knows is
followed again into the same results directory (the recorder appends); one it forgot, or is
cancelling, is lost — what it created is deleted, and a new run replays it.
"""

from __future__ import annotations

from simkube.ctrl.context import SimulationContext
from simkube.ctrl.driving import STATE
from simkube.ctrl.entries import RunEntry
from simkube.ctrl.reporting import RunReport
from simkube.ctrl.running import bury
from simkube.gen.simkube.driver.v1 import driver_pb2
from simkube.simulation.names import run_name

GONE = frozenset({STATE.SIMULATION_STATE_CANCELLING, STATE.SIMULATION_STATE_CANCELLED})


async def find_again(ctx: SimulationContext, report: RunReport,
                     entry: RunEntry) -> driver_pb2.SimulationProgress | None:
    """The driver's progress of ``entry``'s run to follow again; None when it is lost
    (written as such)."""
    name = run_name(ctx.name, entry.run)
    known = await ctx.deps.retrier().call(ctx.deps.driver.runs, what="list runs")
    progress = known.get(name)
    if progress is None or progress.state in GONE:
        await bury(ctx, report, entry, f"sk-driver no longer knows run {name} (was it "
                                       "restarted?); the run is lost")
        return None
    await ctx.emit("Reattached", f"following run {entry.run} ({name}) again after a restart")
    return progress
