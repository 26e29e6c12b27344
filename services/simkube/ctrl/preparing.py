"""Before each run, the same footing: the node groups at their minimum, the timers scaled.

Repetitions are comparable only when each starts from the same cluster at the same speed.
sk-cloudprov's node-group config (the Simulation's ``nodeGroups`` or sk-ctrl's
``--node-groups``) is read for every run and on the way out, never cached, so an edited
ConfigMap counts from the next run; a config that cannot be read fails the simulation, since
the run would otherwise start from wherever the last one left the cluster.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from simkube.cloudprov.config import CloudConfig
from simkube.ctrl import nodegroups
from simkube.ctrl.context import SimulationContext
from simkube.ctrl.holding_setup import holding_status
from simkube.ctrl.retrying import SimulationFailedError
from simkube.ctrl.timing import prepare_timers, restore_timers
from simkube.simulation.spec import SimulationSpec


async def node_groups(ctx: SimulationContext, spec: SimulationSpec) -> CloudConfig | None:
    """The config of the node groups ``spec`` uses; None when there are none."""
    reference = spec.node_groups or ctx.deps.node_groups
    if reference is None:
        return None
    try:
        return await nodegroups.load(ctx.deps.kube, reference)
    except Exception as exc:
        raise SimulationFailedError(f"node groups {reference}: {exc}") from None


async def _quiet(doing: str) -> None:
    return None


async def prepare(ctx: SimulationContext, *, spec: SimulationSpec, config: CloudConfig | None,
                  number: int, name: str,
                  step: Callable[[str], Awaitable[None]] = _quiet) -> bool:
    """Run ``number`` (driver run ``name``): groups reset, then timers in place and in status.
    True when the run's pods are to carry CA's scale-up gate (``scale_up_gate.py``).
    ``step`` hears what is being done, for the status.

    The reset comes first: putting the timers in place restarts CA, and a CA started before
    the reset would keep the removed instances in its two-minute instance cache."""
    if config is not None and spec.reset_node_groups:
        await step("resetting the node groups to their minimum")
        try:
            await nodegroups.reset(ctx.deps.kube, config)
        except nodegroups.NodeGroupError as exc:
            raise SimulationFailedError(exc.message) from None
    await step("restarting components with the run's timers")
    timers = await prepare_timers(ctx.deps.kube, target=ctx.deps.timer_target, spec=spec,
                                  config=config, run=name,
                                  holding=holding_status(ctx, spec)[0])
    await ctx.writer.write(timers=timers.status)
    for warning in timers.warnings:
        await ctx.emit("TimerFloored", f"run {number}: {warning}", warning=True)
    return timers.gates_scale_up


async def restore(ctx: SimulationContext) -> None:
    """The environment's own timers back, once the simulation ends however it ends."""
    await restore_timers(ctx.deps.kube, target=ctx.deps.timer_target,
                         config=await node_groups(ctx, ctx.spec()))
