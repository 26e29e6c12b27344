"""What ``skctl run --wait`` shows of a Simulation's status."""

from __future__ import annotations

import pytest

from simkube.skctl.sim_progress import Snapshot

pytestmark = pytest.mark.unit


def test_a_running_simulation() -> None:
    snap = Snapshot.of({"spec": {"repetitions": 3}, "status": {
        "state": "Running", "currentRun": 2, "eventsApplied": 7, "eventsTotal": 19,
        "traceTimeSeconds": 120.5, "traceLengthSeconds": 1134, "lagMs": 3.4}})
    assert (snap.state, snap.run, snap.runs, snap.events) == ("Running", 2, 3, "7/19")
    assert (snap.trace_time, snap.trace_length, snap.lag) == (120.5, 1134.0, "3ms")
    assert snap.line() == "Running (run 2/3, events 7/19)"


def test_a_new_simulation_without_status() -> None:
    snap = Snapshot.of({"spec": {}})
    assert (snap.state, snap.run, snap.runs, snap.events, snap.lag) == (
        "(no status yet)", 0, 1, "0/?", "-")


def test_the_message_follows_the_state() -> None:
    snap = Snapshot.of({"spec": {}, "status": {"state": "Blocked",
                                               "message": "waiting for nightly"}})
    assert snap.line() == "Blocked (run 0/1, events 0/?): waiting for nightly"


def test_trace_progress_before_and_after_the_driver_knows_the_length() -> None:
    assert Snapshot.of({"spec": {}}).trace_progress() == "0s/?"
    running = Snapshot.of({"spec": {}, "status": {"traceTimeSeconds": 61.6,
                                                  "traceLengthSeconds": 1134}})
    assert running.trace_progress() == "62s/1134s"
