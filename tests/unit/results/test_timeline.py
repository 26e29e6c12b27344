"""The event-driven timeline: rows at the trace time of the change, one per trace millisecond,
heartbeats, cost between rows, and the nodes scaling rows of each change."""

from __future__ import annotations

import pytest

from simkube.results.model import TimelineRow
from simkube.results.timeline import Timeline

pytestmark = pytest.mark.unit
PRICES = {"general": 0.5, "big": 2.0}


def phases(pending: int = 0, running: int = 0) -> dict[str, int]:
    return {"Pending": pending, "Running": running, "Succeeded": 0, "Failed": 0}


class Written:
    def __init__(self, previous: TimelineRow | None = None) -> None:
        self.rows: list[TimelineRow] = []
        self.timeline = Timeline(prices=PRICES, previous=previous, write=self.rows.append)

    def at(self, wall: float, trace: float, *, pending: int = 0, running: int = 0,
           general: int = 1, heartbeat: bool = False) -> list[tuple[float, str, int, int]]:
        changes = self.timeline.observe(wall_s=wall, trace_s=trace,
                                        phases=phases(pending, running),
                                        nodes={"general": general}, heartbeat=heartbeat)
        return [(c.trace_s, c.group, c.delta, c.nodes_after) for c in changes]

    def stamps(self) -> list[tuple[float, int, int, int]]:
        return [(r.trace_s, r.pods_pending, r.pods_running, r.nodes["general"])
                for r in self.rows]


def test_a_change_is_a_row_at_the_trace_time_it_was_observed() -> None:
    w = Written()
    w.at(0.0, 0.0, heartbeat=True)
    w.at(0.1, 2.345, pending=1)  # speed 20: 0.1 s wall after the first row
    w.at(0.2, 4.5, pending=1)  # no change: no row
    w.at(0.3, 6.789, running=1)
    assert w.timeline.last is not None
    assert w.timeline.last.trace_s == 6.789  # held back, not written yet
    assert len(w.rows) == 2
    w.timeline.flush()
    assert w.stamps() == [(0.0, 0, 0, 1), (2.345, 1, 0, 1), (6.789, 0, 1, 1)]
    assert [r.wall_s for r in w.rows] == [0.0, 0.1, 0.3]


def test_changes_within_one_trace_millisecond_are_one_row() -> None:
    w = Written()
    w.at(0.0, 0.0, heartbeat=True)
    for n in range(1, 101):  # a burst: 100 pods created within the same trace millisecond
        w.at(1.0 + n * 1e-6, 10.0 + n * 4e-6, pending=n)
    assert w.rows[1:] == []  # held back: the next change may still be in this millisecond
    w.at(1.01, 10.2, pending=100, running=1)
    assert w.stamps() == [(0.0, 0, 0, 1), (pytest.approx(10.000004), 100, 0, 1)]
    assert w.rows[1].wall_s == pytest.approx(1.000001)  # the first change's stamp
    w.timeline.flush()
    w.timeline.flush()  # nothing more held back
    assert w.stamps()[2:] == [(10.2, 100, 1, 1)]


def test_a_frozen_trace_clock_coalesces_until_the_heartbeat() -> None:
    w = Written()
    w.at(0.0, 5.0, heartbeat=True)
    w.at(0.5, 5.0, pending=3)  # paused: trace time stands still
    w.at(0.7, 5.0, pending=2, running=1)
    w.at(1.0, 5.0, pending=2, running=1, heartbeat=True)
    assert w.stamps() == [(5.0, 0, 0, 1), (5.0, 2, 1, 1)]
    assert w.rows[1].wall_s == 0.5


def test_heartbeats_write_rows_and_accumulate_cost_without_changes() -> None:
    w = Written()
    for wall in range(4):  # speed 10: 360 wall seconds are a trace hour
        w.at(wall * 360.0, wall * 3600.0, general=2, heartbeat=True)
    assert [r.trace_s for r in w.rows] == [0, 3600, 7200, 10800]
    assert [r.cost_usd for r in w.rows] == [0.0, 1.0, 2.0, 3.0]


def test_cost_integrates_the_exact_steps() -> None:
    w = Written()
    w.at(0.0, 0.0, general=1, heartbeat=True)
    w.at(10.0, 1800.0, general=3)  # 1 node for half an hour, then 3 for half an hour
    w.at(20.0, 3600.0, general=3, heartbeat=True)
    assert [r.cost_usd for r in w.rows] == [0.0, 0.25, 1.0]


def test_node_changes_are_scaling_rows_at_their_own_time() -> None:
    w = Written()
    assert w.at(0.0, 0.0, heartbeat=True) == []  # the first row of a fresh run: no change
    assert w.at(0.05, 1.0, general=2) == [(1.0, "general", 1, 2)]
    assert w.at(0.05, 1.0002, general=3) == [(1.0002, "general", 1, 3)]  # same ms row
    assert w.at(0.06, 1.2, general=3, pending=1) == []
    assert w.at(5.0, 100.0, general=2) == [(100.0, "general", -1, 2)]


def test_a_continued_run_starts_from_its_last_row() -> None:
    first = Written()
    first.at(0.0, 0.0, general=2, heartbeat=True)
    first.at(360.0, 3600.0, general=2, pending=1, heartbeat=True)
    again = Written(previous=first.rows[-1])
    # restarted: two nodes went while nobody watched; trace and cost go on from the last row
    assert again.at(400.0, 3000.0, general=0, heartbeat=True) == [
        (3000.0, "general", -2, 0)]
    row = again.rows[0]
    assert (row.trace_s, row.wall_s, row.cost_usd, row.pods_pending) == (3600.0, 400.0, 1.0, 0)


def test_trace_time_never_goes_back() -> None:
    w = Written()
    w.at(0, 100, heartbeat=True)
    w.at(1, 0, heartbeat=True)
    assert [(r.trace_s, r.cost_usd) for r in w.rows] == [(100, 0.0), (100, 0.0)]


def test_static_column_only_when_present_or_priced() -> None:
    rows: list[TimelineRow] = []
    Timeline(prices=PRICES, previous=None, write=rows.append).observe(
        wall_s=0, trace_s=0, phases=phases(), nodes={"static": 0}, heartbeat=True)
    Timeline(prices={"static": 0.1}, previous=None, write=rows.append).observe(
        wall_s=0, trace_s=0, phases=phases(), nodes={}, heartbeat=True)
    assert [list(row.nodes) for row in rows] == [["big", "general"], ["static"]]
