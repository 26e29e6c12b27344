"""The recorder of one run: watches feed the trackers and the timeline, which write the files.

List+watch loops (fake Nodes, Karpenter's NodeClaims when the kind exists, Pods in the run's
virtual namespaces, Cluster Autoscaler's and Karpenter's Events) update small in-memory
trackers and announce autoscaler decisions (``observing.py``); each Node or Pod event that
changes the counts becomes a timeline row and each change of a group's node count a scaling
row, stamped when it was observed (``timeline.py``); each change of an HPA's desired or
current replicas is a row of hpas.csv (``hpas.py``). Every ``interval`` wall seconds a
heartbeat row is written all the same and pods bound to a node but not started in time are
flagged (``starting.py``). Pods and a ``Running`` summary are checkpointed every ``checkpoint``
seconds; ``stop()`` writes the final row, pods.csv and summary.json. ``start()`` on a
directory that already holds a run (a restarted sk-ctrl) continues it (``resuming.py``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from simkube.core.kubeapi import HORIZONTAL_POD_AUTOSCALERS, KubeClient, ListWatch
from simkube.core.logs import get_logger
from simkube.core.simtime import TimeScale
from simkube.results import files, hpas, starting
from simkube.results.clock import RunClock, utc_now
from simkube.results.karpenter_scaling import At
from simkube.results.model import ResultsError, RunSummary, ScalingRow, TimelineRow
from simkube.results.observing import Observer
from simkube.results.resuming import resume
from simkube.results.summary import run_summary
from simkube.results.timeline import Timeline

log = get_logger(__name__)


def rfc3339(when: datetime) -> str:
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def run_dir(results_dir: Path, simulation: str, run: int) -> Path:
    """Where run ``run`` of ``simulation`` keeps its files."""
    return Path(results_dir) / simulation / f"run-{run}"


class Recorder:
    def __init__(self, *, kube: KubeClient, run_dir: Path, simulation: str, run: int,
                 namespace_prefix: str, groups: Mapping[str, float],
                 trace_clock: Callable[[], float], scale: TimeScale, interval: float = 1.0,
                 checkpoint: float = 30.0, monotonic: Callable[[], float] = time.monotonic,
                 now: Callable[[], datetime] = utc_now,
                 start_grace_s: float = starting.DEFAULT_GRACE_S,
                 timers: Mapping[str, Any] | None = None) -> None:
        if interval <= 0:  # the scale was checked when it was made
            raise ValueError("interval must be > 0")
        self.run_dir = Path(run_dir)
        self._kube = kube
        self._simulation = simulation
        self._run = run
        self._prefix = namespace_prefix
        self._prices = {str(g): float(p) for g, p in groups.items()}
        self._trace_clock = trace_clock
        self._scale = scale
        self._interval = interval
        self._checkpoint = checkpoint
        self._start_grace_s = start_grace_s
        self._timers = dict(timers or {})
        self._nudges: set[asyncio.Task[None]] = set()
        self._monotonic = monotonic
        self._now = now
        self._observed = Observer(prefix=namespace_prefix, clock=lambda: self._clock,
                                  emit=self._add_scaling, changed=self._changed)
        self._scaling: list[ScalingRow] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._lock = asyncio.Lock()
        self._summary: RunSummary | None = None
        self._started = False
        self._following = False  # rows follow the watches once the first lists made a row

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """List everything, write the first row, start watching and sampling."""
        async with self._lock:
            if self._started:
                return
            await asyncio.to_thread(self.run_dir.mkdir, parents=True, exist_ok=True)
            earlier = await asyncio.to_thread(resume, self.run_dir, observer=self._observed,
                                              now=self._now())
            previous, started_at, self._scaling = (earlier.rows, earlier.started_at,
                                                   earlier.scaling)
            self._clock = RunClock(trace_clock=self._trace_clock, scale=self._scale,
                                   started_at=started_at,
                                   trace_floor=previous[-1].trace_s if previous else 0.0,
                                   monotonic=self._monotonic, now=self._now)
            groups = sorted(set(self._prices) | set(previous[-1].nodes if previous else ()))
            self._timeline_file = files.TimelineFile(self.run_dir / files.TIMELINE,
                                                     groups=groups, rows=previous)
            self._timeline = Timeline(prices=self._prices,
                                      previous=previous[-1] if previous else None,
                                      write=self._timeline_file.append)
            self._scaling_file = files.AppendFile(self.run_dir / files.SCALING,
                                                  files.SCALING_COLUMNS)
            self._hpas = hpas.HpaTracker(prefix=self._prefix,
                                         rows=hpas.read(self.run_dir / hpas.HPAS))
            self._hpa_file = hpas.open_file(self.run_dir)
            watches = [*self._observed.watches(self._kube, since=(
                started_at + timedelta(seconds=previous[-1].wall_s) if previous else started_at)),
                ListWatch(kube=self._kube, path=HORIZONTAL_POD_AUTOSCALERS.path(), what="hpas",
                          optional=True, on_list=self._hpa_list,
                          on_event=lambda _kind, obj: self._hpa_seen(obj))]
            try:
                for watch in watches:  # in order: nodes first, their groups are looked up
                    await watch.list()
            except BaseException:
                self._close_files()
                raise
            self._sample()
            self._following = True
            if not previous:
                await asyncio.to_thread(self._write_summary, state="Running", final=False)
            self._tasks = [asyncio.create_task(w.run(), name=f"results-{w.what}")
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
            self._following = False
            self._sample()
            self._close_files()
            self._summary = await asyncio.to_thread(self._write_summary, state=state,
                                                    final=True, driver=driver)
            log.info("results written", run_dir=str(self.run_dir), state=state,
                     node_hours=self._summary.node_hours, cost_usd=self._summary.cost_usd)
            return self._summary

    def sample(self) -> TimelineRow:
        """Write a row now, in addition to the heartbeat's (tests; a caller's milestone)."""
        if not self._started or self._summary is not None:
            raise ResultsError(f"the recorder of {self.run_dir} is not running")
        return self._sample()

    def _close_files(self) -> None:
        for name in ("_timeline_file", "_scaling_file", "_hpa_file"):
            handle = getattr(self, name, None)
            if handle is not None:
                handle.close()

    # -- rows and files --------------------------------------------------------------------

    def _sample(self) -> TimelineRow:
        self._observe(At(wall_s=self._clock.wall_s(), trace_s=self._clock.trace_s()),
                      heartbeat=True)
        return self._timeline_file.rows[-1]

    def _hpa_list(self, items: list[dict[str, Any]]) -> None:
        for obj in items:
            self._hpa_seen(obj)

    def _hpa_seen(self, obj: dict[str, Any]) -> None:
        row = self._hpas.observe(obj, at=At(wall_s=self._clock.wall_s(),
                                            trace_s=self._clock.trace_s()))
        if row is not None:
            self._hpa_file.write(hpas.line(row))

    def _changed(self, at: At) -> None:
        if self._following:  # not while start() lists: its first row shows all the lists
            self._observe(at, heartbeat=False)

    def _observe(self, at: At, *, heartbeat: bool) -> None:
        self._add_scaling(self._timeline.observe(
            wall_s=at.wall_s, trace_s=at.trace_s, phases=self._observed.pods.counts(),
            nodes=self._observed.nodes.counts(), heartbeat=heartbeat))

    def _add_scaling(self, rows: list[ScalingRow]) -> None:
        """Rows as they come: announced ones may be stamped before the last observed one."""
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
                await asyncio.to_thread(self._write_summary, state="Running", final=False,
                                        rows=(list(self._timeline_file.rows),
                                              list(self._scaling)))

    def _check_started(self) -> None:
        """Flag and nudge pods bound to a node that have not started (results/starting.py)."""
        for pod in self._observed.pods.overdue(trace_s=self._clock.trace_s(),
                                      grace_s=self._start_grace_s, scale=self._scale):
            task = asyncio.create_task(starting.nudge(
                self._kube, pod, when=rfc3339(self._now()), grace_s=self._start_grace_s))
            self._nudges.add(task)
            task.add_done_callback(self._nudges.discard)

    def _write_summary(self, *, state: str, final: bool,
                       driver: Mapping[str, Any] | None = None,
                       rows: tuple[list[TimelineRow], list[ScalingRow]] | None = None,
                       ) -> RunSummary:
        """In a thread; while watches run, ``rows`` are copies taken on the loop (timeline,
        scaling), which adds to them."""
        timeline, scaling = rows or (self._timeline_file.rows, self._scaling)
        pods = self._observed.pods.rows()
        nodes = self._observed.nodes
        files.write_pods(self.run_dir / files.PODS, pods)
        summary = run_summary(
            simulation=self._simulation, run=self._run,
            started_at=rfc3339(self._clock.started_at),
            finished_at=rfc3339(self._now()) if final else None, speed=self._scale.speed,
            prices=self._prices, timeline=timeline, scaling=scaling,
            pods=pods, driver=driver, state=state, timers=self._timers,
            instance_types=nodes.instance_types(), node_pools=nodes.node_pools(),
            autoscalers=self._observed.autoscalers(),
            hpas=hpas.summaries(list(self._hpas.rows),
                                end_trace_s=timeline[-1].trace_s if timeline else None))
        files.write_summary(self.run_dir / files.SUMMARY, summary)
        return summary


def _report_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("results task failed", task=task.get_name(), error=repr(task.exception()))
