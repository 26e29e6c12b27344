from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from simkube.driver.errors import SimulationConflictError, SimulationNotFoundError
from simkube.driver.options import build_options
from simkube.driver.registry import Registry, SimulationCollector
from simkube.trace import TraceSource, open_trace
from tests.support.traces import build_trace, config_map, write_native
from tests.unit.driver.fakes import FakeCluster, FakeKube

pytestmark = pytest.mark.unit


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    return write_native(tmp_path / "t.trace", build_trace([(0, [config_map("a")])]))


async def test_names_are_reserved_while_starting(trace: Path) -> None:
    registry = Registry(kube=FakeKube(answer=FakeCluster()))  # type: ignore[arg-type]
    opened = asyncio.Event()
    proceed = asyncio.Event()

    async def slow_source() -> TraceSource:
        opened.set()
        await proceed.wait()
        return open_trace(trace)
    first = asyncio.create_task(registry.start(build_options(name="sim"), slow_source))
    await opened.wait()
    with pytest.raises(SimulationConflictError, match="already running"):
        await registry.start(build_options(name="sim"), slow_source)
    proceed.set()
    simulation = await first
    assert registry.get("sim") is simulation
    with pytest.raises(SimulationConflictError):
        await registry.start(build_options(name="sim"), slow_source)
    await simulation.wait()
    with pytest.raises(SimulationNotFoundError, match="no simulation named 'other'"):
        registry.get("other")


async def test_old_finished_simulations_are_forgotten(trace: Path) -> None:
    registry = Registry(kube=FakeKube(answer=FakeCluster()), keep_finished=2)  # type: ignore[arg-type]
    for index in range(4):
        simulation = await registry.start(build_options(name=f"s{index}", speed=1000.0),
                                          lambda: _open(trace))
        await simulation.wait()
    await registry.start(build_options(name="s4", speed=1000.0), lambda: _open(trace))
    assert [sim.name for sim in registry.all()] == ["s2", "s3", "s4"]


async def _open(trace: Path) -> TraceSource:
    return open_trace(trace)


async def test_shutdown_cancels_what_runs_and_metrics_describe_it(trace: Path) -> None:
    cluster = FakeCluster()
    registry = Registry(kube=FakeKube(answer=cluster))  # type: ignore[arg-type]
    long = write_native(trace.with_name("long.trace"), build_trace(
        [(0, [config_map("a")]), (60_000, [config_map("b")])]))
    simulation = await registry.start(build_options(name="long"), lambda: _open(long))
    await asyncio.sleep(0.05)  # start returns Pending; the replay task makes it Running
    families = {family.name: family for family in SimulationCollector(registry).collect()}
    assert families["simkube_driver_events_total"].samples[0].value == 2
    assert families["simkube_driver_simulations"].samples[0].labels == {"state": "Running"}
    await registry.shutdown(timeout=5)
    assert simulation.snapshot().state.value == "Cancelled"
    assert not cluster.roots


async def test_a_root_an_earlier_driver_left_is_cleared_and_no_other(trace: Path) -> None:
    cluster = FakeCluster()
    cluster.roots.add("left")  # started by a driver process that died
    registry = Registry(kube=FakeKube(answer=cluster))  # type: ignore[arg-type]
    await registry.clear_leftover("left")
    assert "left" not in cluster.roots
    with pytest.raises(SimulationNotFoundError, match="no root of that name in the cluster"):
        await registry.clear_leftover("left")
    mine = await registry.start(build_options(name="mine", speed=1000.0), lambda: _open(trace))
    with pytest.raises(SimulationConflictError, match="belongs to this driver"):
        await registry.clear_leftover("mine")
    await mine.wait()
    assert "mine" in cluster.roots  # still this driver's to clean up
