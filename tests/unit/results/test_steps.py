"""Scale steps from the observed node changes: the wall-time gap rule."""

from __future__ import annotations

import pytest

from simkube.results.model import ScalingRow
from simkube.results.steps import node_steps

pytestmark = pytest.mark.unit


def change(wall: float, delta: int, after: int, *, group: str = "g", trace: float | None = None,
           source: str = "nodes") -> ScalingRow:
    return ScalingRow(wall_s=wall, trace_s=wall * 50 if trace is None else trace, group=group,
                      delta=delta, nodes_after=after, source=source)


def steps(rows: list[ScalingRow]) -> list[tuple[float, str, int, int]]:
    return [(s.trace_s, s.group, s.delta, s.nodes_after) for s in node_steps(rows)]


def test_nodes_arriving_together_are_one_step_at_the_first_ones_time() -> None:
    assert steps([change(10.0, 1, 2), change(10.1, 1, 3), change(10.2, 1, 4)]) == [
        (500.0, "g", 3, 4)]


def test_changes_further_apart_than_the_gap_are_separate_steps() -> None:
    assert steps([change(10.0, 1, 2), change(15.0, 1, 3)]) == [
        (500.0, "g", 1, 2), (750.0, "g", 1, 3)]


def test_the_gap_is_measured_from_the_previous_change() -> None:
    # a train of nodes each 0.9 s after the last is one step, though it spans 1.8 s
    assert steps([change(0.0, 1, 1), change(0.9, 1, 2), change(1.8, 1, 3)]) == [
        (0.0, "g", 3, 3)]


def test_up_then_down_is_two_steps() -> None:
    assert steps([change(10.0, 1, 2), change(10.1, -1, 1)]) == [
        (500.0, "g", 1, 2), (505.0, "g", -1, 1)]


def test_groups_are_apart_and_only_observed_rows_count() -> None:
    rows = [change(1.0, 1, 1, group="a"), change(1.1, 1, 1, group="b", trace=55.0),
            change(1.2, 2, 3, group="a"), change(1.3, 1, 2, group="b", source="autoscaler")]
    assert steps(rows) == [(50.0, "a", 3, 3), (55.0, "b", 1, 1)]


def test_speed_does_not_matter_only_wall_time_does() -> None:
    # the same arrivals at speed 1 and speed 50: the same steps
    for speed in (1, 50):
        rows = [change(w, 1, n, trace=w * speed) for n, w in enumerate((3.0, 3.2, 3.4, 9.0), 1)]
        assert [(s.delta, s.nodes_after) for s in node_steps(rows)] == [(3, 3), (1, 4)]
