"""After a restart: the run a previous sk-ctrl left going is found again, or lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from simkube.ctrl.driving import STATE
from simkube.ctrl.reattaching import find_again
from simkube.ctrl.reporting import RunReport
from tests.support.fake_api import FakeApi
from tests.unit.ctrl.fakes import (
    PAUSED,
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
LEFT_GOING = {"state": "Paused", "currentRun": 1, "runs": [
    {"run": 1, "state": "Paused", "startTime": "a", "resultsDir": "/r/run-1"}]}


def report_of(api: FakeApi, driver: FakeDriver, tmp_path: Path) -> RunReport:
    return RunReport(context(api, driver, tmp_path, sim=simulation(status=LEFT_GOING)))


async def test_a_run_the_driver_still_knows_is_followed_again(tmp_path: Path) -> None:
    api, driver = FakeApi(), FakeDriver()
    driver.refuse("runs", refusal(UNAVAILABLE))  # the driver is slow to come back
    driver.known["shop-r1"] = progress("shop-r1", PAUSED, applied=4)
    report = report_of(api, driver, tmp_path)
    entry = report.in_progress()
    assert entry is not None
    found = await find_again(report.ctx, report, entry)
    assert found is not None
    assert found.state == PAUSED
    assert events(api) == [("Normal", "Reattached",
                            "following run 1 (shop-r1) again after a restart")]
    assert status_writes(api) == []  # nothing changed yet


@pytest.mark.parametrize("known", [None, STATE.SIMULATION_STATE_CANCELLING,
                                   STATE.SIMULATION_STATE_CANCELLED])
async def test_a_forgotten_or_cancelled_run_is_lost(tmp_path: Path, known: int | None) -> None:
    api, driver = FakeApi(), FakeDriver()
    if known is not None:
        driver.known["shop-r1"] = progress("shop-r1", known)
    report = report_of(api, driver, tmp_path)
    entry = report.in_progress()
    assert entry is not None
    assert await find_again(report.ctx, report, entry) is None
    (written,) = status_writes(api)[-1]["runs"]
    assert written["state"] == "Failed"
    assert written["message"] == ("sk-driver no longer knows run shop-r1 (was it "
                                  "restarted?); the run is lost; what it created was deleted "
                                  "and run 2 replays it")
    assert written["lost"] is True
    assert driver.called("cancel") == ["shop-r1"]
    assert [reason for _, reason, _ in events(api)] == ["RunLost"]
