from __future__ import annotations

import pytest

from simkube.core.simtime import TimeScale
from simkube.sweep.estimate import RUN_OVERHEAD_S, makespan, point_seconds, trace_seconds

pytestmark = pytest.mark.unit


def test_a_point_is_its_replays_and_the_measured_overhead() -> None:
    assert pytest.approx(25.6) == RUN_OVERHEAD_S
    assert point_seconds(repetitions=2, trace_s=1800,
                         scale=TimeScale(speed=10)) == pytest.approx(360 + 25.6)


def test_the_makespan_hands_points_to_the_first_free_worker() -> None:
    assert makespan([10, 10, 10], parallel=1) == 30
    assert makespan([10, 10, 10], parallel=2) == 20
    assert makespan([30, 10, 10, 10], parallel=2) == 30
    assert makespan([], parallel=3) == 0
    assert makespan([10], parallel=2, busy=[25]) == 25
    assert makespan([10, 10], parallel=1, busy=[5]) == 25


def test_a_given_duration_is_the_trace_time() -> None:
    from pathlib import Path  # noqa: PLC0415

    assert trace_seconds(duration="30m", trace=Path("never-read")) == 1800
