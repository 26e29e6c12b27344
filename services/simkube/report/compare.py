"""Runs side by side: every metric against the first run, and the differences worth a look.

A comparison answers "what changed?" before "what are the numbers?", so besides the table it
lists the metrics (and the curves over trace time, through ``curve_difference``) that moved
by more than a threshold relative to the first run. A metric that is zero in the first run
and non-zero in another has an infinite relative change: always called out. So is a run made
by another autoscaler than the first (Cluster Autoscaler against Karpenter): every metric
reads the same summary fields for both, and the first callout says which is which.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from simkube.report.fidelity import CurveDifference, curve_difference, step_difference
from simkube.report.loading import GROUP_PREFIX, RunData
from simkube.report.metrics import Metric, format_value, metric_rows, metric_values

DEFAULT_THRESHOLD = 0.05
CURVE_COLUMNS = ("nodes_total", "pods_pending", "pods_running", "cost_usd")
HPA_CURVE = "hpa."  # an HPA's desired replicas, compared like a timeline column


@dataclass(frozen=True, kw_only=True)
class MetricComparison:
    metric: Metric
    values: list[float | None]     # one per run
    absolute: list[float | None]   # value - first run's value (None for the first run)
    relative: list[float | None]   # absolute / |first| (inf when first is 0)


@dataclass(frozen=True, kw_only=True)
class Callout:
    key: str
    run: str
    relative: float
    text: str


@dataclass(frozen=True, kw_only=True)
class Comparison:
    runs: list[RunData]
    threshold: float
    rows: list[MetricComparison]
    curves: list[tuple[str, CurveDifference]]  # (run label, difference from the first run)
    callouts: list[Callout]


def compare_runs(runs: Sequence[RunData], *, threshold: float = DEFAULT_THRESHOLD,
                 ) -> Comparison:
    """Compare ``runs[1:]`` with ``runs[0]``."""
    metrics = metric_rows(runs)
    values = [metric_values(run, rows=metrics) for run in runs]
    rows = []
    for metric in metrics:
        column = [v.get(metric.key) for v in values]
        base = column[0]
        absolute = [None, *(_minus(v, base) for v in column[1:])]
        relative = [None, *(_relative(v, base) for v in column[1:])]
        rows.append(MetricComparison(metric=metric, values=column, absolute=absolute,
                                     relative=relative))
    curves = _curves(runs)
    titles = {run.label: run.title for run in runs}
    callouts = _autoscaler_callouts(runs)
    callouts += [_metric_callout(row, runs[index], index)
                 for row in rows for index in range(1, len(runs))
                 if _beyond(row.relative[index], threshold)]
    callouts += [Callout(key=f"curve.{diff.column}", run=label, relative=diff.relative,
                         text=f"{_curve_label(diff.column)} over trace time: {titles[label]} "
                              f"differs from {runs[0].title} by {_percent(diff.relative)} of "
                              f"the mean (mean |Δ| {diff.mean_abs:.3g}, "
                              f"max |Δ| {diff.max_abs:.3g})")
                 for label, diff in curves if _beyond(diff.relative, threshold)]
    return Comparison(runs=list(runs), threshold=threshold, rows=rows, curves=curves,
                      callouts=callouts)


def _autoscaler_callouts(runs: Sequence[RunData]) -> list[Callout]:
    first = runs[0]
    found = []
    for run in runs[1:]:
        if first.autoscaler and run.autoscaler and run.autoscaler != first.autoscaler:
            named = (first.label, run.label) == (first.autoscaler, run.autoscaler)
            found.append(Callout(
                key="autoscaler", run=run.label, relative=math.inf,
                text=f"autoscaler: {first.autoscaler} → {run.autoscaler}"
                     + ("" if named else f" ({first.label} → {run.label})")))
    return found


def _curves(runs: Sequence[RunData]) -> list[tuple[str, CurveDifference]]:
    groups = sorted({group for run in runs for group in run.groups})
    columns = [*CURVE_COLUMNS, *(f"{GROUP_PREFIX}{group}" for group in groups)]
    found = []
    for run in runs[1:]:
        for column in columns:
            if column in runs[0].timeline and column in run.timeline:
                found.append((run.label, curve_difference(runs[0], run, column=column)))
        for hpa in sorted(set(runs[0].hpas) & set(run.hpas)):
            a, b = runs[0].hpas[hpa], run.hpas[hpa]
            found.append((run.label, step_difference(
                a_times=a["trace_s"], a_values=a["desired"], b_times=b["trace_s"],
                b_values=b["desired"], column=f"{HPA_CURVE}{hpa}")))
    return found


def _metric_callout(row: MetricComparison, run: RunData, index: int) -> Callout:
    kind = row.metric.kind
    absolute = row.absolute[index] or 0.0
    relative = row.relative[index]
    sign = "+" if absolute >= 0 else "-"
    text = (f"{row.metric.label}: {format_value(row.values[0], kind=kind)} → "
            f"{format_value(row.values[index], kind=kind)} in {run.title} "
            f"({sign}{format_value(abs(absolute), kind=kind)}, {_percent(relative, signed=True)})")
    return Callout(key=row.metric.key, run=run.label,
                   relative=relative if relative is not None else 0.0, text=text)


def _minus(value: float | None, base: float | None) -> float | None:
    return None if value is None or base is None else value - base


def _relative(value: float | None, base: float | None) -> float | None:
    if value is None or base is None:
        return None
    if base == 0:
        return 0.0 if value == 0 else math.copysign(math.inf, value)
    return (value - base) / abs(base)


def _beyond(relative: float | None, threshold: float) -> bool:
    return relative is not None and abs(relative) > threshold


def _percent(relative: float | None, *, signed: bool = False) -> str:
    if relative is None:
        return "-"
    if math.isinf(relative):
        return "new" if relative > 0 else "gone"
    return f"{relative:+.1%}" if signed else f"{relative:.1%}"


def _curve_label(column: str) -> str:
    if column.startswith(HPA_CURVE):
        return f"HPA {column.removeprefix(HPA_CURVE)} desired replicas"
    if column.startswith(GROUP_PREFIX):
        return f"nodes of {column.removeprefix(GROUP_PREFIX)}"
    return {"nodes_total": "nodes (all groups)", "pods_pending": "pods pending",
            "pods_running": "pods running", "cost_usd": "cumulative cost"}.get(column, column)


def percent(relative: float | None) -> str:
    """A relative difference as people read it (``+12.5%``, ``new`` for 0 → something)."""
    return _percent(relative, signed=True)
