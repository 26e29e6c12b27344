"""A whole simulation through the orchestrator, against the fake API and a scripted driver:
repetitions one after another, a failed run, re-attaching and a lost run after a restart
(replayed by another), a driver that keeps losing runs, an unreachable driver, a delete while
running."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from simkube.core.errors import EnvironmentStateError
from simkube.core.simtime import TimerSettings, TimeScale
from simkube.ctrl.running import LOST_RUNS_REPLAYED
from simkube.ctrl.runs import SimulationRun
from tests.support.fake_api import FakeApi
from tests.unit.ctrl.fakes import (
    FAILED,
    NOT_FOUND,
    SUCCEEDED,
    UNAVAILABLE,
    FakeDriver,
    counter,
    deps,
    progress,
    reasons,
    refusal,
    simulation,
    status_writes,
)

pytestmark = pytest.mark.unit


async def finished(run: SimulationRun) -> dict[str, Any]:
    for _ in range(500):
        if run.done:
            return run.ctx.writer.status
        await asyncio.sleep(0.01)
    raise AssertionError(f"the simulation did not end: {run.ctx.writer.status}")


def ends(driver: FakeDriver, name: str, state: int = SUCCEEDED, **fields: Any) -> None:
    driver.script(name, progress(name, applied=5), progress(name, state, applied=10, **fields))


async def test_repetitions_run_one_after_another(tmp_path: Path) -> None:
    api, driver = FakeApi(), FakeDriver()
    ends(driver, "shop-r1")
    ends(driver, "shop-r2")
    the_deps = deps(api, driver, tmp_path)
    run = SimulationRun(deps=the_deps, simulation=simulation(spec={"repetitions": 2}))
    run.start()
    status = await finished(run)
    assert status["state"] == "Finished"
    assert status["message"] == "2 run(s) finished"
    assert status["completedRuns"] == 2
    assert [(r["run"], r["state"], r["eventsApplied"]) for r in status["runs"]] == [
        (1, "Finished", 10), (2, "Finished", 10)]
    assert status["runs"][1]["resultsDir"] == str(tmp_path / "results" / "shop" / "run-2")
    assert {c["type"]: c["status"] for c in status["conditions"]} == {
        "LeaseHeld": "False", "Completed": "True"}
    assert [name for name, _ in driver.started] == ["shop-r1", "shop-r2"]
    assert driver.called("cancel") == ["shop-r1", "shop-r2"]  # each cleaned up
    assert reasons(api) == ["Initializing", "RunStarted", "RunFinished",
                            "Initializing", "RunStarted", "RunFinished", "Finished"]
    states = [w["state"] for w in status_writes(api) if "state" in w]
    assert states[:2] == ["Initializing", "Running"]
    assert (tmp_path / "results" / "shop" / "run-1" / "summary.json").is_file()
    assert counter(the_deps.metrics, "simkube_ctrl_runs_started_total") == 2
    assert counter(the_deps.metrics, "simkube_ctrl_runs_finished_total", state="Finished") == 2


async def test_a_run_the_driver_failed_fails_the_simulation(tmp_path: Path) -> None:
    api, driver = FakeApi(), FakeDriver()
    ends(driver, "shop-r1", FAILED, message="trace unreadable")
    run = SimulationRun(deps=deps(api, driver, tmp_path),
                        simulation=simulation(spec={"repetitions": 3}))
    run.start()
    status = await finished(run)
    assert status["state"] == "Failed"
    assert status["message"] == "run 1 failed in sk-driver: trace unreadable"
    assert status["runs"][0]["state"] == "Failed"
    assert status["runs"][0]["message"] == "trace unreadable"
    assert len(driver.started) == 1  # no second run
    completed = next(c for c in status["conditions"] if c["type"] == "Completed")
    assert (completed["status"], completed["reason"]) == ("False", "Failed")
    assert reasons(api)[-1] == "Failed"


async def test_a_restarted_ctrl_reattaches_to_the_run_in_progress(tmp_path: Path) -> None:
    api, driver = FakeApi(), FakeDriver()
    driver.known["shop-r1"] = progress("shop-r1", applied=3)
    ends(driver, "shop-r1")
    ends(driver, "shop-r2")
    earlier = {"state": "Running", "currentRun": 1, "completedRuns": 0, "runs": [
        {"run": 1, "state": "Running", "startTime": "2026-11-25T07:00:00Z",
         "resultsDir": str(tmp_path / "results" / "shop" / "run-1")}]}
    run = SimulationRun(deps=deps(api, driver, tmp_path),
                        simulation=simulation(spec={"repetitions": 2}, status=earlier))
    run.start()
    status = await finished(run)
    assert status["state"] == "Finished"
    assert [name for name, _ in driver.started] == ["shop-r2"]  # run 1 was not started again
    assert driver.called("watch")[0] == "shop-r1"
    assert "Reattached" in reasons(api)
    assert status["runs"][0]["startTime"] == "2026-11-25T07:00:00Z"
    assert [r["state"] for r in status["runs"]] == ["Finished", "Finished"]


async def test_a_run_the_restarted_driver_forgot_is_lost_and_replayed(
        tmp_path: Path) -> None:
    api, driver = FakeApi(), FakeDriver()
    ends(driver, "shop-r2")
    ends(driver, "shop-r3")
    earlier = {"state": "Running", "currentRun": 1, "runs": [
        {"run": 1, "state": "Running", "startTime": "2026-11-25T07:00:00Z",
         "resultsDir": str(tmp_path / "run-1")}]}
    the_deps = deps(api, driver, tmp_path)
    run = SimulationRun(deps=the_deps,
                        simulation=simulation(spec={"repetitions": 2}, status=earlier))
    run.start()
    status = await finished(run)
    assert [(r["state"], r.get("lost", False)) for r in status["runs"]] == [
        ("Failed", True), ("Finished", False), ("Finished", False)]
    assert "the run is lost" in status["runs"][0]["message"]
    assert (status["state"], status["message"]) == ("Finished", "2 run(s) finished")
    assert driver.called("cancel") == ["shop-r1", "shop-r2", "shop-r3"]
    assert [name for name, _ in driver.started] == ["shop-r2", "shop-r3"]
    assert "RunLost" in reasons(api)
    assert counter(the_deps.metrics, "simkube_ctrl_runs_finished_total", state="Lost") == 1


async def test_a_driver_that_keeps_losing_runs_fails_the_simulation(tmp_path: Path) -> None:
    api, driver = FakeApi(), FakeDriver()
    for number in range(1, LOST_RUNS_REPLAYED + 2):
        driver.script(f"shop-r{number}", progress(f"shop-r{number}", applied=1),
                      refusal(NOT_FOUND, "no run"))
    run = SimulationRun(deps=deps(api, driver, tmp_path), simulation=simulation())
    run.start()
    status = await finished(run)
    assert len(status["runs"]) == LOST_RUNS_REPLAYED + 1
    assert all(r["lost"] for r in status["runs"])
    assert status["runs"][-1]["message"].endswith("too many runs were lost")
    assert status["runs"][-2]["message"].endswith(f"run {LOST_RUNS_REPLAYED + 1} replays it")
    assert status["state"] == "Failed"
    assert status["message"].startswith(
        f"sk-driver lost {LOST_RUNS_REPLAYED + 1} runs (is it crashing?); run "
        f"{LOST_RUNS_REPLAYED + 1}: sk-driver no longer knows run shop-r{LOST_RUNS_REPLAYED + 1}")


async def test_an_unreachable_driver_fails_the_simulation_after_the_budget(
        tmp_path: Path) -> None:
    api, driver = FakeApi(), FakeDriver()
    driver.refuse("start", *[refusal(UNAVAILABLE, "connection refused")] * 100)
    run = SimulationRun(deps=deps(api, driver, tmp_path, retry_budget=0.05),
                        simulation=simulation())
    run.start()
    status = await finished(run)
    assert status["state"] == "Failed"
    assert status["message"] == ("sk-driver at fake-driver:50051 did not answer for 0s "
                                 "(start run shop-r1): connection refused")
    assert len(driver.called("start")) > 1  # it was retried


async def test_deleting_a_running_simulation_cancels_its_run(tmp_path: Path) -> None:
    api, driver = FakeApi(), FakeDriver()
    driver.script("shop-r1", progress("shop-r1", applied=2))  # and then nothing: still going
    run = SimulationRun(deps=deps(api, driver, tmp_path), simulation=simulation())
    run.start()
    for _ in range(200):
        if run.ctx.progress is not None:
            break
        await asyncio.sleep(0.01)
    await run.delete()
    assert driver.called("cancel") == ["shop-r1"]
    assert run.done
    summary = tmp_path / "results" / "shop" / "run-1" / "summary.json"
    assert '"state": "Cancelled"' in summary.read_text()


async def test_detach_leaves_the_drivers_run_going(tmp_path: Path) -> None:
    api, driver = FakeApi(), FakeDriver()
    run = SimulationRun(deps=deps(api, driver, tmp_path), simulation=simulation())
    run.start()
    for _ in range(200):
        if driver.called("watch"):
            break
        await asyncio.sleep(0.01)
    await run.detach()
    assert run.done
    assert driver.called("cancel") == []
    assert run.ctx.writer.status["state"] == "Running"


async def test_update_reaches_the_context(tmp_path: Path) -> None:
    run = SimulationRun(deps=deps(FakeApi(), FakeDriver(), tmp_path), simulation=simulation())
    newer = simulation(spec={"pausedTime": "2026-11-25T07:00:00Z"}, generation=2)
    run.update(newer)
    assert run.simulation is newer
    assert run.ctx.changed.is_set()
    assert (run.name, run.done) == ("shop", False)


class FailingTarget:
    """A timer target whose restart fails the way the environment's supervisor can."""

    description = "failing target"

    def __init__(self, error: Exception) -> None:
        self.error, self.restored = error, 0

    async def environment_timers(self) -> dict[str, int]:
        return {}

    async def apply(self, *, scale: TimeScale, settings: TimerSettings, run: str,
                    run_configmap: str = "", gated: bool = False) -> None:
        raise self.error

    async def skips_age_wait(self, *, scale: TimeScale) -> bool:
        return False

    async def restore(self) -> None:
        self.restored += 1


@pytest.mark.parametrize(("error", "message"), [
    (EnvironmentStateError("kube-scheduler did not become healthy after its restart"),
     "sk-ctrl could not go on: kube-scheduler did not become healthy after its restart"),
    (RuntimeError("boom"),
     "sk-ctrl hit an unexpected error (RuntimeError): boom; its log has the traceback"),
])
async def test_a_failed_restart_fails_the_simulation_instead_of_leaving_it_initializing(
        tmp_path: Path, error: Exception, message: str) -> None:
    api, driver = FakeApi(), FakeDriver()
    target = FailingTarget(error)
    run = SimulationRun(deps=deps(api, driver, tmp_path, timer_target=target),
                        simulation=simulation(spec={"speed": 50}))
    run.start()
    status = await finished(run)
    assert status["state"] == "Failed"
    assert status["message"] == message
    assert driver.started == []  # never started in sk-driver
    assert target.restored == 1  # the environment's own timers back
    assert reasons(api)[-1] == "Failed"
