"""A run entry keeps the status' JSON shape exactly, both ways."""

from __future__ import annotations

import pytest

from simkube.ctrl.entries import RunEntry

pytestmark = pytest.mark.unit


def test_a_new_entry_has_only_its_four_keys() -> None:
    entry = RunEntry(run=1, state="Initializing", start_time="2026-11-25T07:00:00Z",
                     results_dir="/r/shop/run-1")
    assert entry.to_status() == {"run": 1, "state": "Initializing",
                                 "startTime": "2026-11-25T07:00:00Z",
                                 "resultsDir": "/r/shop/run-1"}
    assert entry.active
    assert not entry.finished


def test_a_lost_entry_says_so_and_round_trips() -> None:
    status = {"run": 1, "state": "Failed", "startTime": "a", "resultsDir": "/r",
              "endTime": "b", "message": "the run is lost", "lost": True}
    entry = RunEntry.from_status(status)
    assert entry.lost
    assert not entry.finished
    assert entry.to_status() == status


def test_an_ended_entry_round_trips() -> None:
    status = {"run": 2, "state": "Finished", "startTime": "a", "resultsDir": "/r",
              "endTime": "b", "eventsApplied": 10, "failures": 1, "message": "m",
              "warning": "3 pod(s) were bound to a node but never started"}
    entry = RunEntry.from_status(status)
    assert entry.finished
    assert not entry.active
    assert (entry.run, entry.events_applied, entry.failures) == (2, 10, 1)
    assert entry.to_status() == status


def test_end_keeps_an_earlier_message_when_none_is_given() -> None:
    entry = RunEntry.from_status({"run": "3", "state": "Running", "message": "why"})
    entry.end(state="Failed", end_time="t")
    assert entry.to_status() == {"run": 3, "state": "Failed", "startTime": "",
                                 "resultsDir": "", "endTime": "t", "message": "why"}
