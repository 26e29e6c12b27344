"""Clocks and samples: what one timeline row says, and the scaling it reveals.

``RunClock`` stamps observations: ``wall_s`` is monotonic seconds since the run started
(continued across a recorder restart from the run's start time), ``trace_s`` is the injected
replay clock, held non-decreasing (a restarted sk-ctrl may report 0 until the driver's first
progress message, which must not turn into negative time or cost). ``Sampler`` turns live
counts into a ``TimelineRow``, accumulating cost from the previous row (see integrate.py) and
reporting each group whose node count changed since that row as a ``nodes`` scaling row.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from simkube.core.simtime import TimeScale
from simkube.results.integrate import cost_of, step_node_hours
from simkube.results.model import STATIC_GROUP, ScalingRow, TimelineRow


def utc_now() -> datetime:
    return datetime.now(UTC)


class RunClock:
    def __init__(self, *, trace_clock: Callable[[], float], scale: TimeScale,
                 started_at: datetime, trace_floor: float = 0.0,
                 monotonic: Callable[[], float] = time.monotonic,
                 now: Callable[[], datetime] = utc_now) -> None:
        self.started_at = started_at
        self._trace_clock = trace_clock
        self._scale = scale
        self._monotonic = monotonic
        self._now = now
        self._wall_base = max((now() - started_at).total_seconds(), 0.0)
        self._mono_base = monotonic()
        self._trace = trace_floor

    def wall_s(self) -> float:
        return self._wall_base + self._monotonic() - self._mono_base

    def trace_s(self) -> float:
        self._trace = max(self._trace, float(self._trace_clock()))
        return self._trace

    def trace_at(self, when: datetime) -> float:
        """The trace time of a past API timestamp, assuming replay ran at ``scale`` since."""
        return self.trace_s() - self._scale.to_trace((self._now() - when).total_seconds())


class Sampler:
    def __init__(self, *, prices: Mapping[str, float], previous: TimelineRow | None) -> None:
        self._prices = dict(prices)
        self._previous = previous
        self._groups = set(prices) | set(previous.nodes if previous else ())

    @property
    def previous(self) -> TimelineRow | None:
        return self._previous

    def sample(self, *, wall_s: float, trace_s: float, phases: Mapping[str, int],
               nodes: Mapping[str, int]) -> tuple[TimelineRow, list[ScalingRow]]:
        before = self._previous
        self._groups.update(group for group, count in nodes.items()
                            if count or group != STATIC_GROUP)
        counts = {group: int(nodes.get(group, 0)) for group in sorted(self._groups)}
        cost = 0.0
        scaling: list[ScalingRow] = []
        if before is not None:
            trace_s = max(trace_s, before.trace_s)
            wall_s = max(wall_s, before.wall_s)
            hours = step_node_hours(before.nodes, trace_seconds=trace_s - before.trace_s)
            cost = before.cost_usd + cost_of(hours, prices=self._prices)
            scaling = [ScalingRow(wall_s=wall_s, trace_s=trace_s, group=group,
                                  delta=count - before.nodes.get(group, 0),
                                  nodes_after=count, source="nodes")
                       for group, count in counts.items()
                       if count != before.nodes.get(group, 0)]
        row = TimelineRow(
            wall_s=wall_s, trace_s=trace_s, pods_pending=int(phases.get("Pending", 0)),
            pods_running=int(phases.get("Running", 0)),
            pods_succeeded=int(phases.get("Succeeded", 0)),
            pods_failed=int(phases.get("Failed", 0)), nodes_total=sum(counts.values()),
            nodes=counts, cost_usd=cost)
        self._previous = row
        return row, scaling
