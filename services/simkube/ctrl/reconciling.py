"""Carrying out the decisions: finalizers, Pending/Blocked/Failed, the slot, deletes.

The reconciler keeps the latest copy of every Simulation (fed by the watch) and, whenever
something changed (or every few seconds), asks ``decisions.plan`` what each one needs and
does it. At most one ``SimulationRun`` is active; when it ends the Lease is released and the
next pass starts the oldest waiting simulation. Writes are idempotent, since our own writes
come back as watch events.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from typing import Any

import grpc

from simkube.core.kubeapi import MERGE_PATCH, ApiError
from simkube.core.logs import get_logger
from simkube.ctrl import events
from simkube.ctrl.context import Deps
from simkube.ctrl.decisions import Action, Decision, needs_block_write, plan
from simkube.ctrl.driving import DriverError
from simkube.ctrl.runs import SimulationRun
from simkube.ctrl.statuses import generation_of, now, patch_status
from simkube.simulation.names import FINALIZER, run_name, simulation_path
from simkube.simulation.states import ACTIVE, State

log = get_logger(__name__)
PERIOD_S = 5.0


class Reconciler:
    def __init__(self, *, deps: Deps) -> None:
        self.deps = deps
        self.cache: dict[str, dict[str, Any]] = {}
        self.active: SimulationRun | None = None
        self._ended: set[str] = set()  # uids whose run ended here (stale events may lag)
        self._dirty = asyncio.Event()

    def replace(self, simulations: Iterable[dict[str, Any]]) -> None:
        self.cache = {str(s["metadata"]["name"]): s for s in simulations}
        self._touch()

    def apply(self, kind: str, simulation: dict[str, Any]) -> None:
        name = str(simulation["metadata"]["name"])
        if kind == "DELETED":
            self.cache.pop(name, None)
        else:
            self.cache[name] = simulation
        self._touch()

    def _touch(self) -> None:
        if self.active is not None and self.active.name in self.cache:
            self.active.update(self.cache[self.active.name])
        self._dirty.set()

    async def run(self) -> None:
        """Reconcile on every change and every few seconds, until cancelled."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._dirty.wait(), timeout=PERIOD_S)
            self._dirty.clear()
            try:
                await self.reconcile()
            except (ApiError, DriverError, OSError) as exc:
                self.deps.metrics.reconcile_errors.inc()
                log.warning("reconcile failed, retrying", error=str(exc))
                await asyncio.sleep(1.0)
                self._dirty.set()

    async def shutdown(self) -> None:
        """Stop following the active run; the driver keeps it going for the next sk-ctrl."""
        if self.active is not None:
            await self.active.detach()

    async def reconcile(self) -> None:
        active = self.active
        if active is not None and active.done:
            self._ended.add(str(active.simulation["metadata"].get("uid")))
            await self.deps.lease.release(active.name)
            self.active = None
        holder = await self.deps.lease.holder()
        live = [s for s in self.cache.values()
                if str(s["metadata"].get("uid")) not in self._ended
                or s["metadata"].get("deletionTimestamp")]
        for decision in plan(live, lease_holder=holder,
                             active=self.active.name if self.active else None):
            simulation = self.cache.get(decision.name)
            if simulation is not None:
                await self._carry_out(decision, simulation)

    async def _carry_out(self, decision: Decision, simulation: dict[str, Any]) -> None:
        name = decision.name
        generation = generation_of(simulation)
        match decision.action:
            case Action.ADD_FINALIZER:
                await self._set_finalizers(simulation, add=True)
            case Action.SET_PENDING:
                await patch_status(self.deps.kube, name=name, generation=generation, fields={
                    "state": State.PENDING.value, "message": "accepted; waiting to start"})
                await events.emit(self.deps.kube, simulation, reason="Pending",
                                  message="accepted; waiting for the simulation slot")
            case Action.FAIL_SPEC:
                if self.active is not None and self.active.name == name:
                    await self.active.delete()
                    self.active = None
                    await self.deps.lease.release(name)
                await patch_status(self.deps.kube, name=name, generation=generation, fields={
                    "state": State.FAILED.value, "message": decision.message,
                    "endTime": now()})
                await events.emit(self.deps.kube, simulation, reason="InvalidSpec",
                                  message=decision.message, warning=True)
            case Action.FINALIZE:
                await self._finalize(simulation)
            case Action.BLOCK:
                if needs_block_write(simulation, decision.message):
                    await patch_status(self.deps.kube, name=name, generation=generation,
                                       fields={"state": State.BLOCKED.value,
                                               "message": decision.message})
                    await events.emit(self.deps.kube, simulation, reason="Blocked",
                                      message=decision.message)
            case Action.START:
                await self.deps.lease.acquire(name)
                self.active = SimulationRun(deps=self.deps, simulation=simulation)
                self.active.start()
                log.info("simulation started", simulation=name)
            case Action.KEEP:
                pass

    async def _finalize(self, simulation: dict[str, Any]) -> None:
        name = str(simulation["metadata"]["name"])
        status = simulation.get("status") or {}
        if self.active is not None and self.active.name == name:
            await self.active.delete()
            self.active = None
        elif status.get("state") in ACTIVE and status.get("currentRun"):
            try:  # a run this process never followed (e.g. started before a restart)
                await self.deps.driver.cancel(run_name(name, int(status["currentRun"])))
            except DriverError as exc:
                if exc.code != grpc.StatusCode.NOT_FOUND:
                    raise
        await self.deps.lease.release(name)
        await self._set_finalizers(simulation, add=False)
        log.info("simulation deleted", simulation=name)

    async def _set_finalizers(self, simulation: dict[str, Any], *, add: bool) -> None:
        meta = simulation["metadata"]
        current = [f for f in meta.get("finalizers") or [] if f != FINALIZER]
        wanted = [*current, FINALIZER] if add else current
        body = {"metadata": {"finalizers": wanted,
                             "resourceVersion": meta.get("resourceVersion")}}
        try:
            await self.deps.kube.request("PATCH", simulation_path(str(meta["name"])),
                                         body=body, content_type=MERGE_PATCH)
        except ApiError as exc:
            if exc.code not in (404, 409):  # gone, or changed: the next event retries
                raise
