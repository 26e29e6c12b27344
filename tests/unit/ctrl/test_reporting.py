"""The runs list and the status around it: each change written at once, with its Event and
metric; the outcome with its conditions, even when the status cannot be written."""

from __future__ import annotations

from pathlib import Path

import pytest

from simkube.core.kubeapi import ApiError
from simkube.ctrl.reporting import RunReport, conclude
from simkube.simulation.names import simulation_path
from simkube.simulation.states import State
from tests.support.fake_api import FakeApi
from tests.unit.ctrl.fakes import (
    SUCCEEDED,
    FakeDriver,
    context,
    counter,
    events,
    progress,
    simulation,
    status_writes,
)

pytestmark = pytest.mark.unit
EARLIER = {"runs": [{"run": 1, "state": "Finished", "startTime": "a", "resultsDir": "/r/1"},
                    {"run": 2, "state": "Paused", "startTime": "b", "resultsDir": "/r/2"}],
           "startTime": "a", "conditions": []}


def test_the_run_left_going_is_the_last_active_one(tmp_path: Path) -> None:
    report = RunReport(context(FakeApi(), FakeDriver(), tmp_path,
                               sim=simulation(status=EARLIER)))
    left = report.in_progress()
    assert left is not None
    assert left.run == 2
    assert [e.run for e in report.unfinished()] == [2]
    assert report.completed() == 1
    assert RunReport(context(FakeApi(), FakeDriver(), tmp_path)).in_progress() is None


async def test_begin_writes_a_new_entry_and_resets_the_counters(tmp_path: Path) -> None:
    api = FakeApi()
    report = RunReport(context(api, FakeDriver(), tmp_path))
    entry = await report.begin(number=1, repetitions=3, run_dir=tmp_path / "shop" / "run-1")
    written = status_writes(api)[-1]
    assert written["state"] == "Initializing"
    assert written["message"] == "preparing run 1 of 3"
    assert (written["currentRun"], written["eventsApplied"], written["failures"]) == (1, 0, 0)
    assert written["resultsDir"] == str(tmp_path / "shop")
    assert written["startTime"] == entry.start_time  # the simulation's first run
    assert written["runs"] == [entry.to_status()]
    assert written["observedGeneration"] == 1
    assert events(api) == [("Normal", "Initializing", "preparing run 1 of 3")]


async def test_a_later_run_keeps_the_simulations_start_time(tmp_path: Path) -> None:
    api = FakeApi()
    report = RunReport(context(api, FakeDriver(), tmp_path, sim=simulation(status=EARLIER)))
    await report.begin(number=3, repetitions=3, run_dir=tmp_path / "run-3")
    assert "startTime" not in status_writes(api)[-1]
    assert [r["run"] for r in status_writes(api)[-1]["runs"]] == [1, 2, 3]


async def test_running_lost_and_ended(tmp_path: Path) -> None:
    api = FakeApi()
    ctx = context(api, FakeDriver(), tmp_path)
    report = RunReport(ctx)
    first = await report.begin(number=1, repetitions=2, run_dir=tmp_path / "run-1")
    await report.running(first, repetitions=2)
    assert status_writes(api)[-1]["state"] == "Running"
    assert status_writes(api)[-1]["runs"][0]["state"] == "Running"
    await report.lost(first, "gone")
    assert status_writes(api)[-1]["runs"][0]["message"] == "gone"
    assert status_writes(api)[-1]["runs"][0]["lost"] is True
    assert (report.lost_runs(), report.unfinished()) == ([first], [])
    assert report.planned(2) == 3
    assert events(api)[-1] == ("Warning", "RunLost", "gone")
    second = await report.begin(number=2, repetitions=2, run_dir=tmp_path / "run-2")
    await report.ended(second, state=State.FINISHED,
                       final=progress("shop-r2", SUCCEEDED, applied=9))
    last = status_writes(api)[-1]
    assert last["completedRuns"] == 1
    assert last["runs"][1] == {**second.to_status(), "eventsApplied": 9, "failures": 0}
    assert "message" not in last["runs"][1]
    metrics = ctx.deps.metrics
    assert counter(metrics, "simkube_ctrl_runs_finished_total", state="Lost") == 1
    assert counter(metrics, "simkube_ctrl_runs_finished_total", state="Finished") == 1


async def test_hold_lease_sets_the_condition(tmp_path: Path) -> None:
    api = FakeApi()
    await RunReport(context(api, FakeDriver(), tmp_path)).hold_lease()
    (held,) = status_writes(api)[-1]["conditions"]
    assert (held["type"], held["status"], held["reason"]) == ("LeaseHeld", "True", "Acquired")


async def test_conclude_writes_the_outcome_and_says_so(tmp_path: Path) -> None:
    api = FakeApi()
    ctx = context(api, FakeDriver(), tmp_path, sim=simulation(status={"completedRuns": 2}))
    assert await conclude(ctx, failure=None) is State.FINISHED
    written = status_writes(api)[-1]
    assert (written["state"], written["message"]) == ("Finished", "2 run(s) finished")
    assert {c["type"]: c["status"] for c in written["conditions"]} == {
        "Completed": "True", "LeaseHeld": "False"}
    assert "endTime" in written
    assert events(api) == [("Normal", "Finished", "2 run(s) finished")]


async def test_an_unwritable_outcome_still_gets_its_event(tmp_path: Path) -> None:
    api = FakeApi()
    api.fail("PATCH", f"{simulation_path('shop')}/status",
             ApiError(code=500, reason="InternalError", message="etcd"))
    ctx = context(api, FakeDriver(), tmp_path)
    assert await conclude(ctx, failure="run 1 failed") is State.FAILED
    assert events(api) == [("Warning", "Failed", "run 1 failed")]
