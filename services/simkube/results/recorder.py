"""The recorder of one run: watches feed the trackers, a sampling task writes the files.

Four list+watch loops (fake Nodes, Pods in the run's virtual namespaces, Cluster
Autoscaler's and Karpenter's Events) update small in-memory trackers; every ``interval``
wall seconds a sample of them becomes a timeline row (and scaling rows for changed node
counts), flushed at once, and pods bound to a node but not started in time are flagged
(``starting.py``). Pods and a ``Running`` summary are checkpointed every ``checkpoint``
seconds; ``stop()`` writes the final row, pods.csv and summary.json. ``start()`` on a
directory that already holds a run (a restarted sk-ctrl) continues it: wall time from the
recorded start, trace time and cumulative cost from the last row, pods from pods.csv and
their live objects.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from simkube.core.kubeapi import KubeClient
from simkube.core.logs import get_logger
from simkube.results import files, karpenter_events, reading, starting
from simkube.results.autoscaler_events import (
    COMPONENT,
    AutoscalerEvents,
    event_time,
    is_autoscaler_event,
    parse_changes,
)
from simkube.results.model import ResultsError, RunSummary, ScalingRow, TimelineRow
from simkube.results.nodes import NodeTracker
from simkube.results.pods import PodTracker, parse_time
from simkube.results.sampling import RunClock, Sampler, utc_now
from simkube.results.summary import run_summary
from simkube.results.watching import ListWatch, Object

log = get_logger(__name__)


def rfc3339(when: datetime) -> str:
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def run_dir(results_dir: Path, simulation: str, run: int) -> Path:
    """Where run ``run`` of ``simulation`` keeps its files."""
    return Path(results_dir) / simulation / f"run-{run}"


class Recorder:
    def __init__(self, *, kube: KubeClient, run_dir: Path, simulation: str, run: int,
                 namespace_prefix: str, groups: Mapping[str, float],
                 trace_clock: Callable[[], float], speed: float, interval: float = 1.0,
                 checkpoint: float = 30.0, monotonic: Callable[[], float] = time.monotonic,
                 now: Callable[[], datetime] = utc_now,
                 start_grace_s: float = starting.DEFAULT_GRACE_S,
                 timers: Mapping[str, Any] | None = None) -> None:
        if speed <= 0 or interval <= 0:
            raise ValueError("speed and interval must be > 0")
        self.run_dir = Path(run_dir)
        self._kube = kube
        self._simulation = simulation
        self._run = run
        self._prefix = namespace_prefix
        self._prices = {str(g): float(p) for g, p in groups.items()}
        self._trace_clock = trace_clock
        self._speed = float(speed)
        self._interval = interval
        self._checkpoint = checkpoint
        self._start_grace_s = start_grace_s
        self._timers = dict(timers or {})
        self._nudges: set[asyncio.Task[None]] = set()
        self._monotonic = monotonic
        self._now = now
        self._nodes = NodeTracker()
        self._pods = PodTracker(prefix=namespace_prefix, group_of=self._nodes.group_of)
        self._events = AutoscalerEvents()
        self._launches = karpenter_events.PendingLaunches()
        self._karpenter_seen = False
        self._scaling: list[ScalingRow] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._lock = asyncio.Lock()
        self._summary: RunSummary | None = None
        self._started = False
        self._events_since: datetime | None = None

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """List everything, write the first row, start watching and sampling."""
        async with self._lock:
            if self._started:
                return
            await asyncio.to_thread(self.run_dir.mkdir, parents=True, exist_ok=True)
            previous, started_at = await asyncio.to_thread(self._resume)
            self._clock = RunClock(trace_clock=self._trace_clock, speed=self._speed,
                                   started_at=started_at,
                                   trace_floor=previous[-1].trace_s if previous else 0.0,
                                   monotonic=self._monotonic, now=self._now)
            self._events_since = (started_at + timedelta(seconds=previous[-1].wall_s)
                                  if previous else started_at)
            self._sampler = Sampler(prices=self._prices,
                                    previous=previous[-1] if previous else None)
            groups = sorted(set(self._prices) | set(previous[-1].nodes if previous else ()))
            self._timeline = files.TimelineFile(self.run_dir / files.TIMELINE, groups=groups,
                                                rows=previous)
            self._scaling_file = files.AppendFile(self.run_dir / files.SCALING,
                                                  files.SCALING_COLUMNS)
            watches = [
                ListWatch(kube=self._kube, path="/api/v1/nodes", what="nodes",
                          on_list=self._nodes.replace, on_event=self._node_event),
                ListWatch(kube=self._kube, path="/api/v1/pods", what="pods",
                          on_list=self._pod_list, on_event=self._pod_event),
                *(ListWatch(kube=self._kube, path="/api/v1/events", what=f"{source} events",
                            query={"fieldSelector": f"source={source}"},
                            on_list=self._event_list, on_event=self._event_event)
                  for source in (COMPONENT, karpenter_events.COMPONENT))]
            try:
                for watch in watches:  # nodes first: pods look up their node's group
                    await watch.list()
            except BaseException:
                self._close_files()
                raise
            self._sample()
            if not previous:
                await asyncio.to_thread(self._write_summary, state="Running", final=False)
            self._tasks = [asyncio.create_task(w.run(), name=f"results-{w._what}")
                           for w in watches]
            self._tasks.append(asyncio.create_task(self._sampling(), name="results-sampling"))
            for task in self._tasks:
                task.add_done_callback(_report_failure)
            self._started = True
            log.info("recording results", run_dir=str(self.run_dir), resumed=bool(previous))

    async def stop(self, *, state: str = "Finished",
                   driver: Mapping[str, Any] | None = None) -> RunSummary:
        """Stop watching; write the last row, pods.csv and summary.json. Idempotent."""
        async with self._lock:
            if self._summary is not None:
                return self._summary
            if not self._started:
                raise ResultsError(f"the recorder of {self.run_dir} was never started")
            for task in (*self._tasks, *self._nudges):
                task.cancel()
            await asyncio.gather(*self._tasks, *self._nudges, return_exceptions=True)
            self._sample()
            self._close_files()
            self._summary = await asyncio.to_thread(self._write_summary, state=state,
                                                    final=True, driver=driver)
            log.info("results written", run_dir=str(self.run_dir), state=state,
                     node_hours=self._summary.node_hours, cost_usd=self._summary.cost_usd)
            return self._summary

    def sample(self) -> TimelineRow:
        """Take a sample now, in addition to the periodic ones (tests; a caller's milestone)."""
        if not self._started or self._summary is not None:
            raise ResultsError(f"the recorder of {self.run_dir} is not running")
        return self._sample()

    def _resume(self) -> tuple[list[TimelineRow], datetime]:
        timeline = self.run_dir / files.TIMELINE
        if not timeline.exists():
            return [], self._now()
        files.repair_tail(timeline)
        rows = reading.read_timeline(timeline)
        started: datetime | None = None
        summary = self.run_dir / files.SUMMARY
        if summary.exists():
            started = parse_time(reading.read_summary(summary).started_at)
        if started is None:
            started = self._now() - timedelta(seconds=rows[-1].wall_s if rows else 0.0)
        scaling = self.run_dir / files.SCALING
        if scaling.exists():
            files.repair_tail(scaling)
            self._scaling = reading.read_scaling(scaling)
        pods = self.run_dir / files.PODS
        if pods.exists():
            self._pods.restore(reading.read_pods(pods))
        return rows, started

    def _close_files(self) -> None:
        for name in ("_timeline", "_scaling_file"):
            handle = getattr(self, name, None)
            if handle is not None:
                handle.close()

    # -- sampling and files ----------------------------------------------------------------

    def _sample(self) -> TimelineRow:
        row, scaling = self._sampler.sample(
            wall_s=self._clock.wall_s(), trace_s=self._clock.trace_s(),
            phases=self._pods.counts(), nodes=self._nodes.counts())
        self._timeline.append(row)
        self._add_scaling(scaling)
        return row

    def _add_scaling(self, rows: list[ScalingRow]) -> None:
        for row in rows:
            self._scaling_file.write(files.scaling_line(row))
        self._scaling.extend(rows)

    async def _sampling(self) -> None:
        loop = asyncio.get_running_loop()
        next_at = loop.time() + self._interval
        next_checkpoint = loop.time() + self._checkpoint
        while True:
            await asyncio.sleep(max(next_at - loop.time(), 0.0))
            next_at = max(next_at + self._interval, loop.time())
            self._sample()
            self._check_started()
            if loop.time() >= next_checkpoint:
                next_checkpoint = loop.time() + self._checkpoint
                await asyncio.to_thread(self._write_summary, state="Running", final=False)

    def _check_started(self) -> None:
        """Flag and nudge pods bound to a node that have not started (results/starting.py)."""
        for pod in self._pods.overdue(trace_s=self._clock.trace_s(),
                                      grace_s=self._start_grace_s, speed=self._speed):
            task = asyncio.create_task(starting.nudge(
                self._kube, pod, when=rfc3339(self._now()), grace_s=self._start_grace_s))
            self._nudges.add(task)
            task.add_done_callback(self._nudges.discard)

    def _write_summary(self, *, state: str, final: bool,
                       driver: Mapping[str, Any] | None = None) -> RunSummary:
        pods = self._pods.rows()
        files.write_pods(self.run_dir / files.PODS, pods)
        summary = run_summary(
            simulation=self._simulation, run=self._run,
            started_at=rfc3339(self._clock.started_at),
            finished_at=rfc3339(self._now()) if final else None, speed=self._speed,
            prices=self._prices, timeline=self._timeline.rows, scaling=self._scaling,
            pods=pods, driver=driver, state=state, timers=self._timers,
            instance_types=self._nodes.instance_types(), node_pools=self._nodes.node_pools(),
            karpenter_seen=self._karpenter_seen)
        files.write_summary(self.run_dir / files.SUMMARY, summary)
        return summary

    # -- watch callbacks -------------------------------------------------------------------

    def _node_event(self, kind: str, obj: Object) -> None:
        self._nodes.observe(obj, deleted=kind == "DELETED")
        if kind == "ADDED":
            self._launched(obj)

    def _pod_list(self, items: list[Object]) -> None:
        self._pods.replace(items, trace_s=self._clock.trace_s(), trace_at=self._clock.trace_at)

    def _pod_event(self, kind: str, obj: Object) -> None:
        self._pods.observe(obj, trace_s=self._clock.trace_s(), deleted=kind == "DELETED")

    def _event_list(self, items: list[Object]) -> None:
        since, self._events_since = self._events_since, None  # only the first list filters
        for obj in items:
            if self._events.is_new(obj):
                when = event_time(obj)
                if since is None or (when is not None and when >= since):
                    self._autoscaler(obj)

    def _event_event(self, kind: str, obj: Object) -> None:
        if kind != "DELETED" and self._events.is_new(obj):
            self._autoscaler(obj)

    def _autoscaler(self, obj: Object) -> None:
        wall_s, trace_s = self._clock.wall_s(), self._clock.trace_s()
        if is_autoscaler_event(obj):
            changes = parse_changes(obj, group_of=self._nodes.group_of,
                                    counts=self._nodes.counts())
        elif karpenter_events.is_karpenter_event(obj):
            self._karpenter_seen = True
            claim = karpenter_events.launched_claim(obj)
            if claim is not None:  # recorded once its Node says which group it is in
                self._launches.add(claim, wall_s=wall_s, trace_s=trace_s)
            changes = karpenter_events.disruption(obj, group_of=self._nodes.group_of,
                                                  counts=self._nodes.counts())
        else:
            return
        self._add_scaling([ScalingRow(wall_s=wall_s, trace_s=trace_s, group=c.group,
                                      delta=c.delta, nodes_after=c.nodes_after,
                                      source="autoscaler", reason=c.reason)
                           for c in self._events.fresh(changes, wall_s=wall_s)])

    def _launched(self, obj: Object) -> None:
        """A Karpenter launch whose Node has just appeared: its row, at the launch's time."""
        name = str((obj.get("metadata") or {}).get("name") or "")
        group = self._nodes.group_of(name)
        launch = self._launches.arrived(name) if group is not None else None
        if launch is not None and group is not None:
            self._add_scaling([ScalingRow(
                wall_s=launch.wall_s, trace_s=launch.trace_s, group=group, delta=1,
                nodes_after=self._nodes.counts().get(group, 0), source="autoscaler",
                reason=karpenter_events.LAUNCHED)])


def _report_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("results task failed", task=task.get_name(), error=repr(task.exception()))
