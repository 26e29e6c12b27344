"""The simulations one driver process knows: starting them by name, finding them, stopping all.

A name is reserved before the (possibly slow) trace download and scan, so two concurrent
starts with one name cannot both get through; finished simulations stay listed (the most
recent ``keep_finished``) so callers can still read how they ended. A driver process that
dies forgets its runs but not their roots: ``clear_leftover`` deletes such a root (and with
it everything the run created), so a caller can clean up a run that was lost.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from simkube.core.kubeapi import KubeClient
from simkube.core.logs import get_logger
from simkube.driver import roots
from simkube.driver.errors import SimulationConflictError, SimulationNotFoundError
from simkube.driver.options import SimulationOptions
from simkube.driver.scanning import TraceScan, scan_trace
from simkube.driver.simulation import Simulation
from simkube.trace import TraceSource

log = get_logger(__name__)
KEEP_FINISHED = 100


async def launch(*, kube: KubeClient, options: SimulationOptions, source: TraceSource,
                 scan: TraceScan | None = None) -> Simulation:
    """Validate the whole trace (unless ``scan`` says it was), then start replaying."""
    if scan is None:
        scan = await asyncio.to_thread(scan_trace, source, duration_ms=options.duration_ms)
    simulation = Simulation(options=options, source=source, scan=scan, kube=kube)
    await simulation.start()
    return simulation


class Registry:
    def __init__(self, *, kube: KubeClient, keep_finished: int = KEEP_FINISHED) -> None:
        self._kube = kube
        self._keep = keep_finished
        self._simulations: dict[str, Simulation] = {}
        self._starting: set[str] = set()

    async def start(self, options: SimulationOptions,
                    open_source: Callable[[], Awaitable[TraceSource]]) -> Simulation:
        name = options.name
        current = self._simulations.get(name)
        if name in self._starting or (current is not None and not current.state.finished):
            raise SimulationConflictError(f"simulation {name} is already running",
                                          hint="choose another name or cancel it first")
        self._starting.add(name)
        try:
            simulation = await launch(kube=self._kube, options=options,
                                      source=await open_source())
        finally:
            self._starting.discard(name)
        self._simulations.pop(name, None)
        self._simulations[name] = simulation
        self._forget_old()
        return simulation

    def get(self, name: str) -> Simulation:
        simulation = self._simulations.get(name)
        if simulation is None:
            raise SimulationNotFoundError(f"no simulation named {name!r} on this driver")
        return simulation

    async def clear_leftover(self, name: str) -> None:
        """Delete the root of run ``name`` that no simulation here owns (an earlier driver
        process started it and died) and wait until garbage collection removed everything."""
        if name in self._starting or name in self._simulations:
            raise SimulationConflictError(f"simulation {name} belongs to this driver",
                                          hint="cancel it instead")
        if not await roots.root_exists(self._kube, name):
            raise SimulationNotFoundError(f"no simulation named {name!r} on this driver, and "
                                          "no root of that name in the cluster")
        log.info("deleting a root an earlier driver left", simulation=name)
        await roots.delete_root(self._kube, name)

    def all(self) -> list[Simulation]:
        return list(self._simulations.values())

    def _forget_old(self) -> None:
        finished = [name for name, sim in self._simulations.items() if sim.state.finished]
        for name in finished[:max(0, len(finished) - self._keep)]:
            del self._simulations[name]

    async def shutdown(self, *, timeout: float) -> None:
        """Cancel (and clean up) every simulation still running, within ``timeout``."""
        running = [sim for sim in self._simulations.values() if not sim.state.finished]
        if not running:
            return
        log.info("cancelling running simulations", count=len(running))
        try:
            results = await asyncio.wait_for(asyncio.gather(
                *(sim.cancel(wait=True) for sim in running), return_exceptions=True),
                timeout=timeout)
        except TimeoutError:
            log.warning("simulations were stopped and their roots deleted, but garbage "
                        "collection did not finish in time", seconds=timeout)
            return
        for sim, result in zip(running, results, strict=True):
            if isinstance(result, BaseException):
                log.warning("cancel failed", simulation=sim.name, error=str(result))


class SimulationCollector(Collector):
    """Prometheus gauges per simulation, read from the registry at scrape time."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry

    def collect(self) -> list[GaugeMetricFamily]:
        families = {
            "events_applied": GaugeMetricFamily(
                "simkube_driver_events_applied", "Events applied", labels=["simulation"]),
            "events_total": GaugeMetricFamily(
                "simkube_driver_events_total", "Events to apply", labels=["simulation"]),
            "objects_failed": GaugeMetricFamily(
                "simkube_driver_objects_failed", "Objects rejected", labels=["simulation"]),
            "lag_p99_ms": GaugeMetricFamily(
                "simkube_driver_lag_p99_milliseconds", "p99 event lag", labels=["simulation"]),
        }
        running = GaugeMetricFamily("simkube_driver_simulations", "Simulations by state",
                                    labels=["state"])
        counts: dict[str, int] = {}
        for simulation in self._registry.all():
            snapshot = simulation.snapshot()
            counts[snapshot.state.value] = counts.get(snapshot.state.value, 0) + 1
            for key, family in families.items():
                family.add_metric([snapshot.name], float(getattr(snapshot, key)))
        for state, count in counts.items():
            running.add_metric([state], count)
        return [*families.values(), running]
