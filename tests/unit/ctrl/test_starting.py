"""Starting run n: its entry and footing, StartSimulation retried through an outage, a run
started just before an sk-ctrl crash adopted, a refusal written and raised."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import grpc
import pytest

from simkube.core.kubeapi import CONFIG_MAPS, KubeClient
from simkube.ctrl import nodegroups
from simkube.ctrl.reporting import RunReport
from simkube.ctrl.retrying import SimulationFailedError
from simkube.ctrl.starting import start_run
from simkube.simulation.run_configmap import RUN_CONFIGMAP, RunKey
from tests.support.fake_api import FakeApi
from tests.unit.ctrl.fakes import (
    UNAVAILABLE,
    FakeDriver,
    FakeLoops,
    context,
    counter,
    progress,
    reasons,
    refusal,
    simulation,
    status_writes,
)

pytestmark = pytest.mark.unit
GROUPS_FILE = (Path(__file__).resolve().parents[3]
               / "services/simkube/env/services/node-groups.yaml")


async def test_a_run_is_prepared_then_started(tmp_path: Path) -> None:
    api, driver = FakeApi(), FakeDriver()
    ctx = context(api, driver, tmp_path, sim=simulation(spec={"repetitions": 2}))
    entry = await start_run(ctx, RunReport(ctx), number=2, spec=ctx.spec(), config=None)
    assert (entry.run, entry.state) == (2, "Initializing")
    assert entry.results_dir == str(tmp_path / "results" / "shop" / "run-2")
    assert [(name, spec.repetitions) for name, spec in driver.started] == [("shop-r2", 2)]
    assert reasons(api) == ["Initializing", "RunStarted"]
    *_, restarting, prepared, starting = status_writes(api)
    # Each step of the preparation in the status, so one stuck there says where.
    assert restarting["message"] == ("preparing run 2 of 2: restarting components with the "
                                     "run's timers")
    assert "timers" in prepared  # prepared before the driver was asked, and the status says
    assert starting["message"] == "preparing run 2 of 2: starting it in sk-driver"
    assert counter(ctx.deps.metrics, "simkube_ctrl_runs_started_total") == 1


async def test_the_first_run_sets_an_older_namesakes_results_aside(tmp_path: Path) -> None:
    old = tmp_path / "results" / "shop" / "run-1"
    old.mkdir(parents=True)
    (old / "summary.json").write_text("{}")
    ctx = context(FakeApi(), FakeDriver(), tmp_path)
    await start_run(ctx, RunReport(ctx), number=1, spec=ctx.spec(), config=None)
    assert [p.name.startswith("shop.previous-") for p in (tmp_path / "results").iterdir()
            if p.name != "shop"] == [True]


async def test_an_outage_is_ridden_out(tmp_path: Path) -> None:
    driver = FakeDriver()
    driver.refuse("start", refusal(UNAVAILABLE), refusal(UNAVAILABLE))
    ctx = context(FakeApi(), driver, tmp_path)
    await start_run(ctx, RunReport(ctx), number=1, spec=ctx.spec(), config=None)
    assert driver.called("start") == ["shop-r1"] * 3


async def test_a_run_started_before_a_crash_is_ours(tmp_path: Path) -> None:
    api, driver = FakeApi(), FakeDriver()
    driver.known["shop-r1"] = progress("shop-r1")
    ctx = context(api, driver, tmp_path)
    entry = await start_run(ctx, RunReport(ctx), number=1, spec=ctx.spec(), config=None)
    assert entry.state == "Initializing"
    assert driver.called("runs") == [""]
    assert reasons(api)[-1] == "RunStarted"


async def test_a_refused_run_is_written_failed(tmp_path: Path) -> None:
    api, driver = FakeApi(), FakeDriver()
    driver.refuse("start", refusal(grpc.StatusCode.INVALID_ARGUMENT, "no such trace"))
    ctx = context(api, driver, tmp_path)
    with pytest.raises(SimulationFailedError) as caught:
        await start_run(ctx, RunReport(ctx), number=1, spec=ctx.spec(), config=None)
    assert caught.value.message == "sk-driver refused run 1: no such trace"
    (entry,) = status_writes(api)[-1]["runs"]
    assert (entry["state"], entry["message"]) == ("Failed", "no such trace")
    assert "endTime" in entry
    assert "RunStarted" not in reasons(api)


async def test_a_held_run_asks_the_driver_to_hold_for_work_that_makes_pods(
        tmp_path: Path) -> None:
    driver = FakeDriver()
    held = context(FakeApi(), driver, tmp_path, loops=FakeLoops(),
                   sim=simulation(spec={"speed": 20}))
    await start_run(held, RunReport(held), number=1, spec=held.spec(), config=None)
    real_time = context(FakeApi(), driver, tmp_path, loops=FakeLoops(), sim=simulation())
    await start_run(real_time, RunReport(real_time), number=2, spec=real_time.spec(),
                    config=None)
    assert driver.pod_work_held == [True, False]  # at speed 1 nothing holds


async def test_a_held_run_with_node_groups_publishes_its_start_as_a_hold(
        tmp_path: Path) -> None:
    config = await nodegroups.load(cast(KubeClient, FakeApi()), str(GROUPS_FILE))
    path = CONFIG_MAPS.path(namespace=config.namespace, name=RUN_CONFIGMAP)
    held_api, real_api = FakeApi(), FakeApi()
    held = context(held_api, FakeDriver(), tmp_path, loops=FakeLoops(),
                   sim=simulation(spec={"speed": 20, "nodeGroups": {"resetBeforeRun": False}}))
    await start_run(held, RunReport(held), number=1, spec=held.spec(), config=config)
    [start_hold] = [body for body in held_api.sent("PATCH", path)
                    if body["data"].get(RunKey.HOLDING)]
    assert start_hold["data"][RunKey.HOLDS] == ""
    real_time = context(real_api, FakeDriver(), tmp_path, loops=FakeLoops(),
                        sim=simulation(spec={"nodeGroups": {"resetBeforeRun": False}}))
    await start_run(real_time, RunReport(real_time), number=1, spec=real_time.spec(),
                    config=config)
    assert real_api.sent("PATCH", path) == []  # at speed 1 nothing holds
