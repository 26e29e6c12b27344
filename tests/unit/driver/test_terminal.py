from __future__ import annotations

import io

import pytest

from simkube.driver.progress import FailureRecord, Operation, ProgressSnapshot, SimulationState
from simkube.driver.terminal import ProgressDisplay, status_line, summary

pytestmark = pytest.mark.unit


def _snapshot(state: SimulationState, **fields: object) -> ProgressSnapshot:
    defaults: dict[str, object] = {"events_applied": 3, "events_total": 19,
                                   "trace_time_ms": 61_000, "trace_length_ms": 1_134_000,
                                   "lag_p99_ms": 4.25}
    return ProgressSnapshot(name="sim", state=state, **{**defaults, **fields})  # type: ignore[arg-type]


def test_status_line() -> None:
    assert status_line(_snapshot(SimulationState.RUNNING)) == (
        "running: events 3/19, trace 1m01s/18m54s, lag p99 4.2ms, failed 0")


def test_summary_lists_failures_and_cleanup() -> None:
    failures = tuple(FailureRecord(trace_offset_ms=i, operation=Operation.APPLY,
                                   object=f"v1.Pod a/p{i}", code=422, reason="Invalid",
                                   message="bad", attempts=1) for i in range(12))
    text = summary(_snapshot(SimulationState.SUCCEEDED, objects_failed=12, failures=failures,
                             pods_timed=2, cleaned_up=True, message="note"))
    assert text.startswith("simulation sim succeeded: 3/19 events")
    assert "failed: apply v1.Pod a/p11 at +11ms: Invalid (422) bad" in text
    assert "v1.Pod a/p1 " not in text  # only the last ten
    assert "... 2 more failures" in text
    assert "2 pods got recorded lifetimes" in text
    assert "cleaned up" in text
    assert "note" in text


def test_without_a_terminal_lines_are_printed_on_state_changes() -> None:
    out = io.StringIO()
    with ProgressDisplay(out) as display:
        display.update(_snapshot(SimulationState.PENDING))
        display.update(_snapshot(SimulationState.RUNNING))
        display.update(_snapshot(SimulationState.RUNNING, events_applied=4))  # too soon
        display.update(_snapshot(SimulationState.SUCCEEDED, events_applied=19))
        display.update(_snapshot(SimulationState.SUCCEEDED, events_applied=19))
    lines = out.getvalue().splitlines()
    assert [line.split(":")[0] for line in lines] == ["pending", "running", "succeeded"]
