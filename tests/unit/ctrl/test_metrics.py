"""sk-ctrl's metrics: simulations by state read at scrape time, counters where they happen."""

from __future__ import annotations

from typing import Any

import pytest

from simkube.ctrl.metrics import ControllerMetrics

pytestmark = pytest.mark.unit


def test_simulations_by_state_follow_the_cache() -> None:
    metrics = ControllerMetrics()
    cache: dict[str, dict[str, Any]] = {
        "a": {"status": {"state": "Running"}}, "b": {"status": {}}, "c": {}}
    metrics.watch_simulations(lambda: cache)

    def count(state: str) -> float | None:
        return metrics.registry.get_sample_value("simkube_ctrl_simulations", {"state": state})
    assert (count("Running"), count("Pending"), count("Failed")) == (1, 2, 0)
    cache["a"] = {"status": {"state": "Finished"}}
    assert (count("Running"), count("Finished")) == (0, 1)


def test_counters() -> None:
    metrics = ControllerMetrics()
    metrics.runs_started.inc()
    metrics.runs_finished.labels("Lost").inc()
    metrics.reconcile_errors.inc(2)
    sample = metrics.registry.get_sample_value
    assert sample("simkube_ctrl_runs_started_total") == 1
    assert sample("simkube_ctrl_runs_finished_total", {"state": "Lost"}) == 1
    assert sample("simkube_ctrl_reconcile_errors_total") == 2
