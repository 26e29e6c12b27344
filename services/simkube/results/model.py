"""The typed shape of one run's results: rows of the three CSV files and the JSON summary.

The recorder writes these and ``load_run`` returns them, so the writer and the reader (and the
report built on the reader) agree on one definition instead of on column strings. Times are
seconds: ``wall_s`` since the run started on the recorder's clock, ``trace_s`` on the replay
clock. Unknown values are ``None`` (an empty CSV cell, JSON ``null``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simkube.core.errors import SimkubeError

SCHEMA = 1
STATIC_GROUP = "static"


class ResultsError(SimkubeError):
    """A results file is missing, unreadable or not in the format this version writes."""


@dataclass(frozen=True, kw_only=True)
class TimelineRow:
    wall_s: float
    trace_s: float
    pods_pending: int
    pods_running: int
    pods_succeeded: int
    pods_failed: int
    nodes_total: int
    nodes: Mapping[str, int]  # group id -> nodes in it from this row on
    cost_usd: float           # cumulative since the run started


@dataclass(frozen=True, kw_only=True)
class PodRow:
    namespace: str
    name: str
    group: str | None               # the node group of the node it ran on
    node: str | None
    created_trace_s: float | None
    scheduled_trace_s: float | None
    pending_s: float | None         # time to schedule, trace seconds
    finished_trace_s: float | None  # first seen Succeeded/Failed, or deleted
    phase: str                      # last phase seen
    # Bound to a node and not started within the grace (results/starting.py): what a stuck
    # fake node looks like. Stays set if the pod started after all.
    bound_unstarted: bool = False


@dataclass(frozen=True, kw_only=True)
class ScalingRow:
    wall_s: float
    trace_s: float
    group: str
    delta: int
    nodes_after: int
    source: str  # "nodes" (observed) or "autoscaler" (an autoscaler's Event)
    # For "autoscaler" rows, why: CA's Event reason (TriggeredScaleUp, ScaleDown, ...) or
    # Karpenter's (Launched; a disruption's Empty, Underutilized, Drifted, ...).
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class GroupSummary:
    price_per_hour: float
    peak_nodes: int
    min_nodes: int
    final_nodes: int
    node_hours: float
    cost_usd: float
    scale_ups: int
    scale_downs: int
    # What the group's nodes are labelled (node.kubernetes.io/instance-type,
    # karpenter.sh/nodepool): "" when they did not say, and in summaries written before.
    instance_type: str = ""
    node_pool: str = ""


@dataclass(frozen=True, kw_only=True)
class PodsSummary:
    seen: int
    scheduled: int
    never_scheduled: int
    succeeded: int
    failed: int
    pending_p50_s: float | None
    pending_p90_s: float | None
    pending_p99_s: float | None
    pending_max_s: float | None
    peak_pending: int
    peak_running: int
    # Pods that never got a node waited from creation until they ended or the run did: the
    # percentiles above cover scheduled pods only, and would read "fast" when capacity ran
    # out. None in summaries written before these fields existed, and when every pod ran.
    unscheduled_wait_p50_s: float | None = None
    unscheduled_wait_max_s: float | None = None
    # Pods bound to a node that had not started after the grace: KWOK never ran them (#18).
    bound_never_started: int = 0
    bound_never_started_pods: Sequence[str] = ()  # namespace/name, at most 50


@dataclass(frozen=True, kw_only=True)
class DriverSummary:
    events_applied: int | None = None
    events_total: int | None = None
    objects_failed: int | None = None
    lag_p99_ms: float | None = None
    # Trace seconds per wall second, a user's pauses left out (core.simtime.achieved_speed),
    # and wall seconds the clock was held for the autoscaler; None in older summaries.
    achieved_speed: float | None = None
    held_seconds: float | None = None


@dataclass(frozen=True, kw_only=True)
class RunSummary:
    simulation: str
    run: int
    started_at: str               # RFC 3339, UTC
    finished_at: str | None       # None while the run is still being recorded
    wall_seconds: float
    trace_seconds: float
    speed: float
    groups: Mapping[str, GroupSummary]
    pods: PodsSummary
    node_hours: float
    cost_usd: float
    autoscaler_events: int
    driver: DriverSummary = field(default_factory=DriverSummary)
    state: str = "Running"
    # The run's timers: asked (trace time), given (wall), effective, and floor warnings.
    timers: Mapping[str, Any] = field(default_factory=dict)
    # Which autoscaler made the nodes (results/breakdown.py): cluster-autoscaler, karpenter
    # or none; nodes removed by the autoscaler by why; node hours and cost per instance type
    # and per NodePool, a group without one (Cluster Autoscaler's) standing for its own pool
    # ({"node_hours": h, "cost_usd": c}). Absent ("", {}) in summaries written before.
    autoscaler: str = ""
    disruptions: Mapping[str, int] = field(default_factory=dict)
    instance_types: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    node_pools: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    # Per HPA (namespace/name without the run's prefix): scale events, desired replicas'
    # peak/min/final, mean desired and current replicas (results/hpas.py). {} before.
    hpas: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    schema: int = SCHEMA


@dataclass(frozen=True, kw_only=True)
class HpaRow:
    """A change of one HPA's status (results/hpas.py)."""

    wall_s: float
    trace_s: float
    hpa: str  # namespace (without the run's prefix) / name
    desired: int
    current: int


@dataclass(frozen=True, kw_only=True)
class RunResults:
    run_dir: Path
    timeline: tuple[TimelineRow, ...]
    pods: tuple[PodRow, ...]
    scaling: tuple[ScalingRow, ...]
    summary: RunSummary
    hpas: tuple[HpaRow, ...] = ()  # hpas.csv; empty for runs without HPAs or before it

    @property
    def groups(self) -> tuple[str, ...]:
        """Group ids in timeline column order."""
        return tuple(self.timeline[0].nodes) if self.timeline else tuple(self.summary.groups)
