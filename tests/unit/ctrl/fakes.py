"""A scripted sk-driver and the pieces every sk-ctrl lifecycle test builds on.

``FakeDriver`` has ``DriverClient``'s surface. Each run's WatchSimulation replays a script
(progress updates, or a ``DriverError`` that breaks the watch there), and waits when the
script is used up, as a real run between updates; any call can be made to fail first.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, cast

import grpc

from simkube.core.kubeapi import KubeClient
from simkube.ctrl.autoscaler_loops import LoopCounts, LoopsUnavailableError
from simkube.ctrl.context import Deps, SimulationContext
from simkube.ctrl.driving import STATE, DriverError
from simkube.ctrl.leasing import SimulationLease
from simkube.ctrl.metrics import ControllerMetrics
from simkube.ctrl.names import EVENTS_NAMESPACE
from simkube.gen.simkube.driver.v1 import driver_pb2
from simkube.simulation.names import simulation_path
from simkube.simulation.spec import SimulationSpec
from tests.support.fake_api import FakeApi

EVENTS = f"/api/v1/namespaces/{EVENTS_NAMESPACE}/events"
RUNNING, PAUSED = STATE.SIMULATION_STATE_RUNNING, STATE.SIMULATION_STATE_PAUSED
SUCCEEDED, FAILED = STATE.SIMULATION_STATE_SUCCEEDED, STATE.SIMULATION_STATE_FAILED


def progress(name: str, state: int = RUNNING, *, applied: int = 0, total: int = 10,
             trace_ms: int = 0, message: str = "") -> driver_pb2.SimulationProgress:
    return driver_pb2.SimulationProgress(
        name=name, state=cast(Any, state), events_applied=applied, events_total=total,
        trace_time_ms=trace_ms, trace_length_ms=60_000, message=message)


def refusal(code: grpc.StatusCode, message: str = "no") -> DriverError:
    return DriverError(code=code, message=message)


UNAVAILABLE = grpc.StatusCode.UNAVAILABLE
NOT_FOUND = grpc.StatusCode.NOT_FOUND


class FakeDriver:
    address = "fake-driver:50051"

    def __init__(self) -> None:
        self.known: dict[str, driver_pb2.SimulationProgress] = {}
        self.calls: list[tuple[str, str]] = []
        self.started: list[tuple[str, SimulationSpec]] = []
        self.gated: list[bool] = []  # gate_scale_up of each start
        self.pod_work_held: list[bool] = []  # hold_pod_work of each start
        self._scripts: defaultdict[str, asyncio.Queue[Any]] = defaultdict(asyncio.Queue)
        self._refusals: defaultdict[str, list[DriverError]] = defaultdict(list)
        self._held_since: dict[str, float] = {}
        self.expiries: list[str] = []

    def script(self, name: str, *steps: driver_pb2.SimulationProgress | DriverError) -> None:
        """What WatchSimulation of run ``name`` says next."""
        for step in steps:
            self._scripts[name].put_nowait(step)

    def refuse(self, method: str, *errors: DriverError) -> None:
        """The next calls of ``method`` fail with ``errors``, one each, in turn."""
        self._refusals[method].extend(errors)

    def called(self, method: str) -> list[str]:
        return [name for m, name in self.calls if m == method]

    def _enter(self, method: str, name: str = "") -> None:
        self.calls.append((method, name))
        if self._refusals[method]:
            raise self._refusals[method].pop(0)

    async def start(self, *, name: str, spec: SimulationSpec, gate_scale_up: bool = False,
                    hold_pod_work: bool = False) -> driver_pb2.SimulationProgress:
        self._enter("start", name)
        self.gated.append(gate_scale_up)
        self.pod_work_held.append(hold_pod_work)
        if name in self.known:
            raise refusal(grpc.StatusCode.ALREADY_EXISTS, f"run {name} exists")
        self.started.append((name, spec))
        self.known[name] = progress(name, STATE.SIMULATION_STATE_PENDING)
        return self.known[name]

    async def watch(self, name: str) -> AsyncIterator[driver_pb2.SimulationProgress]:
        self._enter("watch", name)
        if name not in self.known:
            raise refusal(NOT_FOUND, f"no run {name}")
        while True:
            step = await self._scripts[name].get()
            if isinstance(step, DriverError):
                raise step
            self.known[name] = step
            yield step

    async def _set(self, method: str, name: str, state: int) -> driver_pb2.SimulationProgress:
        self._enter(method, name)
        if name not in self.known:
            raise refusal(NOT_FOUND, f"no run {name}")
        updated = driver_pb2.SimulationProgress()
        updated.CopyFrom(self.known[name])  # what it answered before stays as it was
        updated.state = cast(Any, state)
        self.known[name] = updated
        return updated

    async def pause(self, name: str) -> driver_pb2.SimulationProgress:
        return await self._set("pause", name, PAUSED)

    async def resume(self, name: str) -> driver_pb2.SimulationProgress:
        return await self._set("resume", name, RUNNING)

    async def cancel(self, name: str) -> driver_pb2.SimulationProgress:
        return await self._set("cancel", name, STATE.SIMULATION_STATE_CANCELLED)

    async def hold(self, name: str, *, expires_after: str) -> driver_pb2.SimulationProgress:
        self.expiries.append(expires_after)
        return await self._held("hold", name, held=True)

    async def release(self, name: str) -> driver_pb2.SimulationProgress:
        return await self._held("release", name, held=False)

    async def _held(self, method: str, name: str, *, held: bool,
                    ) -> driver_pb2.SimulationProgress:
        """Like the driver: the state stays, ``held`` flips, ``held_ms`` grows by the
        wall time between a hold and its release."""
        self._enter(method, name)
        if name not in self.known:
            raise refusal(NOT_FOUND, f"no run {name}")
        updated = driver_pb2.SimulationProgress()
        updated.CopyFrom(self.known[name])
        if held and updated.state not in {RUNNING, PAUSED}:  # a release is always fine
            raise refusal(grpc.StatusCode.FAILED_PRECONDITION, f"run {name} has ended")
        now = asyncio.get_running_loop().time()
        if held and not updated.held:
            self._held_since[name] = now
            updated.held_since_unix_ms = round(time.time() * 1000)
        if not held and updated.held:
            updated.held_ms += round((now - self._held_since.pop(name, now)) * 1000)
            updated.held_since_unix_ms = 0
        updated.held = held
        self.known[name] = updated
        return updated

    async def runs(self) -> dict[str, driver_pb2.SimulationProgress]:
        self._enter("runs")
        return dict(self.known)


class FakeLoops:
    """CA's counters; ``step`` runs on every read (a loop starting or finishing)."""

    def __init__(self, *, started: int = 5, finished: int = 4) -> None:
        self.counts = LoopCounts(started=started, finished=finished)
        self.reads = 0
        self.down = False
        self.step: Callable[[FakeLoops], None] = lambda _loops: None

    async def read(self) -> LoopCounts:
        self.reads += 1
        if self.down:
            raise LoopsUnavailableError("http://ca/metrics: connection refused")
        self.step(self)
        return self.counts

    def finish_loop_after(self, reads: int) -> None:
        """A loop that starts now and finishes ``reads`` reads later."""
        def step(loops: FakeLoops) -> None:
            if loops.reads == reads:
                loops.counts = LoopCounts(started=loops.counts.started + 1,
                                          finished=loops.counts.started + 1)
        self.step = step


