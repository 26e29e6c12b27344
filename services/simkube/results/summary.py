"""The run's summary, computed from its timeline, scaling rows and pods.

Everything is derived from the rows that are also on disk (never from live counters), so a
summary can be recomputed from the files and a restarted recorder's summary covers the whole
run. Node hours and cost use integrate.py's step rule over trace time; ``trace_seconds`` is the
trace time between the first and the last row (the span the node hours cover). Scale-ups and
-downs count steps.py's steps of the observed node counts.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from simkube.results import breakdown
from simkube.results.files import MONEY_DIGITS, TIME_DIGITS
from simkube.results.integrate import cost_of, node_hours, percentile
from simkube.results.model import (
    DriverSummary,
    GroupSummary,
    PodRow,
    PodsSummary,
    RunSummary,
    ScalingRow,
    TimelineRow,
)
from simkube.results.steps import node_steps


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, TIME_DIGITS)


UNSTARTED_NAMES = 50  # names kept in summary.json; pods.csv flags every one


def driver_summary(driver: Mapping[str, Any] | None) -> DriverSummary:
    driver = driver or {}

    def integer(key: str) -> int | None:
        value = driver.get(key)
        return None if value is None else int(value)

    def number(key: str) -> float | None:
        value = driver.get(key)
        return None if value is None else float(value)

    return DriverSummary(events_applied=integer("events_applied"),
                         events_total=integer("events_total"),
                         objects_failed=integer("objects_failed"),
                         lag_p99_ms=number("lag_p99_ms"),
                         achieved_speed=number("achieved_speed"),
                         held_seconds=number("held_seconds"))


def pods_summary(pods: Sequence[PodRow], timeline: Sequence[TimelineRow]) -> PodsSummary:
    pending = [pod.pending_s for pod in pods if pod.pending_s is not None]
    scheduled = sum(1 for pod in pods if pod.scheduled_trace_s is not None)
    waited = _unscheduled_waits(pods, run_end_s=timeline[-1].trace_s if timeline else None)
    unstarted = [f"{pod.namespace}/{pod.name}" for pod in pods if pod.bound_unstarted]
    return PodsSummary(
        seen=len(pods), scheduled=scheduled, never_scheduled=len(pods) - scheduled,
        succeeded=sum(1 for pod in pods if pod.phase == "Succeeded"),
        failed=sum(1 for pod in pods if pod.phase == "Failed"),
        pending_p50_s=_round(percentile(pending, p=50)),
        pending_p90_s=_round(percentile(pending, p=90)),
        pending_p99_s=_round(percentile(pending, p=99)),
        pending_max_s=max(pending, default=None),
        peak_pending=max((row.pods_pending for row in timeline), default=0),
        peak_running=max((row.pods_running for row in timeline), default=0),
        unscheduled_wait_p50_s=_round(percentile(waited, p=50)),
        unscheduled_wait_max_s=_round(max(waited, default=None)),
        bound_never_started=len(unstarted),
        bound_never_started_pods=unstarted[:UNSTARTED_NAMES])


def _unscheduled_waits(pods: Sequence[PodRow], *, run_end_s: float | None) -> list[float]:
    """How long each never-scheduled pod waited: until it ended, else until the run did."""
    waits = []
    for pod in pods:
        if pod.scheduled_trace_s is not None or pod.created_trace_s is None:
            continue
        end = pod.finished_trace_s if pod.finished_trace_s is not None else run_end_s
        if end is not None:
            waits.append(max(0.0, end - pod.created_trace_s))
    return waits


def groups_summary(timeline: Sequence[TimelineRow], scaling: Sequence[ScalingRow], *,
                   prices: Mapping[str, float], instance_types: Mapping[str, str] | None = None,
                   node_pools: Mapping[str, str] | None = None) -> dict[str, GroupSummary]:
    hours = node_hours(timeline)
    steps = node_steps(scaling)
    types, pools = instance_types or {}, node_pools or {}
    result = {}
    for group in sorted(hours):
        counts = [row.nodes.get(group, 0) for row in timeline]
        changes = [step.delta for step in steps if step.group == group]
        price = prices.get(group, 0.0)
        result[group] = GroupSummary(
            price_per_hour=price, peak_nodes=max(counts), min_nodes=min(counts),
            final_nodes=counts[-1], node_hours=round(hours[group], MONEY_DIGITS),
            cost_usd=round(cost_of({group: hours[group]}, prices=prices), MONEY_DIGITS),
            scale_ups=sum(1 for d in changes if d > 0),
            scale_downs=sum(1 for d in changes if d < 0),
            instance_type=types.get(group, ""), node_pool=pools.get(group, ""))
    return result


def run_summary(*, simulation: str, run: int, started_at: str, finished_at: str | None,
                speed: float, prices: Mapping[str, float], timeline: Sequence[TimelineRow],
                scaling: Sequence[ScalingRow], pods: Sequence[PodRow],
                driver: Mapping[str, Any] | None, state: str,
                timers: Mapping[str, Any] | None = None,
                instance_types: Mapping[str, str] | None = None,
                node_pools: Mapping[str, str] | None = None,
                autoscalers: Collection[str] = (),
                hpas: Mapping[str, Mapping[str, Any]] | None = None) -> RunSummary:
    """``instance_types`` and ``node_pools`` map groups to what their nodes are labelled;
    ``autoscalers`` are those whose Events or nodes were observed (breakdown.py)."""
    groups = groups_summary(timeline, scaling, prices=prices, instance_types=instance_types,
                            node_pools=node_pools)
    first, last = (timeline[0], timeline[-1]) if timeline else (None, None)
    return RunSummary(
        simulation=simulation, run=run, started_at=started_at, finished_at=finished_at,
        wall_seconds=round(last.wall_s, TIME_DIGITS) if last else 0.0,
        trace_seconds=round(last.trace_s - first.trace_s, TIME_DIGITS) if last and first else 0.0,
        speed=speed, groups=groups, pods=pods_summary(pods, timeline),
        node_hours=round(sum(g.node_hours for g in groups.values()), MONEY_DIGITS),
        cost_usd=round(sum(g.cost_usd for g in groups.values()), MONEY_DIGITS),
        autoscaler_events=sum(1 for row in scaling if row.source == "autoscaler"),
        driver=driver_summary(driver), state=state, timers=dict(timers or {}),
        autoscaler=breakdown.autoscaler_name(observed=autoscalers),
        disruptions=breakdown.disruptions(scaling),
        instance_types=breakdown.totals_by(groups, instance_types or {}),
        node_pools=breakdown.totals_by(groups, breakdown.pools_of(groups, node_pools or {})),
        hpas=dict(hpas or {}))
