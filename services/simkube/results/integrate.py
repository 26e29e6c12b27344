"""Node hours, cost and percentiles from timeline rows: the arithmetic behind the summary.

Node hours integrate each group's node count over *trace* time as a step function: between
two timeline rows the count is the one of the earlier row. The recorder writes a row at each
observed change (timeline.py), so that is exact to the trace millisecond for the counts it
saw, and timelines written before it (one row a wall second) are off by at most one such
interval per change. Cost is node hours times the group's price.
The cumulative ``cost_usd`` of the timeline and the summary's totals come from the same
function, so they always agree.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

from simkube.results.model import TimelineRow

SECONDS_PER_HOUR = 3600.0


def step_node_hours(nodes: Mapping[str, int], *, trace_seconds: float) -> dict[str, float]:
    """Node hours per group when ``nodes`` holds for ``trace_seconds`` (negative counts as 0)."""
    hours = max(trace_seconds, 0.0) / SECONDS_PER_HOUR
    return {group: count * hours for group, count in nodes.items()}


def cost_of(node_hours: Mapping[str, float], *, prices: Mapping[str, float]) -> float:
    """Dollars for ``node_hours`` at ``prices`` ($/h; a group without a price costs 0)."""
    return sum(hours * prices.get(group, 0.0) for group, hours in node_hours.items())


def node_hours(timeline: Sequence[TimelineRow]) -> dict[str, float]:
    """Node hours per group over a whole timeline (every group of any row is present)."""
    totals: dict[str, float] = {}
    for row in timeline:
        for group in row.nodes:
            totals.setdefault(group, 0.0)
    for before, after in itertools.pairwise(timeline):
        step = step_node_hours(before.nodes, trace_seconds=after.trace_s - before.trace_s)
        for group, hours in step.items():
            totals[group] += hours
    return totals


def percentile(values: Sequence[float], *, p: float) -> float | None:
    """The ``p``-th percentile (0..100), linear between closest ranks; None if no values.

    The same definition as numpy's default and ``statistics.quantiles(method="inclusive")``:
    rank ``(n - 1) * p / 100`` in the sorted values, interpolated.
    """
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)
