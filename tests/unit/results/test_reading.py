"""Runs recorded before the autoscaler breakdown existed still load, with its fields empty."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simkube.results.model import DriverSummary
from simkube.results.reading import read_scaling, read_summary
from simkube.results.summary import driver_summary

pytestmark = pytest.mark.unit
OLD_SUMMARY = {
    "schema": 1, "simulation": "shop", "run": 1, "started_at": "2026-11-21T10:00:00Z",
    "finished_at": "2026-11-21T10:00:05Z", "wall_seconds": 5.0, "trace_seconds": 50.0,
    "speed": 10.0, "state": "Finished", "node_hours": 4.0, "cost_usd": 2.0,
    "autoscaler_events": 3,
    "groups": {"general": {"price_per_hour": 0.5, "peak_nodes": 2, "min_nodes": 1,
                           "final_nodes": 1, "node_hours": 4.0, "cost_usd": 2.0,
                           "scale_ups": 1, "scale_downs": 1}},
    "pods": {"seen": 1, "scheduled": 1, "never_scheduled": 0, "succeeded": 1, "failed": 0,
             "pending_p50_s": 1.0, "pending_p90_s": 1.0, "pending_p99_s": 1.0,
             "pending_max_s": 1.0, "peak_pending": 1, "peak_running": 1},
}


def test_an_old_summary_loads_with_the_new_fields_empty(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(OLD_SUMMARY))
    summary = read_summary(path)
    assert (summary.autoscaler, summary.disruptions, summary.instance_types,
            summary.node_pools) == ("", {}, {}, {})
    assert (summary.groups["general"].instance_type, summary.groups["general"].node_pool) == (
        "", "")
    assert (summary.driver.achieved_speed, summary.driver.held_seconds) == (None, None)


def test_the_achieved_speed_and_held_time_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({**OLD_SUMMARY, "driver": {
        "events_applied": 3, "achieved_speed": 8.5, "held_seconds": 1.25}}))
    driver = read_summary(path).driver
    assert (driver.achieved_speed, driver.held_seconds) == (8.5, 1.25)
    assert driver_summary({"achieved_speed": 8.5, "held_seconds": 0}) == DriverSummary(
        achieved_speed=8.5, held_seconds=0.0)


def test_old_scaling_rows_have_no_reason(tmp_path: Path) -> None:
    path = tmp_path / "scaling.csv"
    path.write_text("wall_s,trace_s,group,delta,nodes_after,source\n"
                    "1,10,general,1,2,autoscaler\n")
    (row,) = read_scaling(path)
    assert (row.source, row.delta, row.reason) == ("autoscaler", 1, "")
