"""Writing a Simulation's status: merge patches on the status subresource, throttled progress.

Status is the user's window into a simulation (``kubectl get sim``, ``skctl status``), so
every write carries ``observedGeneration``, conditions keep their ``lastTransitionTime``
while their status does not change, and progress from the driver (several updates a second)
is written at most once a second: state changes go out at once.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from simkube.core.kubeapi import MERGE_PATCH, KubeClient
from simkube.core.simtime import achieved_speed
from simkube.gen.simkube.driver.v1 import driver_pb2
from simkube.simulation.names import simulation_path

PROGRESS_INTERVAL = 1.0


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def condition(*, kind: str, true: bool, reason: str, message: str,
              existing: Sequence[Mapping[str, Any]] = (), generation: int = 0,
              ) -> list[dict[str, Any]]:
    """``existing`` with condition ``kind`` (a ``simulation.states.ConditionType``) set; its
    transition time moves only on a change."""
    status = "True" if true else "False"
    previous = next((c for c in existing if c.get("type") == kind), None)
    changed = previous is None or previous.get("status") != status
    stamp = now() if changed or previous is None else previous.get("lastTransitionTime", now())
    updated = {"type": kind, "status": status, "reason": reason, "message": message,
               "lastTransitionTime": stamp, "observedGeneration": generation}
    return [*(dict(c) for c in existing if c.get("type") != kind), updated]


def progress_fields(progress: driver_pb2.SimulationProgress) -> dict[str, Any]:
    """What a driver progress update shows on the Simulation."""
    return {"eventsApplied": progress.events_applied, "eventsTotal": progress.events_total,
            "failures": progress.objects_failed,
            "traceTimeSeconds": round(progress.trace_time_ms / 1000, 3),
            "traceLengthSeconds": round(progress.trace_length_ms / 1000, 3),
            "lagMs": round(progress.lag_current_ms, 3),
            "lagP99Ms": round(progress.lag_p99_ms, 3), **run_speed(progress)}


def run_speed(progress: driver_pb2.SimulationProgress) -> dict[str, float]:
    """The run's achieved speed (once any wall time has passed) and time held, as status
    shows them (``achievedSpeed``, ``heldSeconds``)."""
    speed = achieved_speed(trace_s=progress.trace_time_ms / 1000,
                           wall_s=progress.wall_time_ms / 1000,
                           paused_s=progress.paused_ms / 1000)
    fields = {"heldSeconds": round(progress.held_ms / 1000, 3)}
    if speed is not None:
        fields["achievedSpeed"] = round(speed, 3)
    return fields


def generation_of(simulation: Mapping[str, Any]) -> int:
    return int(simulation.get("metadata", {}).get("generation") or 0)


async def patch_status(kube: KubeClient, *, name: str, fields: Mapping[str, Any],
                       generation: int) -> dict[str, Any]:
    body = {"status": {**fields, "observedGeneration": generation}}
    return await kube.request("PATCH", f"{simulation_path(name)}/status", body=body,
                              content_type=MERGE_PATCH)


class StatusWriter:
    """Keeps one simulation's status in memory and writes what changed."""

    def __init__(self, *, kube: KubeClient, name: str, status: Mapping[str, Any],
                 generation: Callable[[], int],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._kube = kube
        self._name = name
        self.status: dict[str, Any] = dict(status)
        self._generation = generation
        self._clock = clock
        self._last_write = float("-inf")
        self._unwritten: dict[str, Any] = {}

    @property
    def state(self) -> str | None:
        value = self.status.get("state")
        return str(value) if value else None

    async def write(self, **fields: Any) -> None:
        """Write ``fields`` (and any progress held back) now."""
        self.status.update(fields)
        pending = {**self._unwritten, **fields}
        self._unwritten = {}
        self._last_write = self._clock()
        await patch_status(self._kube, name=self._name, fields=pending,
                           generation=self._generation())

    async def progress(self, **fields: Any) -> bool:
        """Record ``fields``; write them unless the last write was under a second ago."""
        changed = {k: v for k, v in fields.items() if self.status.get(k) != v}
        self.status.update(fields)
        self._unwritten.update(changed)
        if not self._unwritten or self._clock() - self._last_write < PROGRESS_INTERVAL:
            return False
        await self.write()
        return True
