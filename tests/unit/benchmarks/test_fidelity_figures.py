"""The fidelity figures: signed relative differences, the nodes-curve area, worst and limits."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from benchmarks.fidelity_figures import (
    Comparison,
    as_json,
    compare,
    describe,
    highest_speed,
    percent,
    relative,
    spread_limits,
    within,
    worst,
)
from simkube.results import GroupSummary, PodsSummary, RunResults, RunSummary, TimelineRow

pytestmark = pytest.mark.unit


def _run(nodes: list[tuple[float, int]], *, node_hours: float = 1.0, cost: float = 0.5,
         p50: float | None = 1.0, p90: float | None = 10.0, ups: int = 2,
         downs: int = 1) -> RunResults:
    timeline = tuple(TimelineRow(wall_s=t, trace_s=t, pods_pending=0, pods_running=0,
                                 pods_succeeded=0, pods_failed=0, nodes_total=n,
                                 nodes={"small": n}, cost_usd=0.0) for t, n in nodes)
    group = GroupSummary(price_per_hour=0.5, peak_nodes=max(n for _, n in nodes),
                         min_nodes=min(n for _, n in nodes), final_nodes=nodes[-1][1],
                         node_hours=node_hours, cost_usd=cost, scale_ups=ups,
                         scale_downs=downs)
    pods = PodsSummary(seen=10, scheduled=10, never_scheduled=0, succeeded=0, failed=0,
                       pending_p50_s=p50, pending_p90_s=p90, pending_p99_s=p90,
                       pending_max_s=p90, peak_pending=3, peak_running=10)
    summary = RunSummary(simulation="s", run=1, started_at="2026-11-25T10:00:00Z",
                         finished_at="2026-11-25T10:10:00Z", wall_seconds=600.0,
                         trace_seconds=600.0, speed=1.0, groups={"small": group}, pods=pods,
                         node_hours=node_hours, cost_usd=cost, autoscaler_events=0)
    return RunResults(run_dir=Path("/results/s/run-1"), timeline=timeline, pods=(),
                      scaling=(), summary=summary)


def test_relative_is_signed_replay_minus_truth() -> None:
    assert relative(10.0, 10.42) == pytest.approx(0.042)
    assert relative(10.0, 9.0) == pytest.approx(-0.1)
    assert relative(0.0, 0.0) == 0.0
    assert relative(0.0, 2.0) == math.inf
    assert relative(None, 1.0) is None
    assert relative(1.0, None) is None


def test_the_nodes_curve_is_the_area_between_over_the_area_under_the_truth() -> None:
    # Truth: 2 nodes for 100 s, then 4 for 100 s (area 600). The replay reaches 4 nodes
    # 30 s late (area between 60) and sheds one node for the last 50 s (area between 50).
    truth = _run([(0, 2), (100, 4), (200, 4)])
    replay = _run([(0, 2), (130, 4), (150, 3), (200, 3)], node_hours=1.1, cost=0.45, p90=12.0)
    comparison = compare(truth=truth, replay=replay, speed=10, repetition=2)
    assert comparison.errors["nodes_curve"] == pytest.approx(110 / 600)
    assert comparison.errors["node_hours"] == pytest.approx(0.1)
    assert comparison.errors["cost"] == pytest.approx(-0.1)
    assert comparison.errors["pending_p50"] == 0.0
    assert comparison.errors["pending_p90"] == pytest.approx(0.2)
    assert comparison.truth["peak_nodes"] == 4
    assert comparison.replay["scale_ups"] == 2
    assert comparison.note is None


def test_curves_that_do_not_overlap_leave_the_figure_out_with_a_note() -> None:
    comparison = compare(truth=_run([(0, 2), (10, 2)]), replay=_run([(20, 2), (30, 2)]),
                         speed=5, repetition=1)
    assert comparison.errors["nodes_curve"] is None
    assert comparison.note is not None
    assert "do not overlap" in comparison.note


def _comparison(**errors: float | None) -> Comparison:
    full = dict.fromkeys(("nodes_curve", "node_hours", "cost", "pending_p50", "pending_p90"),
                         0.0) | errors
    return Comparison(speed=10, repetition=1, errors=full, truth={}, replay={})


def test_worst_keeps_the_sign_of_the_farthest_repetition() -> None:
    result = worst([_comparison(cost=0.03, pending_p90=0.2),
                    _comparison(cost=-0.04, pending_p90=None)])
    assert result["cost"] == -0.04
    assert result["pending_p90"] is None  # a missing repetition is not a pass
    assert result["nodes_curve"] == 0.0


def test_within_checks_every_limit_and_fails_missing_values() -> None:
    assert within({"nodes_curve": 0.05, "cost": -0.05, "pending_p90": -0.1}) == {
        "nodes_curve": True, "cost": True, "pending_p90": True}
    assert within({"nodes_curve": 0.051, "cost": None, "pending_p90": math.inf}) == {
        "nodes_curve": False, "cost": False, "pending_p90": False}


def test_the_highest_speed_stops_at_the_first_miss() -> None:
    fine = {"nodes_curve": 0.01, "cost": 0.01, "pending_p90": 0.05}
    bad = {**fine, "pending_p90": 0.3}
    assert highest_speed({1: fine, 5: fine, 10: bad, 20: fine}) == (
        5, "speed 10: pending_p90")
    assert highest_speed({1: fine, 5: fine}) == (5, None)
    assert highest_speed({1: bad}) == (None, "speed 1: pending_p90")


def test_limits_widen_to_what_a_real_time_replay_already_misses_by() -> None:
    real_time = {"nodes_curve": 0.08, "cost": -0.02, "pending_p90": -0.12, "node_hours": 0.5}
    limits = spread_limits(real_time)
    assert limits == {"nodes_curve": 0.08, "cost": 0.05, "pending_p90": 0.12}
    faster = {"nodes_curve": 0.07, "cost": 0.04, "pending_p90": 0.11}
    assert highest_speed({1: real_time, 20: faster}) == (None, "speed 1: nodes_curve, "
                                                                "pending_p90")
    assert highest_speed({1: real_time, 20: faster}, limits) == (20, None)
    assert spread_limits({**real_time, "cost": None}) is None
    assert spread_limits({**real_time, "cost": math.inf}) is None


def test_percentages_are_json_safe() -> None:
    assert percent(0.04249) == 4.2
    assert percent(-0.1) == -10.0
    assert percent(math.inf) == "inf"
    assert percent(-math.inf) == "-inf"
    assert percent(None) is None


def test_describe_signs_relative_differences_but_not_the_distance() -> None:
    text = describe({"nodes_curve": 0.042, "node_hours": 0.03, "cost": -0.027,
                     "pending_p50": None, "pending_p90": math.inf})
    assert text == ("nodes curve 4.2 %, node hours +3.0 %, cost -2.7 %, pending p50 n/a, "
                    "pending p90 inf")


def test_json_has_percentages_and_both_sides() -> None:
    truth = _run([(0, 2), (100, 2)])
    figures = as_json(compare(truth=truth, replay=truth, speed=1, repetition=1))
    assert figures["nodes_curve_pct"] == 0.0
    assert figures["scale_downs"] == {"truth": 1, "replay": 1}
    assert figures["pending_p90_s"] == {"truth": 10.0, "replay": 10.0}
    assert "note" not in figures
