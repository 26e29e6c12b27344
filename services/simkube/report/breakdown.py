"""The autoscaler breakdown in a report: per instance type, per NodePool, removals by why.

A summary keeps these as mappings keyed by the names its run met (results/breakdown.py), so
a report's rows are the union over its runs, and what a missing name means depends on the
mapping. An instance type or a removal reason that a run with a breakdown did not have is
zero for it: "Karpenter used no m5.large" is 0 h, a difference a comparison must call out. A
NodePool is an autoscaler's own name (Cluster Autoscaler's groups, Karpenter's pools), so a
pool another run lacks is "-", never a difference. Runs recorded before the breakdown existed
(no ``autoscaler``) have "-" throughout.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from simkube.report.formatting import format_value
from simkube.report.loading import RunData

TOTALS = (("instance_types", "instance type"), ("node_pools", "NodePool"))
VALUES = (("node_hours", "node hours", "hours"), ("cost_usd", "cost", "usd"))
REMOVALS = "disruptions"
ZERO_WHEN_ABSENT = frozenset({"instance_types", REMOVALS})


def has_breakdown(summary: Mapping[str, Any]) -> bool:
    return bool(summary.get("autoscaler"))


def metric_specs(runs: Sequence[RunData]) -> list[tuple[tuple[str, ...], str, str]]:
    """(path in summary.json, label, kind) of every breakdown figure any of ``runs`` has."""
    def names(field: str) -> list[str]:
        return sorted({str(key) for run in runs for key in (run.summary.get(field) or {})})
    specs: list[tuple[tuple[str, ...], str, str]] = [
        ((field, name, value), f"{what} {name}: {label}", kind)
        for field, what in TOTALS for name in names(field) for value, label, kind in VALUES]
    specs += [((REMOVALS, reason), f"nodes removed: {reason}", "count")
              for reason in names(REMOVALS)]
    return specs


def filled(summary: Mapping[str, Any], path: Sequence[str], value: float | None) -> float | None:
    """``value``, or 0 where a run with a breakdown simply did not have that name."""
    if value is None and path and path[0] in ZERO_WHEN_ABSENT and has_breakdown(summary):
        return 0.0
    return value


def headline_lines(summary: Mapping[str, Any]) -> list[str]:
    """Which autoscaler, what it removed and why, and where the node hours went."""
    if not has_breakdown(summary):
        return []
    removed = {str(k): v for k, v in (summary.get(REMOVALS) or {}).items()}
    why = ", ".join(f"{reason} {count}" for reason, count in sorted(removed.items()))
    lines = [f"autoscaler: {summary.get('autoscaler')}; nodes removed: "
             f"{sum(removed.values())}" + (f" ({why})" if why else "")]
    for field, what in TOTALS:
        totals = summary.get(field) or {}
        if totals:
            lines.append(f"node hours by {what}: " + ", ".join(
                f"{name} {format_value(entry.get('node_hours'), kind='hours')} "
                f"({format_value(entry.get('cost_usd'), kind='usd')})"
                for name, entry in sorted(totals.items())))
    return lines