def simulation(name: str = "shop", *, spec: dict[str, Any] | None = None,
               status: dict[str, Any] | None = None, generation: int = 1) -> dict[str, Any]:
    return {"apiVersion": "simkube.dev/v1alpha1", "kind": "Simulation",
            "metadata": {"name": name, "uid": f"uid-{name}", "generation": generation,
                         "resourceVersion": "7"},
            "spec": {"trace": {"path": "/traces/shop.sktrace"}, **(spec or {})},
            "status": status or {}}


def deps(api: FakeApi, driver: FakeDriver, tmp_path: Path, **overrides: Any) -> Deps:
    kube = cast(KubeClient, api)
    values: dict[str, Any] = {
        "kube": kube, "driver": driver, "results_dir": tmp_path / "results",
        "lease": SimulationLease(kube=kube, namespace="simkube-system"), "node_groups": None,
        "metrics": ControllerMetrics(), "retry_budget": 0.2, "retry_delay": 0.01}
    values.update(overrides)
    return Deps(**values)


def context(api: FakeApi, driver: FakeDriver, tmp_path: Path, sim: dict[str, Any] | None = None,
            **overrides: Any) -> SimulationContext:
    return SimulationContext(deps=deps(api, driver, tmp_path, **overrides),
                             simulation=sim or simulation())


def status_writes(api: FakeApi, name: str = "shop") -> list[dict[str, Any]]:
    """Every status patch sk-ctrl sent for ``name``, oldest first."""
    return [body["status"] for body in api.sent("PATCH", f"{simulation_path(name)}/status")]


def events(api: FakeApi) -> list[tuple[str, str, str]]:
    """Every Event sk-ctrl recorded: (type, reason, message)."""
    return [(body["type"], body["reason"], body["message"]) for body in api.sent("POST", EVENTS)]


def reasons(api: FakeApi) -> list[str]:
    return [reason for _, reason, _ in events(api)]


def counter(metrics: ControllerMetrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, labels)
    return value or 0.0
