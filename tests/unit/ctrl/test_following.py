"""Following a run: progress into status, reconnecting through an outage within the budget,
a lost run, a refused watch, and pausedTime turned into Pause and Resume."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest

from simkube.ctrl.following import follow, wants_pause
from simkube.ctrl.retrying import RunLostError, SimulationFailedError
from tests.support.fake_api import FakeApi
from tests.unit.ctrl.fakes import (
    NOT_FOUND,
    PAUSED,
    SUCCEEDED,
    UNAVAILABLE,
    FakeDriver,
    context,
    events,
    progress,
    refusal,
    simulation,
    status_writes,
)

pytestmark = pytest.mark.unit
NAME = "shop-r1"


def known(driver: FakeDriver) -> FakeDriver:
    driver.known[NAME] = progress(NAME)
    return driver


async def test_progress_goes_into_status_and_the_final_update_is_returned(
        tmp_path: Path) -> None:
    api, driver = FakeApi(), known(FakeDriver())
    driver.script(NAME, progress(NAME, applied=1, trace_ms=1500),
                  progress(NAME, PAUSED, applied=2), progress(NAME, applied=3),
                  progress(NAME, SUCCEEDED, applied=10, trace_ms=9000))
    ctx = context(api, driver, tmp_path)
    told: list[int] = []
    ctx.on_progress = lambda update: told.append(update.events_applied)
    final = await follow(ctx, name=NAME, paused=False)
    assert (final.state, final.events_applied) == (SUCCEEDED, 10)
    assert told == [1, 2, 3, 10]  # every update, for the holds' publisher
    written = status_writes(api)
    assert [w["state"] for w in written if "state" in w] == ["Running", "Paused", "Running"]
    assert written[0]["traceTimeSeconds"] == 1.5
    assert written[-1]["eventsApplied"] == 10  # the final update is always written
    assert ctx.progress is final


async def test_a_broken_watch_reconnects(tmp_path: Path) -> None:
    driver = known(FakeDriver())
    driver.script(NAME, progress(NAME, applied=1), refusal(UNAVAILABLE, "reset"),
                  refusal(UNAVAILABLE), progress(NAME, SUCCEEDED, applied=10))
    final = await follow(context(FakeApi(), driver, tmp_path), name=NAME, paused=False)
    assert final.events_applied == 10
    assert driver.called("watch") == [NAME] * 3


async def test_an_outage_past_the_budget_fails(tmp_path: Path) -> None:
    driver = known(FakeDriver())
    driver.script(NAME, *[refusal(UNAVAILABLE, "refused")] * 500)
    ctx = context(FakeApi(), driver, tmp_path, retry_budget=0.05)
    with pytest.raises(SimulationFailedError) as caught:
        await follow(ctx, name=NAME, paused=False)
    assert caught.value.message == ("sk-driver at fake-driver:50051 did not answer for 0s "
                                    "(while running shop-r1): refused")


async def test_a_run_the_driver_forgot_is_lost(tmp_path: Path) -> None:
    driver = known(FakeDriver())
    driver.script(NAME, refusal(NOT_FOUND))
    with pytest.raises(RunLostError, match="the run is lost"):
        await follow(context(FakeApi(), driver, tmp_path), name=NAME, paused=False)


async def test_a_refused_watch_fails(tmp_path: Path) -> None:
    driver = known(FakeDriver())
    driver.script(NAME, refusal(grpc.StatusCode.INTERNAL, "corrupt trace"))
    with pytest.raises(SimulationFailedError, match="following run shop-r1: corrupt trace"):
        await follow(context(FakeApi(), driver, tmp_path), name=NAME, paused=False)


async def wait_for(condition: object, what: str) -> None:
    for _ in range(300):
        if callable(condition) and condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never: {what}")


async def test_paused_time_pauses_and_resumes_the_run(tmp_path: Path) -> None:
    api, driver = FakeApi(), known(FakeDriver())
    driver.refuse("pause", refusal(UNAVAILABLE))  # retried
    ctx = context(api, driver, tmp_path)
    following = asyncio.create_task(follow(ctx, name=NAME, paused=False))
    ctx.update(simulation(spec={"pausedTime": "2026-11-25T07:00:00Z"}))
    await wait_for(lambda: any(r == "Paused" for _, r, _ in events(api)), "Paused")
    ctx.update(simulation())
    await wait_for(lambda: any(r == "Resumed" for _, r, _ in events(api)), "Resumed")
    driver.script(NAME, progress(NAME, SUCCEEDED))
    await following
    assert driver.called("pause") == [NAME, NAME]
    assert driver.called("resume") == [NAME]


async def test_a_run_started_paused_is_not_paused_again(tmp_path: Path) -> None:
    driver = known(FakeDriver())
    driver.refuse("resume", refusal(grpc.StatusCode.FAILED_PRECONDITION, "ended"))
    ctx = context(FakeApi(), driver, tmp_path,
                  sim=simulation(spec={"pausedTime": "2026-11-25T07:00:00Z"}))
    following = asyncio.create_task(follow(ctx, name=NAME, paused=True))
    await asyncio.sleep(0.05)
    assert driver.called("pause") == []
    ctx.update(simulation())  # resume refused for good: logged, not retried
    await wait_for(lambda: driver.called("resume"), "a resume")
    await asyncio.sleep(0.05)
    driver.script(NAME, progress(NAME, SUCCEEDED))
    await following
    assert driver.called("resume") == [NAME]


def test_wants_pause() -> None:
    assert wants_pause({"spec": {"pausedTime": "2026-11-25T07:00:00Z"}})
    assert not wants_pause({"spec": {"pausedTime": ""}})
    assert not wants_pause({})
