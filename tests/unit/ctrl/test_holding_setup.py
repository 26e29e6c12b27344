"""A run's holding decided, shown in status, wired around following, its time published."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from simkube.core.kubeapi import CONFIG_MAPS, PODS
from simkube.core.simtime import BRIEF_HOLD_BOUND_S
from simkube.ctrl.holding_setup import (
    KEEP_HOLDS,
    HeldPublisher,
    holding,
    holding_status,
    publish_start_hold,
)
from simkube.simulation.run_configmap import RUN_CONFIGMAP, RunKey
from tests.support.fake_api import FakeApi
from tests.unit.ctrl.fakes import (
    FakeDriver,
    FakeLoops,
    context,
    progress,
    simulation,
    status_writes,
)
from tests.unit.ctrl.test_unschedulable import pod

pytestmark = pytest.mark.unit


def test_the_status_says_whether_runs_hold_and_why_not(tmp_path: Path) -> None:
    api, driver = FakeApi(), FakeDriver()
    off = context(api, driver, tmp_path, sim=simulation(spec={"speed": 20}))
    assert holding_status(off, off.spec()) == (
        False, "off: sk-ctrl has no --autoscaler-metrics-url (no autoscaler to wait for)")
    turned_off = context(api, driver, tmp_path, loops=FakeLoops(),
                         sim=simulation(spec={"clock": {"holdForAutoscaler": False}}))
    assert holding_status(turned_off, turned_off.spec())[1] == (
        "off: spec.clock.holdForAutoscaler is false")
    real_time = context(api, driver, tmp_path, loops=FakeLoops(), sim=simulation())
    assert holding_status(real_time, real_time.spec()) == (
        False, "off: the run is not faster than real time")
    on = context(api, driver, tmp_path, loops=FakeLoops(),
                 sim=simulation(spec={"speed": 20, "clock": {"maxHold": "1500ms"}}))
    # maxHold plus two of CA's scans at speed 20 (10 s / 20 each): CA loops on its scan alone.
    assert holding_status(on, on.spec())[1].endswith("at most 2.5s")


async def test_an_unschedulable_pod_of_the_run_holds_its_clock(tmp_path: Path) -> None:
    api = FakeApi(lists={PODS.path(): [pod("a")]})
    driver = FakeDriver()
    driver.known["shop-r1"] = progress("shop-r1")
    loops = FakeLoops()
    loops.finish_loop_after(3)
    ctx = context(api, driver, tmp_path, loops=loops, sim=simulation(spec={"speed": 20}))
    async with holding(ctx, spec=ctx.spec(), run="shop-r1", config=None) as holder:
        assert holder is not None
        await asyncio.sleep(0.2)
    assert driver.called("hold") == driver.called("release") == ["shop-r1"]
    assert status_writes(api)[0]["holding"].startswith("on:")


async def test_without_metrics_nothing_is_watched_or_held(tmp_path: Path) -> None:
    api, driver = FakeApi(lists={PODS.path(): [pod("a")]}), FakeDriver()
    ctx = context(api, driver, tmp_path)
    async with holding(ctx, spec=ctx.spec(), run="shop-r1", config=None) as holder:
        assert holder is None
        await asyncio.sleep(0.01)
    assert ("GET", PODS.path()) not in api.requests
    assert driver.called("hold") == []


async def test_the_holds_are_merged_into_the_run_configmap_latest_list_first() -> None:
    api = FakeApi()
    publisher = HeldPublisher(kube=api, namespace="sk")  # type: ignore[arg-type]
    task = asyncio.create_task(publisher.run())
    publisher.update((10.0, 10.5))
    publisher.update((12.0, 12.25))  # before the first write: one write with both
    await asyncio.sleep(0.05)
    task.cancel()
    path = CONFIG_MAPS.path(namespace="sk", name=RUN_CONFIGMAP)
    assert api.sent("PATCH", path) == [{"data": {RunKey.HOLDS: "10000-10500,12000-12250",
                                                 RunKey.HOLDING: ""}}]


async def test_a_hold_in_progress_is_published_at_once_and_cleared_by_its_end() -> None:
    api = FakeApi()
    publisher = HeldPublisher(kube=api, namespace="sk")  # type: ignore[arg-type]
    task = asyncio.create_task(publisher.run())
    publisher.began((20.0, 27.0))
    await asyncio.sleep(0.01)
    publisher.update((20.0, 20.75))
    await asyncio.sleep(0.1)
    task.cancel()
    path = CONFIG_MAPS.path(namespace="sk", name=RUN_CONFIGMAP)
    assert api.sent("PATCH", path) == [
        {"data": {RunKey.HOLDS: "", RunKey.HOLDING: "20000-27000"}},
        {"data": {RunKey.HOLDS: "20000-20750", RunKey.HOLDING: ""}}]


async def test_a_held_run_starts_with_a_brief_hold_published() -> None:
    """Before sk-driver starts the run, so the Karpenter build's clocks do not run at the
    run's speed while sk-driver holds for the first pods and nobody has said so yet."""
    api = FakeApi()
    await publish_start_hold(api, namespace="sk", wall=lambda: 30.0)  # type: ignore[arg-type]
    path = CONFIG_MAPS.path(namespace="sk", name=RUN_CONFIGMAP)
    expiry = round((30.0 + BRIEF_HOLD_BOUND_S) * 1000)
    assert api.sent("PATCH", path) == [
        {"data": {RunKey.HOLDS: "", RunKey.HOLDING: f"30000-{expiry}"}}]


