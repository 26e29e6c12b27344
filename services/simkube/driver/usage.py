"""Plays a trace's recorded usage into KWOK, in trace time, so metrics-server and HPAs see it.

Three loops share one state per workload with recorded usage:
- a pod watch (one, label-selected, like ``podtimer``) keeps each workload's current pods
  (found by the ``USAGE_WORKLOAD`` annotation the rewriter put on its templates) and how
  many of them run; pods an HPA adds are the workload's like any other;
- the samples, each applied when the replay clock reaches its ``t_ms`` (so pauses, holds and
  the speed apply as to events): the workload's load L(t) is the latest sample at or before
  t (step-hold; the tracer stamps each reading when metrics-server took it); before the
  first sample there is none, as the source's HPA had no reading before it either;
- a flush writes each changed workload's object once (``usage_objects``), the workloads'
  writes side by side: every ``FLUSH_S`` of wall time, so a burst of pods starting costs one
  write, and at once when a sample is due. A sample waiting for the next tick would reach
  metrics-server up to ``FLUSH_S`` of wall time late: 2.5 s of trace at speed 10, against an HPA
  that syncs every 15 s and whose source read the sample the moment it was stamped.
Each pod that starts running is handed to ``countable``, which marks it when the source's
HPA would have counted it. The objects are deleted when the replay ends (and are owned by
the SimulationRoot too, so deleting it removes any left behind). An environment without
KWOK's usage CRD (started without ``--metrics-server``) gets a warning and no usage.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

from simkube.core.kubeapi import (
    CLUSTER_RESOURCE_USAGES,
    PODS,
    ApiError,
    Cursor,
    KubeClient,
    apply,
    watch_from,
)
from simkube.core.logs import get_logger
from simkube.driver.clock import ReplayClock
from simkube.driver.countable import CountableMarker, scrape_grid
from simkube.driver.names import FIELD_MANAGER, SIMULATION_LABEL, USAGE_WORKLOAD
from simkube.driver.usage_objects import object_name, share, usage_object, workload_key
from simkube.trace import UsageSample, WorkloadUsage

log = get_logger(__name__)
FLUSH_S = 0.25
RETRY_DELAY = 1.0
ENDED_PHASES = frozenset({"Succeeded", "Failed"})


@dataclass(kw_only=True)
class WorkloadState:
    series: WorkloadUsage
    key: str
    namespace: str  # where its replayed pods live
    name: str  # its ClusterResourceUsage
    pods: dict[str, bool] = field(default_factory=dict)  # pod name -> running
    containers: int = 1
    sample: UsageSample | None = None
    written: tuple[Any, ...] | None = None

    def see(self, pod: dict[str, Any], *, deleted: bool) -> None:
        """One event of one of its pods: gone (deleted, deleting, ended) or present."""
        metadata = pod.get("metadata") or {}
        name = str(metadata.get("name", ""))
        phase = (pod.get("status") or {}).get("phase")
        if deleted or metadata.get("deletionTimestamp") or phase in ENDED_PHASES:
            self.pods.pop(name, None)
            return
        self.containers = max(1, len((pod.get("spec") or {}).get("containers") or []))
        self.pods[name] = phase == "Running"

    def wanted(self) -> tuple[Any, ...] | None:
        """(its pods, their share) as its object should say now; None: nothing to say yet."""
        running = sum(self.pods.values())
        if self.sample is None or running == 0:
            return None
        return (tuple(sorted(self.pods)), share(self.sample, running=running,
                                                containers=self.containers))


class UsagePlayer:
    def __init__(self, *, kube: KubeClient, simulation: str, clock: ReplayClock,
                 series: tuple[WorkloadUsage, ...], namespace_of: dict[str, str],
                 owner: dict[str, Any], flush_s: float = FLUSH_S) -> None:
        self._kube = kube
        self._simulation = simulation
        self._clock = clock
        self._owner = owner
        self._flush_s = flush_s
        self._selector = f"{SIMULATION_LABEL}={simulation}"
        self._states = {workload_key(s): WorkloadState(
            series=s, key=workload_key(s), namespace=namespace_of[s.namespace],
            name=object_name(simulation=simulation, key=workload_key(s))) for s in series}
        self.writes = 0  # objects written, for the benchmark and the final log line
        self.countable = CountableMarker(kube=kube, clock=clock)
        self._grids = {key: scrape_grid([sample.t_ms for sample in state.series.samples])
                       for key, state in self._states.items()}
        self._sample_due = asyncio.Event()  # a sample changed the load: flush now

    async def supported(self) -> bool:
        """Whether the environment emulates usage (KWOK's CRD is served)."""
        try:
            await self._kube.request("GET", CLUSTER_RESOURCE_USAGES.path(),
                                     query={"limit": "1"})
        except ApiError as exc:
            if exc.code != 404:
                raise
            log.warning("the trace records usage but the environment cannot emulate it: "
                        "HPAs will see no metrics (start it with 'skctl env up "
                        "--metrics-server')", simulation=self._simulation)
            return False
        return True

    async def run(self) -> None:
        """Watch pods, play samples and flush until cancelled (start it once the replay
        clock has started). A crash is logged: the replay goes on without usage."""
        try:
            await asyncio.gather(self._watch(), self._play(), self._flush_loop(),
                                 self.countable.run())
        except Exception as exc:
            log.error("usage replay stopped", simulation=self._simulation,  # noqa: TRY400
                      error=repr(exc))
            raise

    async def close(self) -> None:
        """Delete this simulation's usage objects."""
        with contextlib.suppress(ApiError):
            await self._kube.request("DELETE", CLUSTER_RESOURCE_USAGES.path(),
                                     query={"labelSelector": self._selector})
        log.info("usage replay ended", simulation=self._simulation,
                 workloads=len(self._states), writes=self.writes,
                 marked_countable=self.countable.marked)

    async def _play(self) -> None:
        moments = sorted({s.t_ms for state in self._states.values()
                          for s in state.series.samples})
        for t_ms in moments:
            await self._clock.wait_until(t_ms)
            for state in self._states.values():
                state.sample = state.series.at(t_ms)
            self._sample_due.set()

    async def _flush_loop(self) -> None:
        # The one writer: a sample wakes it early instead of writing beside it, so no object
        # is written twice at once.
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._sample_due.wait(), self._flush_s)
            self._sample_due.clear()
            await self.flush()

    async def flush(self) -> None:
        """Write every workload whose object differs from what it should be now, the
        workloads side by side (one apply each)."""
        await asyncio.gather(*(self._write(state) for state in self._states.values()
                               if state.wanted() not in (None, state.written)))

    async def _write(self, state: WorkloadState) -> None:
        wanted = state.wanted()
        if wanted is None:
            return
        pods, pod_share = wanted
        body = usage_object(name=state.name, simulation=self._simulation, key=state.key,
                            namespace=state.namespace, pods=list(pods), pod_share=pod_share,
                            owner=self._owner)
        try:
            await apply(self._kube, CLUSTER_RESOURCE_USAGES.path(name=state.name), body,
                        field_manager=FIELD_MANAGER)
        except ApiError as exc:  # tried again at the next flush
            log.warning("usage not written", workload=state.key, error=str(exc))
            return
        state.written = wanted
        self.writes += 1

    async def _watch(self) -> None:
        query = {"labelSelector": self._selector}
        while True:
            try:
                listing = await self._kube.request("GET", PODS.path(), query=query)
                for pod in listing.get("items") or []:
                    self.see(pod, deleted=False)
                cursor = Cursor(str(listing.get("metadata", {}).get("resourceVersion", "")))
                while True:
                    async for kind, pod in watch_from(self._kube, PODS.path(), cursor,
                                                      query=query):
                        self.see(pod, deleted=kind == "DELETED")
            except ApiError as exc:  # 410 Gone included: list again
                log.warning("usage pod watch interrupted", error=str(exc))
                await asyncio.sleep(RETRY_DELAY)

    def see(self, pod: dict[str, Any], *, deleted: bool) -> None:
        """Track one pod event of the simulation."""
        annotations = (pod.get("metadata") or {}).get("annotations") or {}
        key = annotations.get(USAGE_WORKLOAD, "")
        state = self._states.get(key)
        if state is None:
            return
        state.see(pod, deleted=deleted)
        metadata = pod.get("metadata") or {}
        name = str(metadata.get("name", ""))
        if state.pods.get(name):  # running: the source's HPA counted it some scrapes later
            self.countable.ready(namespace=str(metadata.get("namespace", state.namespace)),
                                 name=name, grid=self._grids[key])
