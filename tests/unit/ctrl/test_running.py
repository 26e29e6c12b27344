"""A started run followed to its end: the recorder around it, the outcome in its entry, the
clean-up; a run lost meanwhile, a run the driver failed, a recorder that cannot start."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest

from simkube.ctrl.context import SimulationContext
from simkube.ctrl.entries import RunEntry
from simkube.ctrl.reporting import RunReport
from simkube.ctrl.retrying import SimulationFailedError
from simkube.ctrl.running import clean_up, run_through
from tests.support.fake_api import FakeApi
from tests.unit.ctrl.fakes import (
    FAILED,
    NOT_FOUND,
    SUCCEEDED,
    FakeDriver,
    context,
    events,
    progress,
    reasons,
    refusal,
    status_writes,
)

pytestmark = pytest.mark.unit


async def started(ctx: SimulationContext, driver: FakeDriver,
                  run_dir: Path) -> tuple[RunReport, RunEntry]:
    driver.known["shop-r1"] = progress("shop-r1")
    report = RunReport(ctx)
    entry = await report.begin(number=1, repetitions=1, run_dir=run_dir)
    return report, entry


async def test_a_run_followed_to_its_end(tmp_path: Path) -> None:
    api, driver = FakeApi(), FakeDriver()
    ctx = context(api, driver, tmp_path)
    report, entry = await started(ctx, driver, tmp_path / "run-1")
    driver.script("shop-r1", progress("shop-r1", applied=4, trace_ms=2000),
                  progress("shop-r1", SUCCEEDED, applied=10, trace_ms=6000))
    await run_through(ctx, report, entry, spec=ctx.spec(), config=None, paused=False)
    assert (entry.state, entry.events_applied, entry.failures) == ("Finished", 10, 0)
    assert status_writes(api)[-1]["completedRuns"] == 1
    assert driver.called("cancel") == ["shop-r1"]
    assert (ctx.current, ctx.recorder) == (None, None)
    summary = json.loads((tmp_path / "run-1" / "summary.json").read_text())
    assert (summary["state"], summary["driver"]["events_applied"]) == ("Finished", 10)
    assert events(api)[-1] == ("Normal", "RunFinished",
                               "run 1 of 1 finished: 10/10 events, 0 objects failed")
    assert ctx.clock.now() == 6.0  # the run's clock followed the driver


async def test_a_run_the_driver_failed_fails_after_its_clean_up(tmp_path: Path) -> None:
    api, driver = FakeApi(), FakeDriver()
    ctx = context(api, driver, tmp_path)
    report, entry = await started(ctx, driver, tmp_path / "run-1")
    driver.script("shop-r1", progress("shop-r1", FAILED, message=""))
    with pytest.raises(SimulationFailedError,
                       match="run 1 failed in sk-driver: SIMULATION_STATE_FAILED"):
        await run_through(ctx, report, entry, spec=ctx.spec(), config=None, paused=False)
    assert entry.state == "Failed"
    assert driver.called("cancel") == ["shop-r1"]
    assert "RunFinished" not in reasons(api)


async def test_a_run_lost_meanwhile_is_cleaned_up_and_written_lost(tmp_path: Path) -> None:
    api, driver = FakeApi(), FakeDriver()
    ctx = context(api, driver, tmp_path)
    report, entry = await started(ctx, driver, tmp_path / "run-1")
    driver.script("shop-r1", progress("shop-r1", applied=3), refusal(NOT_FOUND))
    await run_through(ctx, report, entry, spec=ctx.spec(), config=None, paused=False)
    assert entry.state == "Failed"
    assert entry.lost
    assert (entry.message or "").endswith(
        "the run is lost; what it created was deleted and run 2 replays it")
    assert driver.called("cancel") == ["shop-r1"]  # the root the dead driver left goes
    summary = json.loads((tmp_path / "run-1" / "summary.json").read_text())
    assert (summary["state"], summary["driver"]["events_applied"]) == ("Failed", 3)
    assert reasons(api)[-1] == "RunLost"


async def test_a_recorder_that_cannot_start_does_not_stop_the_run(tmp_path: Path) -> None:
    api, driver = FakeApi(), FakeDriver()
    ctx = context(api, driver, tmp_path)
    (tmp_path / "blocked").write_text("a file where the run directory should be")
    report, entry = await started(ctx, driver, tmp_path / "blocked" / "run-1")
    driver.script("shop-r1", progress("shop-r1", SUCCEEDED, applied=10))
    await run_through(ctx, report, entry, spec=ctx.spec(), config=None, paused=False)
    assert entry.state == "Finished"
    failed = [(kind, message) for kind, reason, message in events(api)
              if reason == "RecorderFailed"]
    assert failed
    assert failed[0][0] == "Warning"
    assert failed[0][1].startswith("the results recorder did not start")


async def test_clean_up_of_a_run_already_gone_is_fine(tmp_path: Path) -> None:
    driver = FakeDriver()
    await clean_up(context(FakeApi(), driver, tmp_path), "shop-r9")
    assert driver.called("cancel") == ["shop-r9"]


async def test_clean_up_refused_fails_the_simulation(tmp_path: Path) -> None:
    driver = FakeDriver()
    driver.refuse("cancel", refusal(grpc.StatusCode.INTERNAL, "stuck finalizer"))
    with pytest.raises(SimulationFailedError,
                       match="could not clean up run shop-r1: stuck finalizer"):
        await clean_up(context(FakeApi(), driver, tmp_path), "shop-r1")
