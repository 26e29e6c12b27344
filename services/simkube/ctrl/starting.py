"""Starting run *n* of a simulation: its entry, its footing, then StartSimulation.

Run *n* is the driver simulation ``<simulation>-r<n>``, started with ``cleanup=false`` so
its objects stay for the recorder until the run ends. sk-ctrl may crash between asking the
driver to start a run and writing that it did; the driver then answers the next start with
ALREADY_EXISTS, and a run of that name in the driver's list is ours to follow, not a
refusal.
"""

from __future__ import annotations

import grpc

from simkube.cloudprov.config import CloudConfig
from simkube.ctrl import preparing
from simkube.ctrl.context import SimulationContext
from simkube.ctrl.driving import DriverError
from simkube.ctrl.entries import RunEntry
from simkube.ctrl.holding_setup import holding_status, publish_start_hold
from simkube.ctrl.recording import set_aside_previous
from simkube.ctrl.reporting import RunReport
from simkube.ctrl.retrying import SimulationFailedError
from simkube.simulation.names import run_name
from simkube.simulation.spec import SimulationSpec


async def start_run(ctx: SimulationContext, report: RunReport, *, number: int,
                    spec: SimulationSpec, config: CloudConfig | None) -> RunEntry:
    """Prepare and start run ``number``; its entry, now Initializing in status."""
    name = run_name(ctx.name, number)
    simulation_dir = ctx.deps.results_dir / ctx.name
    if number == 1:  # a fresh start: anything there belongs to an older namesake
        set_aside_previous(simulation_dir)
    runs = report.planned(spec.repetitions)
    entry = await report.begin(number=number, repetitions=runs,
                               run_dir=simulation_dir / f"run-{number}")

    async def step(doing: str) -> None:
        await report.step(entry, repetitions=runs, doing=doing)
    gated = await preparing.prepare(ctx, spec=spec, config=config, number=number, name=name,
                                    step=step)
    await step("starting it in sk-driver")  # stuck here: the driver, not the restarts
    retrier = ctx.deps.retrier()
    holds = holding_status(ctx, spec)[0]  # and so sk-driver holds for work making pods
    if holds and config is not None:
        await publish_start_hold(ctx.deps.kube, namespace=config.namespace)
    try:
        await retrier.call(lambda: ctx.deps.driver.start(
            name=name, spec=spec, gate_scale_up=gated, hold_pod_work=holds),
                           what=f"start run {name}")
    except DriverError as exc:
        mine = (exc.code == grpc.StatusCode.ALREADY_EXISTS
                and name in await retrier.call(ctx.deps.driver.runs, what="list runs"))
        if not mine:  # else: started just before an sk-ctrl crash
            await report.refused(entry, exc.message)
            raise SimulationFailedError(
                f"sk-driver refused run {number}: {exc.message}") from None
    ctx.deps.metrics.runs_started.inc()
    await ctx.emit("RunStarted", f"run {number} of {runs} started as {name}")
    return entry
