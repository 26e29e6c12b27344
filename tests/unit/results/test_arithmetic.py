"""Rows, node hours, cost and percentiles on a known timeline: exact numbers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from simkube.core.simtime import TimeScale
from simkube.results.clock import RunClock
from simkube.results.integrate import node_hours, percentile
from simkube.results.model import PodRow, ScalingRow, TimelineRow
from simkube.results.summary import run_summary
from simkube.results.timeline import Timeline

pytestmark = pytest.mark.unit
PRICES = {"general": 0.5, "big": 2.0}
PHASES = {"Pending": 0, "Running": 0, "Succeeded": 0, "Failed": 0}


def known_timeline() -> tuple[list[TimelineRow], list[ScalingRow]]:
    rows: list[TimelineRow] = []
    timeline = Timeline(prices=PRICES, previous=None, write=rows.append)
    scaling = []
    # speed 10: 360 wall seconds are one trace hour
    for wall, trace, nodes in ((0, 0, {"general": 1, "static": 2}),
                               (360, 3600, {"general": 3, "big": 1, "static": 2}),
                               (720, 7200, {"general": 1, "static": 2})):
        scaling.extend(timeline.observe(wall_s=wall, trace_s=trace, phases=PHASES, nodes=nodes,
                                        heartbeat=True))
    return rows, scaling


def test_rows_cost_and_scaling_of_a_known_timeline() -> None:
    rows, scaling = known_timeline()
    assert [dict(r.nodes) for r in rows] == [{"big": 0, "general": 1, "static": 2},
                                             {"big": 1, "general": 3, "static": 2},
                                             {"big": 0, "general": 1, "static": 2}]
    assert [r.nodes_total for r in rows] == [3, 6, 3]
    # step rule: the count at the start of each interval holds until the next sample
    assert [r.cost_usd for r in rows] == [0.0, 0.5, 0.5 + 3 * 0.5 + 1 * 2.0]
    assert [(s.group, s.delta, s.nodes_after, s.trace_s, s.source) for s in scaling] == [
        ("big", 1, 1, 3600, "nodes"), ("general", 2, 3, 3600, "nodes"),
        ("big", -1, 0, 7200, "nodes"), ("general", -2, 1, 7200, "nodes")]
    assert node_hours(rows) == {"big": 1.0, "general": 4.0, "static": 4.0}


def test_summary_of_a_known_timeline() -> None:
    rows, scaling = known_timeline()
    pods = [PodRow(namespace="virtual-a", name=f"p{i}", group="general", node="n",
                   created_trace_s=0.0, scheduled_trace_s=float(i), pending_s=float(i),
                   finished_trace_s=None, phase="Running") for i in range(1, 5)]
    pods.append(PodRow(namespace="virtual-a", name="never", group=None, node=None,
                       created_trace_s=0.0, scheduled_trace_s=None, pending_s=None,
                       finished_trace_s=None, phase="Pending"))
    summary = run_summary(simulation="s", run=1, started_at="2026-01-01T00:00:00.000Z",
                          finished_at=None, speed=10, prices=PRICES, timeline=rows,
                          scaling=scaling, pods=pods, driver={"events_applied": 3},
                          state="Finished")
    general = summary.groups["general"]
    assert (general.peak_nodes, general.min_nodes, general.final_nodes) == (3, 1, 1)
    assert (general.node_hours, general.cost_usd) == (4.0, 2.0)
    assert (general.scale_ups, general.scale_downs) == (1, 1)
    assert summary.groups["big"].cost_usd == 2.0
    assert summary.groups["static"].price_per_hour == 0.0
    assert summary.groups["static"].cost_usd == 0.0
    assert (summary.node_hours, summary.cost_usd) == (9.0, 4.0)
    assert summary.cost_usd == rows[-1].cost_usd
    assert (summary.wall_seconds, summary.trace_seconds) == (720, 7200)
    p = summary.pods
    assert (p.seen, p.scheduled, p.never_scheduled) == (5, 4, 1)
    assert (p.pending_p50_s, p.pending_p90_s, p.pending_p99_s, p.pending_max_s) == (
        2.5, 3.7, 3.97, 4.0)
    # "never" was created at 0 and still waited when the run ended at trace 7200 s.
    assert (p.unscheduled_wait_p50_s, p.unscheduled_wait_max_s) == (7200, 7200)
    assert summary.driver.events_applied == 3
    assert summary.driver.lag_p99_ms is None


@pytest.mark.parametrize(("values", "p", "expected"), [
    ([], 50, None), ([5.0], 99, 5.0), ([1, 2, 3, 4], 50, 2.5), ([4, 1, 3, 2], 0, 1),
    ([1, 2, 3, 4], 100, 4), ([10, 20], 90, 19.0)])
def test_percentile(values: list[float], p: float, expected: float | None) -> None:
    result = percentile(values, p=p)
    assert result == (None if expected is None else pytest.approx(expected))


def test_run_clock_continues_wall_time_and_converts_timestamps() -> None:
    started = datetime(2026, 1, 1, tzinfo=UTC)
    mono = [1000.0]
    trace = [50.0]
    clock = RunClock(trace_clock=lambda: trace[0], scale=TimeScale(10), started_at=started,
                     trace_floor=70.0, monotonic=lambda: mono[0],
                     now=lambda: started + timedelta(seconds=30))
    assert clock.wall_s() == 30.0  # a restart 30 s into the run
    mono[0] += 2.5
    assert clock.wall_s() == 32.5
    assert clock.trace_s() == 70.0  # the floor: the last recorded trace time
    trace[0] = 90.0
    assert clock.trace_s() == 90.0
    assert clock.trace_at(started + timedelta(seconds=28)) == 70.0
