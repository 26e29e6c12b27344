"""When each pod of a Deployment was created, bound and started, as the API server told us.

"10,000 pods took N seconds" does not say which of the three stages a pod passes through was
slow: the ReplicaSet controller creating it, the scheduler binding it, or KWOK marking it
Running. The pods' own timestamps cannot tell (seconds only, and KWOK's Running stage
rewrites the PodScheduled condition's time), so this watches the pods while they go and
notes, to the millisecond on this side, the first event in which each was present, had a
``spec.nodeName`` and had phase Running. Watch delivery lags the API server's write by
milliseconds, much less than the stages being measured.
"""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import httpx


class Stage(StrEnum):
    CREATED = "created"
    BOUND = "bound"
    RUNNING = "running"


STAGES = tuple(Stage)


@dataclass(kw_only=True)
class PodStages:
    """First-seen times (monotonic seconds) of each stage, per pod name."""

    origin: float = field(default_factory=time.monotonic)
    seen: dict[Stage, dict[str, float]] = field(
        default_factory=lambda: {stage: {} for stage in STAGES})
    # Events showing a pod bound and not yet Running: one per pod when nothing else writes
    # the pod between its binding and KWOK's Running patch.
    bound_pending_events: int = 0

    def observe(self, pod: dict[str, Any], *, at: float) -> None:
        name = pod.get("metadata", {}).get("name")
        if not name:
            return
        reached = [Stage.CREATED]
        if pod.get("spec", {}).get("nodeName"):
            reached.append(Stage.BOUND)
        if pod.get("status", {}).get("phase") == "Running":
            reached.append(Stage.RUNNING)
        elif len(reached) == 2:
            self.bound_pending_events += 1
        for stage in reached:
            self.seen[stage].setdefault(name, at)

    def count(self, stage: Stage) -> int:
        return len(self.seen[stage])

    def summary(self, *, pods: int) -> dict[str, Any]:
        """For each stage: seconds from ``origin`` until 10/50/90/100 % of ``pods`` had
        reached it, and its rate between 10 % and 90 % (pods a second); for each step
        between stages, the per-pod wait's p50/p90/p99/max."""
        out: dict[str, Any] = {"bound_pending_events_per_pod": round(
            self.bound_pending_events / max(self.count(Stage.BOUND), 1), 2)}
        for stage in STAGES:
            times = sorted(t - self.origin for t in self.seen[stage].values())
            marks = {f"t{int(f * 100)}_s": _at(times, fraction=f, pods=pods)
                     for f in (0.1, 0.5, 0.9, 1.0)}
            low, high = marks["t10_s"], marks["t90_s"]
            rate = (None if low is None or high is None or high <= low
                    else round(0.8 * pods / (high - low), 1))
            out[stage.value] = {"pods": len(times), **marks, "pods_per_s_10_90": rate}
        for before, after in itertools.pairwise(STAGES):
            waits = sorted(self.seen[after][name] - started
                           for name, started in self.seen[before].items()
                           if name in self.seen[after])
            out[f"{before.value}_to_{after.value}_s"] = {
                f"p{int(q * 100)}": _quantile(waits, q) for q in (0.5, 0.9, 0.99, 1.0)}
        return out


def _at(times: list[float], *, fraction: float, pods: int) -> float | None:
    index = max(int(fraction * pods + 0.5) - 1, 0)
    return round(times[index], 2) if index < len(times) else None


def _quantile(values: list[float], fraction: float) -> float | None:
    if not values:
        return None
    return round(values[min(int(fraction * len(values)), len(values) - 1)], 3)


async def watch(client: httpx.AsyncClient, *, namespace: str, selector: str,
                resource_version: str, into: PodStages) -> None:
    """Feed every pod event matching ``selector`` from ``resource_version`` on into ``into``
    until the caller cancels. The API server ends a watch whose reader falls behind (this
    process, on a busy machine), so a watch that ends is resumed from the last event seen."""
    while True:
        resource_version = await _watch_once(client, namespace=namespace, selector=selector,
                                             resource_version=resource_version, into=into)


async def _watch_once(client: httpx.AsyncClient, *, namespace: str, selector: str,
                      resource_version: str, into: PodStages) -> str:
    params = {"watch": "1", "labelSelector": selector, "resourceVersion": resource_version,
              "timeoutSeconds": "3600"}
    async with client.stream("GET", f"/api/v1/namespaces/{namespace}/pods", params=params,
                             timeout=httpx.Timeout(30.0, read=None)) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if not line:
                continue
            event = json.loads(line)
            pod = event.get("object") or {}
            if event.get("type") == "ERROR":  # e.g. 410 Gone: start again from now
                return "0"
            resource_version = pod.get("metadata", {}).get("resourceVersion", resource_version)
            if event.get("type") in ("ADDED", "MODIFIED"):
                into.observe(pod, at=time.monotonic())
    return resource_version
