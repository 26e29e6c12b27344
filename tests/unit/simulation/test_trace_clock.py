"""A run's trace time between the driver's reports."""

from __future__ import annotations

import pytest

from simkube.core.simtime import TimeScale
from simkube.simulation.trace_clock import TraceClock

pytestmark = pytest.mark.unit


def test_the_trace_clock_runs_between_reports_and_stops_with_the_run() -> None:
    wall = [100.0]
    clock = TraceClock(scale=TimeScale(50), monotonic=lambda: wall[0])
    assert clock.now() == 0.0  # nothing reported yet
    clock.report(trace_s=10.0, running=True, length_s=200.0)
    wall[0] += 1.5  # no report for 1.5 s: 75 s of trace at speed 50, not a stall
    assert clock.now() == 85.0
    wall[0] += 10
    assert clock.now() == 200.0  # never past the trace's length
    clock.report(trace_s=120.0, running=False, length_s=200.0)  # paused
    wall[0] += 5
    assert clock.now() == 120.0
    clock.report(trace_s=120.0, running=True, length_s=0)  # length unknown: no cap
    wall[0] += 10
    assert clock.now() == 620.0


def test_a_held_run_moves_at_real_time() -> None:
    wall = [100.0]
    clock = TraceClock(scale=TimeScale(20), monotonic=lambda: wall[0])
    clock.report(trace_s=30.0, running=True, held=True, length_s=600.0)
    wall[0] += 2.0  # two wall seconds held: two trace seconds, not forty
    assert clock.now() == 32.0
    clock.report(trace_s=32.0, running=True, held=False, length_s=600.0)
    wall[0] += 1.0
    assert clock.now() == 52.0