def test_only_recent_holds_are_kept() -> None:
    publisher = HeldPublisher(kube=FakeApi(), namespace="sk")  # type: ignore[arg-type]
    publisher.update((0.0, 1.0))
    publisher.update((2000.0, 2000.5))  # the first ended more than KEEP_S before
    for n in range(KEEP_HOLDS + 5):
        publisher.update((3000.0 + n, 3000.5 + n))
    assert len(publisher._holds) == KEEP_HOLDS
    assert publisher._holds[-1] == (3000.0 + KEEP_HOLDS + 4, 3000.5 + KEEP_HOLDS + 4)


def held_progress(*, since_ms: int) -> Any:
    update = progress("shop-r1")
    update.held, update.held_since_unix_ms = since_ms > 0, since_ms
    return update


def test_a_driver_hold_nobody_took_over_is_published_from_the_progress() -> None:
    now = [40.5]
    publisher = HeldPublisher(kube=FakeApi(), namespace="sk",  # type: ignore[arg-type]
                              wall=lambda: now[0])
    publisher.observe(held_progress(since_ms=40_000))  # sk-driver's own, as it applied
    assert publisher._holding == (40.0, 40.0 + BRIEF_HOLD_BOUND_S)
    publisher.observe(held_progress(since_ms=40_000))  # the same hold, told again
    publisher.observe(held_progress(since_ms=0))
    assert (publisher._holds, publisher._holding) == ([(40.0, 40.5)], None)


def test_a_driver_hold_the_holder_took_over_is_published_once() -> None:
    now = [51.0]
    publisher = HeldPublisher(kube=FakeApi(), namespace="sk",  # type: ignore[arg-type]
                              wall=lambda: now[0])
    publisher.observe(held_progress(since_ms=50_000))
    publisher.began((50.0, 54.0))  # the holder took it over, from the driver's start
    publisher.observe(held_progress(since_ms=0))  # the watch told of its end first
    publisher.update((50.0, 50.8))  # then the holder's release: the same hold
    assert publisher._holds == [(50.0, 50.8)]
    now[0] = 52.0
    publisher.observe(held_progress(since_ms=51_000))
    publisher.began((51.0, 55.0))  # a hold of the holder's own: it alone publishes it
    publisher.update((51.0, 51.4))
    publisher.observe(held_progress(since_ms=0))
    assert publisher._holds == [(50.0, 50.8), (51.0, 51.4)]
