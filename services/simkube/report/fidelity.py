"""How far apart two runs' curves are on the trace-time axis (replay fidelity).

Two replays of one trace never record at the same instants: the recorder writes a row when it
observes a change (and a heartbeat every wall second), and the replay clock drifts a little
between runs. Comparing rows one by one would measure the recording, not the simulation. A
timeline column is a step curve (a value holds until the next row), so both curves are
resampled on the union of their row times
inside the span both cover; between two consecutive grid points both curves are constant,
which makes the time-weighted mean of ``|a - b|`` exact rather than an approximation on an
arbitrary grid. The result is that mean divided by the time-weighted mean of ``a`` (the
reference run), plus the largest absolute difference seen anywhere on the grid.
"""

from __future__ import annotations

import itertools
import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from simkube.core.errors import ConfigError
from simkube.report.loading import RunData, as_run_data

if TYPE_CHECKING:
    from simkube.results.model import RunResults


@dataclass(frozen=True, kw_only=True)
class CurveDifference:
    """Difference of curve ``b`` from reference curve ``a`` over ``[start_s, end_s]``."""

    column: str
    mean_abs: float   # time-weighted mean of |a - b|
    max_abs: float    # largest |a - b| on the grid
    mean_a: float     # time-weighted mean of a (the normaliser)
    relative: float   # mean_abs / mean_a; 0 when both are flat zero, inf when only a is zero
    start_s: float
    end_s: float

    def __str__(self) -> str:
        return (f"{self.column}: {self.relative:.2%} of the mean (mean |Δ| {self.mean_abs:.3g}, "
                f"max |Δ| {self.max_abs:.3g}, over trace {self.start_s:g}-{self.end_s:g} s)")


def step_difference(*, a_times: Sequence[float], a_values: Sequence[float],
                    b_times: Sequence[float], b_values: Sequence[float],
                    column: str = "value") -> CurveDifference:
    """Compare two step curves given as samples (times non-decreasing, one value each)."""
    for name, times, values in (("a", a_times, a_values), ("b", b_times, b_values)):
        if not times or len(times) != len(values):
            raise ConfigError(f"curve {name} of {column!r} has no samples to compare")
        if any(later < earlier for earlier, later in itertools.pairwise(times)):
            raise ConfigError(f"curve {name} of {column!r} goes back in trace time")
    start = max(a_times[0], b_times[0])
    end = min(a_times[-1], b_times[-1])
    if end < start:
        raise ConfigError(f"the two curves of {column!r} do not overlap in trace time "
                          f"({a_times[0]:g}-{a_times[-1]:g} s vs {b_times[0]:g}-{b_times[-1]:g} s)")
    grid = sorted({start, end, *(t for t in (*a_times, *b_times) if start < t < end)})
    a_on_grid = [_value_at(a_times, a_values, t) for t in grid]
    b_on_grid = [_value_at(b_times, b_values, t) for t in grid]
    gaps = [abs(x - y) for x, y in zip(a_on_grid, b_on_grid, strict=True)]
    if end > start:
        widths = [later - earlier for earlier, later in itertools.pairwise(grid)]
        span = end - start
        mean_abs = sum(w * g for w, g in zip(widths, gaps, strict=False)) / span
        mean_a = sum(w * v for w, v in zip(widths, a_on_grid, strict=False)) / span
    else:
        mean_abs, mean_a = gaps[0], a_on_grid[0]
    relative = mean_abs / abs(mean_a) if mean_a else (math.inf if mean_abs else 0.0)
    return CurveDifference(column=column, mean_abs=mean_abs, max_abs=max(gaps), mean_a=mean_a,
                           relative=relative, start_s=start, end_s=end)


def curve_difference(a: RunResults | RunData, b: RunResults | RunData, *,
                     column: str) -> CurveDifference:
    """Compare column ``column`` of runs ``a`` (reference) and ``b`` on the trace-time axis.

    ``a`` and ``b`` are what ``simkube.results.load_run`` returns (or a report ``RunData``).
    """
    first, second = as_run_data(a), as_run_data(b)
    for run in (first, second):
        if column not in run.timeline:
            raise ConfigError(f"{run.label} has no timeline column {column!r}",
                              hint=f"columns: {', '.join(run.timeline)}")
    return step_difference(a_times=first.timeline["trace_s"], a_values=first.timeline[column],
                           b_times=second.timeline["trace_s"], b_values=second.timeline[column],
                           column=column)


def _value_at(times: Sequence[float], values: Sequence[float], t: float) -> float:
    """The step curve's value at ``t``: the last sample at or before it (the first before)."""
    index = bisect_right(times, t) - 1
    return float(values[max(index, 0)])
