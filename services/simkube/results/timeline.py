"""The timeline as the watches see it: a row whenever the live counts change, in trace time.

A 1 Hz sample is 20 s of trace at speed 20: a node that appeared between two samples counted
from the later one, and pending times shorter than a sample could not show in the curves. So
the recorder calls ``observe`` after every Node and Pod event (and list), with the wall and
trace time at which it observed it, and a row is due whenever the counts a row shows (pods by
phase, nodes per group) differ from the last ones: each curve is a step function exact to the
clock's resolution.

**Coalescing.** ``timeline.csv`` keeps trace time to the millisecond, so changes observed
within one millisecond of trace time cannot be told apart in it: they make one row, stamped
with the first of them and holding the counts after the last. To allow that, the newest row
is held back until a change at a later millisecond, the heartbeat or ``flush`` writes it (a
crash still loses at most one row). Events that change no count (a pod being bound, status
updates) make no row. A 10,000-pod run writes about three rows per pod (created, running,
ended) at high speeds, where nearly every change is a millisecond of its own: tens of
thousands of lines, a few microseconds each.

**Heartbeat.** ``observe(heartbeat=True)`` writes a row even when nothing changed (the
recorder does so every wall second), so a quiet run still has rows and its cost accumulates.
Each row's cumulative cost adds the previous row's nodes over the trace time between them
(integrate.py), exact for this step function. Every change of a group's node count is also
returned as a ``nodes`` scaling row stamped like the event; steps.py says which are one step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from simkube.results.files import TIME_DIGITS
from simkube.results.integrate import cost_of, step_node_hours
from simkube.results.model import STATIC_GROUP, ScalingRow, TimelineRow
from simkube.results.pods import PHASES

Counts = tuple[tuple[int, ...], dict[str, int]]  # pods per phase (PHASES order), nodes per group


class Timeline:
    def __init__(self, *, prices: Mapping[str, float], previous: TimelineRow | None,
                 write: Callable[[TimelineRow], None]) -> None:
        """``previous`` is the last row of a run being continued; ``write`` takes each row."""
        self._prices = dict(prices)
        self._write = write
        self._written = previous
        self._pending: TimelineRow | None = None
        self._groups = set(prices) | set(previous.nodes if previous else ())
        self._seen: Counts | None = None if previous is None else (
            _pods_of(previous), dict(previous.nodes))

    @property
    def last(self) -> TimelineRow | None:
        """The newest row, written or held back."""
        return self._pending or self._written

    def observe(self, *, wall_s: float, trace_s: float, phases: Mapping[str, int],
                nodes: Mapping[str, int], heartbeat: bool = False) -> list[ScalingRow]:
        """Counts as observed at these times: a row if they changed (or ``heartbeat``), and a
        ``nodes`` scaling row per group whose node count changed since the last observation."""
        self._groups.update(group for group, count in nodes.items()
                            if count or group != STATIC_GROUP)
        counts = {group: int(nodes.get(group, 0)) for group in sorted(self._groups)}
        seen = (tuple(int(phases.get(phase, 0)) for phase in PHASES), counts)
        before, self._seen = self._seen, seen
        if seen == before and not heartbeat:
            return []
        row_wall_s, row_trace_s = wall_s, trace_s
        pending = self._pending
        if pending is not None and (round(trace_s, TIME_DIGITS)
                                    <= round(pending.trace_s, TIME_DIGITS)):
            row_wall_s, row_trace_s = pending.wall_s, pending.trace_s  # the same millisecond
        else:
            self.flush()
        self._pending = self._row(wall_s=row_wall_s, trace_s=row_trace_s, counts=seen)
        if heartbeat:
            self.flush()
        if before is None:  # the first observation of a fresh run: nothing changed yet
            return []
        return [ScalingRow(wall_s=wall_s, trace_s=trace_s, group=group,
                           delta=count - before[1].get(group, 0), nodes_after=count,
                           source="nodes")
                for group, count in counts.items() if count != before[1].get(group, 0)]

    def flush(self) -> None:
        """Write the row held back, if any (before a summary is computed, and at the end)."""
        if self._pending is not None:
            self._write(self._pending)
            self._written, self._pending = self._pending, None

    def _row(self, *, wall_s: float, trace_s: float, counts: Counts) -> TimelineRow:
        before = self._written
        cost = 0.0
        if before is not None:
            trace_s, wall_s = max(trace_s, before.trace_s), max(wall_s, before.wall_s)
            hours = step_node_hours(before.nodes, trace_seconds=trace_s - before.trace_s)
            cost = before.cost_usd + cost_of(hours, prices=self._prices)
        pods, nodes = counts
        pending, running, succeeded, failed = pods
        return TimelineRow(wall_s=wall_s, trace_s=trace_s, pods_pending=pending,
                           pods_running=running, pods_succeeded=succeeded, pods_failed=failed,
                           nodes_total=sum(nodes.values()), nodes=nodes, cost_usd=cost)


def _pods_of(row: TimelineRow) -> tuple[int, ...]:
    return (row.pods_pending, row.pods_running, row.pods_succeeded, row.pods_failed)

