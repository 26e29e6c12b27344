from __future__ import annotations

import math
from pathlib import Path

import pytest

from simkube.core.errors import ConfigError
from simkube.report import RunData, curve_difference, step_difference

pytestmark = pytest.mark.unit


def _run(times: list[float], values: list[float], *, label: str = "sim/run-1") -> RunData:
    return RunData(label=label, directory=Path("/nowhere"), summary={},
                   timeline={"trace_s": times, "nodes_total": values}, groups=(), pending_s=())


def test_identical_curves_sampled_at_different_times_do_not_differ() -> None:
    # The same step curve (1 until t=10, then 3), sampled on different instants.
    a = _run([0, 5, 10, 15, 20], [1, 1, 3, 3, 3])
    b = _run([0, 3, 10, 17, 20], [1, 1, 3, 3, 3])
    difference = curve_difference(a, b, column="nodes_total")
    assert (difference.mean_abs, difference.max_abs, difference.relative) == (0, 0, 0)
    assert (difference.start_s, difference.end_s) == (0, 20)


def test_a_late_step_is_weighted_by_the_time_it_lasts() -> None:
    # b rises at t=5 instead of t=10: |a-b| = 2 for 5 of 20 seconds.
    difference = step_difference(a_times=[0, 10, 20], a_values=[1, 3, 3],
                                 b_times=[0, 5, 20], b_values=[1, 3, 3], column="nodes")
    assert difference.mean_abs == pytest.approx(0.5)
    assert difference.mean_a == pytest.approx(2.0)          # (1*10 + 3*10) / 20
    assert difference.relative == pytest.approx(0.25)
    assert difference.max_abs == 2
    assert "25.00%" in str(difference)


def test_only_the_overlapping_span_is_compared() -> None:
    # b stops at t=10; after that a's values (which differ) must not count.
    difference = step_difference(a_times=[0, 10, 30], a_values=[4, 4, 100],
                                 b_times=[2, 10], b_values=[2, 2])
    assert (difference.start_s, difference.end_s) == (2, 10)
    assert difference.mean_abs == pytest.approx(2.0)
    assert difference.relative == pytest.approx(0.5)
    assert difference.max_abs == 2


def test_duplicate_times_take_the_last_sample_and_zero_reference() -> None:
    difference = step_difference(a_times=[0, 0, 10], a_values=[9, 0, 0],
                                 b_times=[0, 10], b_values=[0, 0])
    assert (difference.mean_abs, difference.relative) == (0, 0)
    changed = step_difference(a_times=[0, 10], a_values=[0, 0], b_times=[0, 10], b_values=[1, 1])
    assert math.isinf(changed.relative)
    single = step_difference(a_times=[5], a_values=[4], b_times=[5], b_values=[3])
    assert (single.mean_abs, single.relative, single.max_abs) == (1, 0.25, 1)


@pytest.mark.parametrize(("a_times", "b_times", "message"), [
    ([0, 10], [20, 30], "do not overlap"),
    ([], [0], "no samples"),
    ([0, 10, 5], [0, 10], "goes back in trace time"),
])
def test_bad_curves(a_times: list[float], b_times: list[float], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        step_difference(a_times=a_times, a_values=[1.0] * len(a_times),
                        b_times=b_times, b_values=[1.0] * len(b_times))


def test_unknown_column_names_the_run() -> None:
    with pytest.raises(ConfigError, match="sim/run-1 has no timeline column 'pods_x'"):
        curve_difference(_run([0], [1]), _run([0], [1]), column="pods_x")
