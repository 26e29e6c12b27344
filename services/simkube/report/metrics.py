"""The numbers a report shows, flattened from a run's summary into one ordered list.

The terminal table, the HTML table, ``--json`` and compare's differences all walk the same
list of ``Metric`` rows, so a number can never appear in one view and be missing (or be
formatted differently) in another. Keys are stable dotted paths (``groups.general.cost_usd``)
that scripts can rely on; labels are for people.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from simkube.report import breakdown
from simkube.report.formatting import format_value
from simkube.report.loading import RunData

__all__ = ["Metric", "format_value", "headlines", "metric_rows", "metric_values"]

# (summary key, label, kind) per group, then for the run as a whole.
_GROUP_FIELDS = (("peak_nodes", "peak nodes", "count"), ("final_nodes", "final nodes", "count"),
                 ("node_hours", "node hours", "hours"), ("cost_usd", "cost", "usd"),
                 ("scale_ups", "scale ups", "count"), ("scale_downs", "scale downs", "count"))
_POD_FIELDS = (("seen", "pods seen", "count"), ("scheduled", "pods scheduled", "count"),
               ("never_scheduled", "pods never scheduled", "count"),
               ("succeeded", "pods succeeded", "count"), ("failed", "pods failed", "count"),
               ("peak_pending", "peak pods pending", "count"),
               ("peak_running", "peak pods running", "count"),
               ("pending_p50_s", "time pending p50", "seconds"),
               ("pending_p90_s", "time pending p90", "seconds"),
               ("pending_p99_s", "time pending p99", "seconds"),
               ("pending_max_s", "time pending max", "seconds"),
               ("unscheduled_wait_p50_s", "never scheduled: waited p50", "seconds"),
               ("unscheduled_wait_max_s", "never scheduled: waited max", "seconds"),
               ("bound_never_started", "pods bound but never started", "count"))
_HPA_FIELDS = (("mean_desired", "mean replicas (desired)", "count"),
               ("mean_current", "mean replicas (current)", "count"),
               ("peak_desired", "peak replicas", "count"),
               ("final_desired", "final replicas", "count"),
               ("scale_events", "scale events", "count"),
               ("scale_ups", "scale ups", "count"), ("scale_downs", "scale downs", "count"))
_DRIVER_FIELDS = (("events_applied", "driver events applied", "count"),
                  ("events_total", "driver events total", "count"),
                  ("objects_failed", "driver failures", "count"),
                  ("lag_p99_ms", "driver lag p99", "ms"),
                  ("achieved_speed", "achieved speed (trace/wall)", "speed"),
                  ("held_seconds", "clock held for the autoscaler", "seconds"))


@dataclass(frozen=True, kw_only=True)
class Metric:
    path: tuple[str, ...]  # where the value sits in summary.json
    label: str
    kind: str  # count | hours | usd | seconds | ms
    section: str

    @property
    def key(self) -> str:
        return ".".join(self.path)


def metric_rows(runs: Sequence[RunData]) -> list[Metric]:
    """The rows for these runs: every group any of them has, in a fixed order."""
    groups = sorted({group for run in runs for group in run.groups})
    rows = [Metric(path=("groups", group, field), label=f"{group}: {label}", kind=kind,
                   section="nodes") for group in groups for field, label, kind in _GROUP_FIELDS]
    rows += [Metric(path=("nodes", "peak_total"), label="all groups: peak nodes", kind="count",
                    section="nodes"),
             Metric(path=("node_hours",), label="all groups: node hours", kind="hours",
                    section="nodes"),
             Metric(path=("cost_usd",), label="all groups: cost", kind="usd", section="nodes"),
             Metric(path=("autoscaler_events",), label="autoscaler events", kind="count",
                    section="nodes")]
    rows += _breakdown_rows(runs)
    rows += [Metric(path=("pods", field), label=label, kind=kind, section="pods")
             for field, label, kind in _POD_FIELDS]
    hpas = sorted({str(name) for run in runs for name in run.summary.get("hpas") or {}})
    rows += [Metric(path=("hpas", hpa, field), label=f"HPA {hpa}: {label}", kind=kind,
                    section="hpa") for hpa in hpas for field, label, kind in _HPA_FIELDS]
    rows += [Metric(path=("driver", field), label=label, kind=kind, section="replay")
             for field, label, kind in _DRIVER_FIELDS]
    rows += [Metric(path=("wall_seconds",), label="wall duration", kind="seconds",
                    section="replay"),
             Metric(path=("trace_seconds",), label="trace duration", kind="seconds",
                    section="replay")]
    return rows


def _breakdown_rows(runs: Sequence[RunData]) -> list[Metric]:
    """Node hours and cost per instance type and per NodePool, and the nodes the
    autoscaler removed by why (report/breakdown.py): whatever any of the runs has."""
    return [Metric(path=path, label=label, kind=kind, section="nodes")
            for path, label, kind in breakdown.metric_specs(runs)]


def metric_values(run: RunData, *, rows: Sequence[Metric] | None = None,
                  ) -> dict[str, float | None]:
    """Every metric of one run by key (None when the run's summary does not have it); with
    ``rows``, those (the rows of several runs compared, some this run may lack)."""
    values: dict[str, float | None] = {}
    for row in metric_rows([run]) if rows is None else rows:
        if row.key == "nodes.peak_total":
            totals = run.timeline.get("nodes_total", [])
            values[row.key] = max(totals) if totals else None
        else:
            values[row.key] = breakdown.filled(run.summary, row.path,
                                               _number(_lookup(run.summary, row.path)))
    return values


def headlines(run: RunData) -> list[str]:
    """A few sentences with the numbers a user looks at first."""
    values = metric_values(run)
    summary = run.summary

    def show(key: str, kind: str) -> str:
        return format_value(values.get(key), kind=kind)

    per_group = ", ".join(f"{group} {show(f'groups.{group}.peak_nodes', 'count')}"
                          for group in run.groups)
    return [f"{run.title}: {summary.get('state', 'unknown state')}, "
             f"{show('trace_seconds', 'seconds')} of trace in {show('wall_seconds', 'seconds')}",
             f"peak nodes {show('nodes.peak_total', 'count')}"
             + (f" ({per_group})" if per_group else ""),
             f"cost {show('cost_usd', 'usd')} for {show('node_hours', 'hours')} of nodes",
             f"pods: {show('pods.seen', 'count')} seen, {show('pods.scheduled', 'count')} "
             f"scheduled, {show('pods.never_scheduled', 'count')} never scheduled",
             f"time pending of scheduled pods: p50 {show('pods.pending_p50_s', 'seconds')}, "
             f"p99 {show('pods.pending_p99_s', 'seconds')}, "
             f"max {show('pods.pending_max_s', 'seconds')}"
             + (f"; never scheduled ones waited up to "
                f"{show('pods.unscheduled_wait_max_s', 'seconds')}"
                if values.get("pods.unscheduled_wait_max_s") is not None else ""),
             *_unstarted_warning(summary), *_timer_lines(summary),
             f"scale ups {_sum_groups(values, run.groups, 'scale_ups')}, "
             f"scale downs {_sum_groups(values, run.groups, 'scale_downs')}",
             *breakdown.headline_lines(summary), *_hpa_lines(summary),
             f"driver: {show('driver.events_applied', 'count')}/"
             f"{show('driver.events_total', 'count')} events applied, "
             f"{show('driver.objects_failed', 'count')} failures",
             *_speed_line(summary, show)]


def _hpa_lines(summary: Mapping[str, Any]) -> list[str]:
    """One sentence per HPA: its replicas and how often it scaled."""
    hpas = summary.get("hpas") or {}
    def show(hpa: Mapping[str, Any], key: str) -> str:
        return format_value(_number(hpa.get(key)), kind="count")

    return [f"HPA {name}: replicas mean {show(h, 'mean_desired')}, peak "
            f"{show(h, 'peak_desired')}; {show(h, 'scale_events')} scale events "
            f"({show(h, 'scale_ups')} up, {show(h, 'scale_downs')} down)"
            for name, h in sorted(hpas.items()) if isinstance(h, Mapping)]


def _speed_line(summary: Mapping[str, Any], show: Callable[[str, str], str]) -> list[str]:
    """The speed the run achieved against the one asked, and the time held for the
    autoscaler; nothing for summaries written before either was recorded."""
    driver = summary.get("driver") or {}
    if driver.get("achieved_speed") is None:
        return []
    return [f"speed: {show('driver.achieved_speed', 'speed')} achieved of "
            f"{format_value(_number(summary.get('speed')), kind='speed')} asked, the clock "
            f"held {show('driver.held_seconds', 'seconds')} for the autoscaler"]


def _unstarted_warning(summary: Mapping[str, Any]) -> list[str]:
    """A sentence naming pods a fake node never started, when there are any (issue #18)."""
    pods = summary.get("pods") or {}
    count = pods.get("bound_never_started") or 0
    if not isinstance(count, int) or count <= 0:
        return []
    names = [str(n) for n in pods.get("bound_never_started_pods") or []][:5]
    more = f" and {count - len(names)} more" if count > len(names) else ""
    return [f"WARNING: {count} pod(s) bound to a node but never started (the simulator's "
            f"fault, not the workload's): {', '.join(names)}{more}"]


def _timer_lines(summary: Mapping[str, Any]) -> list[str]:
    """Where the run's timers went, and every floor that stretched one (issue #12)."""
    timers = summary.get("timers") or {}
    if not isinstance(timers, Mapping) or not timers:
        return []
    lines = [f"timers ÷ speed applied to: {timers.get('appliedTo') or 'nothing'}"]
    floored = [v for v in timers.get("values") or [] if isinstance(v, Mapping)
               and v.get("floored")]
    lines += [f"effective: {v.get('timer')} asked {v.get('traceTime')} of trace time, is "
              f"{v.get('effectiveTraceTime')} (wall {v.get('wallTime')})" for v in floored]
    lines += [f"WARNING: {warning}" for warning in timers.get("warnings") or []]
    return lines


def _sum_groups(values: Mapping[str, float | None], groups: Sequence[str], field: str) -> str:
    parts = [values.get(f"groups.{group}.{field}") for group in groups]
    return format_value(sum(p for p in parts if p is not None), kind="count")


def _lookup(tree: Mapping[str, Any], path: Sequence[str]) -> Any:
    node: Any = tree
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
