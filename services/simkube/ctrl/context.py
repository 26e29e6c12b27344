"""What the modules of one simulation's lifecycle share: the process's ``Deps`` and the
``SimulationContext`` of the simulation being run.

The lifecycle is split by job (status, preparing, starting, following, re-attaching); each
job reads the latest copy of the Simulation, writes through the one ``StatusWriter`` and
emits Events about it, so those live here, in one object passed to each, rather than in an
orchestrator every job would have to import.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simkube.core.kubeapi import KubeClient
from simkube.core.simtime import REAL_TIME
from simkube.ctrl import events
from simkube.ctrl.autoscaler_loops import LoopSource
from simkube.ctrl.driving import Driver
from simkube.ctrl.leasing import SimulationLease
from simkube.ctrl.metrics import ControllerMetrics
from simkube.ctrl.recording import RunRecorder
from simkube.ctrl.retrying import Retrier
from simkube.ctrl.statuses import StatusWriter, generation_of
from simkube.ctrl.timing import TimerTarget
from simkube.gen.simkube.driver.v1 import driver_pb2
from simkube.simulation.spec import SimulationSpec, parse_spec
from simkube.simulation.trace_clock import TraceClock


@dataclass(kw_only=True)
class Deps:
    """What every simulation's lifecycle shares."""

    kube: KubeClient
    driver: Driver
    lease: SimulationLease
    results_dir: Path
    node_groups: str | None
    metrics: ControllerMetrics
    retry_budget: float = 60.0
    retry_delay: float = 1.0
    timer_target: TimerTarget | None = None
    loops: LoopSource | None = None  # CA's loop counters: runs may hold for the autoscaler

    def retrier(self) -> Retrier:
        return Retrier(address=self.driver.address, budget=self.retry_budget,
                       delay=self.retry_delay)


class SimulationContext:
    """One simulation while sk-ctrl runs it: its latest copy, status writer and run."""

    def __init__(self, *, deps: Deps, simulation: dict[str, Any]) -> None:
        self.deps = deps
        self.name = str(simulation["metadata"]["name"])
        self.simulation = simulation
        self.changed = asyncio.Event()  # set when a newer copy arrives (pausedTime)
        self.writer = StatusWriter(kube=deps.kube, name=self.name,
                                   status=simulation.get("status") or {},
                                   generation=lambda: generation_of(self.simulation))
        self.progress: driver_pb2.SimulationProgress | None = None
        self.clock = TraceClock(scale=REAL_TIME)  # replaced with the run's when it starts
        self.current: str | None = None  # the driver run being followed
        self.recorder: RunRecorder | None = None
        # Told of every progress update while the run holds (the holds' publisher).
        self.on_progress: Callable[[driver_pb2.SimulationProgress], None] = lambda _p: None
        self._spec: SimulationSpec | None = None  # parsed once per copy of the resource

    @property
    def generation(self) -> int:
        return generation_of(self.simulation)

    def spec(self) -> SimulationSpec:
        """The spec of the latest copy, parsed once (the reconciler has already refused a
        copy whose spec does not parse, so this raises only for a resource changed under us)."""
        if self._spec is None:
            self._spec = parse_spec(self.simulation)
        return self._spec

    def update(self, simulation: dict[str, Any]) -> None:
        self.simulation = simulation
        self._spec = None
        self.changed.set()

    async def emit(self, reason: str, message: str, *, warning: bool = False) -> None:
        await events.emit(self.deps.kube, self.simulation, reason=reason, message=message,
                          warning=warning)
