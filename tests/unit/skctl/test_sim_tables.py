"""What ``skctl status`` prints for the listing and for one simulation."""

from __future__ import annotations

import datetime

import pytest

from simkube.simulation.states import State
from simkube.skctl.sim_tables import STATE_COLOURS, print_details, print_listing

pytestmark = pytest.mark.unit


def _simulation(name: str, *, state: str, minutes_old: int, **status: object) -> dict[str, object]:
    # Now, not at import: a long test session would age the objects by its own length.
    then = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=minutes_old)
    created = then.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"metadata": {"name": name, "creationTimestamp": created},
            "spec": {"trace": {"path": "/t/dsb.sktrace"}, "speed": 10, "repetitions": 2},
            "status": {"state": state, **status}}


def test_an_empty_listing_says_how_to_start(capsys: pytest.CaptureFixture[str]) -> None:
    print_listing([])
    assert "no simulations (create one with 'skctl run --trace FILE')" in capsys.readouterr().out


def test_the_listing_has_state_run_age_and_message(capsys: pytest.CaptureFixture[str]) -> None:
    print_listing([
        _simulation("nightly", state="Running", minutes_old=90, currentRun=1, eventsApplied=7),
        _simulation("later", state="Blocked", minutes_old=3, message="waiting for nightly")])
    out = capsys.readouterr().out
    nightly = next(line for line in out.splitlines() if "nightly" in line and "Running" in line)
    assert "1/2" in nightly
    assert "1h" in nightly
    later = next(line for line in out.splitlines() if "later" in line)
    assert "Blocked" in later
    assert "3m" in later
    assert "waiting for nightly" in later


def test_details_show_every_run(capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")  # a wide terminal: rich wraps cells to fit
    print_details(_simulation(
        "nightly", state="Finished", minutes_old=5, completedRuns=2, eventsApplied=19,
        eventsTotal=19, failures=0, resultsDir="/r/nightly", achievedSpeed=9.42,
        heldSeconds=3.25, holding="on: each unschedulable pod holds the clock",
        runs=[{"run": 1, "state": "Finished", "eventsApplied": 19, "failures": 0,
               "achievedSpeed": 9.5, "heldSeconds": 1.04, "startTime": "2026-11-23T07:01:57Z",
               "endTime": "2026-11-23T07:03:56Z"},
              {"run": 2, "state": "Failed", "message": "sk-driver refused run 2"},
              {"run": 3, "state": "Failed", "lost": True, "message": "the run is lost"}]))
    out = capsys.readouterr().out
    assert "nightly  Finished" in out
    assert "/t/dsb.sktrace" in out
    assert "2/2 done" in out
    assert "19/19" in out
    assert "/r/nightly" in out
    assert "sk-driver refused run 2" in out
    assert "Failed (lost)" in out
    assert out.count("(lost)") == 1
    assert "07:01:57" in out
    assert "07:03:56" in out
    assert "9.42x trace/wall, 3.2s held for the autoscaler" in out
    assert "on: each unschedulable pod holds the clock" in out
    assert "9.5x" in out
    assert "1.0s" in out


def test_every_state_has_a_colour() -> None:
    assert set(STATE_COLOURS) == set(State)
