"""sk-ctrl's Prometheus metrics, registered next to the gRPC metrics of ``simkube.core.serving``.

Simulations by state are read from the controller's cache at scrape time (always current,
nothing to keep in sync); runs and reconcile errors are counters incremented where they happen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from simkube.simulation.states import State


class SimulationsByState(Collector):
    def __init__(self, simulations: Callable[[], Mapping[str, Mapping[str, Any]]]) -> None:
        self._simulations = simulations

    def collect(self) -> Iterator[GaugeMetricFamily]:
        counts = {state.value: 0 for state in State}
        for simulation in self._simulations().values():
            state = (simulation.get("status") or {}).get("state") or State.PENDING.value
            counts[state] = counts.get(state, 0) + 1
        family = GaugeMetricFamily("simkube_ctrl_simulations", "Simulations by state",
                                   labels=["state"])
        for state, count in sorted(counts.items()):
            family.add_metric([state], count)
        yield family


class ControllerMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.runs_started = Counter("simkube_ctrl_runs_started", "Driver runs started",
                                    registry=self.registry)
        self.runs_finished = Counter("simkube_ctrl_runs_finished", "Driver runs ended",
                                     ["state"], registry=self.registry)
        self.reconcile_errors = Counter("simkube_ctrl_reconcile_errors",
                                        "Reconcile passes that raised", registry=self.registry)

    def watch_simulations(self, simulations: Callable[[], Mapping[str, Mapping[str, Any]]],
                          ) -> None:
        self.registry.register(SimulationsByState(simulations))
