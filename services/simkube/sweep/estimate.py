"""How long a sweep will take on the wall clock, before it starts.

A point replays ``duration`` of trace time ``repetitions`` times at ``speed``, plus what a
point costs besides the replay: starting and stopping its environment, sk-ctrl's run setup
and teardown, waiting for namespaces to go. That overhead is a measured constant, not a
guess: see ``RUN_OVERHEAD_S``. With ``--parallel N`` points are handed to N workers in order
as each frees up, which ``makespan`` plays out exactly. It assumes parallel points do not slow
each other down; on a 2-core machine they do (a point took 1.18x as long at ``--parallel 2``
and 1.36x at 3, docs/benchmarks.md, with other work on the machine), which is left out
rather than modelled from one loaded measurement.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from pathlib import Path

from simkube.core.durations import parse_duration
from simkube.core.simtime import TimeScale
from simkube.trace import read_trace

# docs/benchmarks.md, "Autoscaler study": two studies of 2,034 s of trace at 10x took 458 s
# of wall time each for two points, environments included: (458 - 2 x 203.4) / 2 = 25.6 s a
# point on top of its replay (environment up and down, the run's setup and cleanup).
RUN_OVERHEAD_S = 25.6


def trace_seconds(*, duration: str | None, trace: Path) -> float:
    """Trace seconds one run replays: ``duration``, else the trace's span (read once)."""
    if duration is not None:
        return parse_duration(duration, field="base.duration") / 1000
    whole = read_trace(trace)
    return max(0, (whole.end_ms or 0) - (whole.start_ms or 0)) / 1000


def point_seconds(*, repetitions: int, trace_s: float, scale: TimeScale) -> float:
    """Wall seconds of one point: its replays plus ``RUN_OVERHEAD_S``."""
    return repetitions * scale.to_wall(trace_s) + RUN_OVERHEAD_S


def makespan(durations: Sequence[float], *, parallel: int,
             busy: Sequence[float] = ()) -> float:
    """Wall seconds until ``durations`` (in order) are done by ``parallel`` workers, of which
    ``len(busy)`` are still busy for the given seconds (the points already running)."""
    if parallel < 1:
        raise ValueError("parallel must be at least 1")
    free_at = [*busy, *([0.0] * max(0, parallel - len(busy)))]
    heapq.heapify(free_at)
    for duration in durations:
        start = heapq.heappop(free_at)
        heapq.heappush(free_at, start + duration)
    return max(free_at, default=0.0)
