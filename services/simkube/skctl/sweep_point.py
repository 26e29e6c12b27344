"""The real per-point runner of a sweep: a fresh environment, one Simulation, results kept.

It does what ``skctl env up``, ``skctl run --wait`` and ``skctl env down`` do, through the
same code rather than a subprocess: ``env.lifecycle.up``/``down`` with the point's
autoscaler, flags and node groups; the Simulation built and checked by ``sim_manifest``
(every rule of ``skctl run``), created by ``sim_client`` and followed by ``sim_progress``
quietly (the sweep draws its own progress). The runs' results are moved from the
environment's results directory into the point's folder. ``simkube.sweep.running`` calls it
once per point, from ``sweep run``'s worker threads and from ``sweep worker``. When the sweep
is interrupted (``job.stop``), it stops following, takes the environment down and raises
``PointInterruptedError``, so Ctrl-C leaves no environment behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from typing import Any

from rich.console import Console

from simkube.core.errors import EnvironmentStateError, SimkubeError
from simkube.core.kubeapi import KubeClient
from simkube.ctrl.decisions import state_of
from simkube.env import lifecycle
from simkube.env.paths import results_dir
from simkube.simulation.states import State
from simkube.skctl import sim_client, sim_manifest, sim_progress
from simkube.skctl.sim_commands import with_cluster
from simkube.sweep.estimate import point_seconds, trace_seconds
from simkube.sweep.inputs import write_inputs
from simkube.sweep.running import PointInterruptedError, PointJob

# A point that runs this many times longer than its estimate is stuck: give up on it.
TIMEOUT_FACTOR = 3.0
TIMEOUT_MARGIN_S = 300.0
QUIET = Console(quiet=True)
STOP_POLL_S = 0.5  # how soon a running point notices the sweep was interrupted


def run_point(job: PointJob) -> None:
    """Run ``job``'s point in its own environment; raise when it did not finish."""
    sweep, point = job.sweep, job.point
    inputs = write_inputs(sweep, point, folder=job.folder)
    simulation = sim_manifest.from_flags(sim_manifest.RunFlags(
        name=job.simulation, trace=str(inputs.trace), speed=sweep.base.scale,
        duration=sweep.base.duration, repetitions=sweep.base.repetitions,
        seed=sweep.base.seed, timers=tuple(f"{key}={value}" for key, value
                                           in point.timers.items())))
    estimate = point_seconds(repetitions=sweep.base.repetitions,
                             trace_s=trace_seconds(duration=sweep.base.duration,
                                                   trace=inputs.trace),
                             scale=sweep.base.scale)
    with contextlib.suppress(EnvironmentStateError):
        lifecycle.down(job.env_name)  # left running by an interrupted attempt
    results = results_dir(job.env_name) / job.simulation
    shutil.rmtree(results, ignore_errors=True)
    lifecycle.up(lifecycle.UpOptions(
        name=job.env_name, services=True, autoscaler=point.autoscaler,
        node_groups=inputs.node_groups, autoscaler_flags=point.ca_flags))
    try:
        if job.stop.is_set():
            raise PointInterruptedError("interrupted before its Simulation started; rerun the "
                                        "sweep to run it")

        async def action(kube: KubeClient) -> dict[str, Any]:
            await sim_client.create(kube, simulation)
            follow = asyncio.ensure_future(sim_progress.follow(
                kube, job.simulation, console=QUIET,
                timeout=estimate * TIMEOUT_FACTOR + TIMEOUT_MARGIN_S))
            while not follow.done():
                if job.stop.is_set():
                    follow.cancel()
                    raise PointInterruptedError("interrupted; rerun the sweep to run it")
                await asyncio.wait({follow}, timeout=STOP_POLL_S)
            return follow.result()

        final = with_cluster(None, job.env_name, action)
    finally:
        lifecycle.down(job.env_name)
        for run in sorted(results.glob("run-*")):
            shutil.move(run, job.folder / run.name)
        shutil.rmtree(results_dir(job.env_name), ignore_errors=True)
    if state_of(final) != State.FINISHED:
        message = (final.get("status") or {}).get("message") or "no message"
        raise SimkubeError(f"simulation {job.simulation} ended {state_of(final)}: {message}")
