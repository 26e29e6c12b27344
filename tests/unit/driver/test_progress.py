from __future__ import annotations

import random

import pytest

from simkube.driver.progress import (
    MAX_FAILURES_KEPT,
    FailureRecord,
    LagStats,
    Operation,
    Progress,
    SimulationState,
)

pytestmark = pytest.mark.unit


def test_percentiles_are_within_one_percent() -> None:
    rng = random.Random(7)  # noqa: S311  # reproducible samples
    samples = [rng.expovariate(1 / 5.0) for _ in range(20_000)]
    stats = LagStats()
    for sample in samples:
        stats.record(sample)
    ordered = sorted(samples)
    for fraction in (0.5, 0.9, 0.99):
        exact = ordered[int(fraction * len(ordered)) - 1]
        assert stats.percentile(fraction) == pytest.approx(exact, rel=0.02)
    assert stats.max_ms == max(samples)
    assert stats.current_ms == samples[-1]
    assert stats.count == len(samples)


def test_tiny_negative_and_empty_lags() -> None:
    stats = LagStats()
    assert stats.percentile(0.99) == 0.0
    stats.record(-3.0)
    stats.record(0.001)
    assert stats.percentile(0.99) == 0.0
    stats.record(40.0)
    assert stats.percentile(1.0) == 40.0  # never above the maximum


def test_snapshot_keeps_the_latest_failures() -> None:
    progress = Progress(name="sim", speed=2.0, events_total=5, trace_length_ms=1000)
    for index in range(MAX_FAILURES_KEPT + 5):
        progress.fail_object(FailureRecord(
            trace_offset_ms=index, operation=Operation.APPLY, object=f"v1.ConfigMap a/{index}",
            code=422, reason="Invalid", message="no", attempts=1))
    snapshot = progress.snapshot(wall_time_ms=10, paused_ms=0)
    assert snapshot.objects_failed == MAX_FAILURES_KEPT + 5
    assert len(snapshot.failures) == MAX_FAILURES_KEPT
    assert snapshot.failures[-1].trace_offset_ms == MAX_FAILURES_KEPT + 4
    assert str(snapshot.failures[0]).startswith("apply v1.ConfigMap a/5 at +5ms: Invalid (422)")
    assert snapshot.state is SimulationState.PENDING


def test_finished_states() -> None:
    assert {state for state in SimulationState if state.finished} == {
        SimulationState.SUCCEEDED, SimulationState.FAILED, SimulationState.CANCELLED}
