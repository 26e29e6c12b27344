"""The shared context of one simulation: the latest copy, its spec, Events, the retrier."""

from __future__ import annotations

from pathlib import Path

import pytest

from simkube.ctrl.retrying import Retrier
from tests.support.fake_api import FakeApi
from tests.unit.ctrl.fakes import FakeDriver, context, deps, events, simulation

pytestmark = pytest.mark.unit


async def test_events_are_about_the_latest_copy(tmp_path: Path) -> None:
    api = FakeApi()
    ctx = context(api, FakeDriver(), tmp_path)
    ctx.update(simulation(generation=4, spec={"speed": 5}))
    await ctx.emit("Paused", "run shop-r1 paused", warning=True)
    assert events(api) == [("Warning", "Paused", "run shop-r1 paused")]
    assert api.sent("POST")[0]["involvedObject"]["name"] == "shop"
    assert ctx.changed.is_set()
    assert (ctx.generation, ctx.spec().scale.speed) == (4, 5.0)


def test_status_starts_from_the_simulations_own(tmp_path: Path) -> None:
    ctx = context(FakeApi(), FakeDriver(), tmp_path,
                  sim=simulation(status={"state": "Running", "currentRun": 2}))
    assert ctx.writer.state == "Running"
    assert (ctx.current, ctx.recorder, ctx.progress) == (None, None, None)


def test_the_retrier_gets_the_drivers_address_and_budget(tmp_path: Path) -> None:
    retrier = deps(FakeApi(), FakeDriver(), tmp_path, retry_budget=7.0,
                   retry_delay=0.5).retrier()
    assert isinstance(retrier, Retrier)
    assert (retrier.address, retrier.budget, retrier.delay) == ("fake-driver:50051", 7.0, 0.5)


def test_the_spec_is_parsed_once_per_copy(tmp_path: Path) -> None:
    ctx = context(FakeApi(), FakeDriver(), tmp_path, sim=simulation(spec={"speed": 2}))
    first = ctx.spec()
    assert ctx.spec() is first
    ctx.update(simulation(spec={"speed": 20}))
    assert ctx.spec() is not first
    assert ctx.spec().scale.speed == 20.0
