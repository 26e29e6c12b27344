from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from simkube.core.kubeapi import ApiError
from simkube.driver.errors import SimulationConflictError, SimulationStateError
from simkube.driver.options import build_options
from simkube.driver.progress import SimulationState
from simkube.driver.registry import launch
from simkube.driver.simulation import Simulation
from simkube.trace import open_trace
from tests.support.traces import build_trace, config_map, write_native
from tests.unit.driver.fakes import Call, FakeCluster, FakeKube

pytestmark = pytest.mark.unit


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    return write_native(tmp_path / "t.trace", build_trace(
        [(0, [config_map("a")]), (200, [config_map("b")]), (400, [config_map("c")])]))


async def _start(kube: FakeKube, trace: Path, **fields: object) -> Simulation:
    options = build_options(name="sim", **fields)  # type: ignore[arg-type]
    return await launch(kube=kube, options=options, source=open_trace(trace))  # type: ignore[arg-type]


async def test_a_replay_runs_to_success_and_reports_on_its_root(trace: Path) -> None:
    cluster = FakeCluster()
    kube = FakeKube(answer=cluster)
    simulation = await _start(kube, trace, speed=4.0)
    assert simulation.root is not None
    assert simulation.root.uid == "uid-sim"
    snapshots = [snapshot async for snapshot in simulation.changes(interval=0.01)]
    assert snapshots[-1].state is SimulationState.SUCCEEDED
    assert [s.events_applied for s in snapshots] == sorted(s.events_applied for s in snapshots)
    final = await simulation.wait()
    assert (final.events_applied, final.objects_applied, final.objects_failed) == (3, 3, 0)
    assert final.trace_time_ms == final.trace_length_ms == 400
    assert final.wall_time_ms >= 100 - 5
    assert cluster.statuses[-1]["state"] == "Succeeded"
    assert not final.cleaned_up
    assert "sim" in cluster.roots


async def test_cleanup_option_deletes_the_root(trace: Path) -> None:
    cluster = FakeCluster()
    simulation = await _start(FakeKube(answer=cluster), trace, speed=100.0, cleanup=True)
    snapshots = [snapshot async for snapshot in simulation.changes(interval=0.01)]
    assert snapshots[-1].cleaned_up
    assert snapshots[-1].state is SimulationState.SUCCEEDED
    assert not cluster.roots


async def test_pause_resume_and_cancel(trace: Path) -> None:
    cluster = FakeCluster()
    simulation = await _start(FakeKube(answer=cluster), trace, speed=0.5)
    await asyncio.sleep(0.05)
    with pytest.raises(SimulationStateError, match="only a Paused simulation can be resumed"):
        simulation.resume()
    simulation.pause()
    assert simulation.state is SimulationState.PAUSED
    with pytest.raises(SimulationStateError, match="only a Running"):
        simulation.pause()
    simulation.resume()
    cancelling = await simulation.cancel(wait=False)
    assert cancelling.state is SimulationState.CANCELLING
    final = await simulation.cancel(wait=True)
    assert final.state is SimulationState.CANCELLED
    assert final.cleaned_up
    assert final.events_applied < final.events_total
    assert not cluster.roots
    assert [s async for s in simulation.changes(interval=0.01)][-1].cleaned_up


async def test_a_hold_stops_the_clock_without_pausing_and_composes_with_a_pause(
        trace: Path) -> None:
    simulation = await _start(FakeKube(answer=FakeCluster()), trace, speed=0.5)
    await asyncio.sleep(0.05)
    simulation.hold()
    simulation.hold()  # idempotent
    held = simulation.snapshot()
    assert held.state is SimulationState.RUNNING  # a hold is not a pause
    assert held.held
    simulation.pause()
    simulation.release()  # ends the hold, not the user's pause
    assert simulation.state is SimulationState.PAUSED
    assert simulation.clock.paused
    simulation.hold()  # a paused simulation can be held too
    simulation.resume()  # ends the pause, not the hold
    assert simulation.state is SimulationState.RUNNING
    assert simulation.clock.held
    simulation.release()
    simulation.release()
    snapshot = simulation.snapshot()
    assert not snapshot.held
    assert snapshot.held_ms >= 0
    await simulation.cancel()
    with pytest.raises(SimulationStateError, match="only a Running or Paused"):
        simulation.hold()
    simulation.release()  # after the end: no error


async def test_a_hold_nobody_releases_expires(trace: Path) -> None:
    simulation = await _start(FakeKube(answer=FakeCluster()), trace, speed=0.5)
    await asyncio.sleep(0.02)
    simulation.hold(expires_after_s=0.05)
    assert simulation.clock.held
    await asyncio.sleep(0.1)
    assert not simulation.clock.held
    assert simulation.snapshot().held_ms >= 40
    await simulation.cancel()


async def test_cancel_after_the_end_only_cleans_up(trace: Path) -> None:
    cluster = FakeCluster()
    simulation = await _start(FakeKube(answer=cluster), trace, speed=100.0)
    await simulation.wait()
    final = await simulation.cancel()
    assert final.state is SimulationState.SUCCEEDED
    assert final.cleaned_up
    assert not cluster.roots


async def test_refused_starts_create_no_root(trace: Path) -> None:
    cluster = FakeCluster()
    cluster.taken_namespaces.add("virtual-app")
    with pytest.raises(SimulationConflictError, match="virtual-app already exists"):
        await _start(FakeKube(answer=cluster), trace)
    assert not cluster.roots
    cluster.taken_namespaces.clear()
    cluster.roots.add("sim")
    with pytest.raises(SimulationConflictError, match="root sim already exists"):
        await _start(FakeKube(answer=cluster), trace)


async def test_a_crash_fails_the_simulation_with_a_message(trace: Path) -> None:
    cluster = FakeCluster()

    def answer(call: object) -> object:
        if getattr(call, "method", "") == "PATCH" and "configmaps" in getattr(call, "path", ""):
            raise RuntimeError("boom")
        return cluster(call)  # type: ignore[arg-type]
    simulation = await _start(FakeKube(answer=answer), trace, speed=100.0)
    final = await simulation.wait()
    assert final.state is SimulationState.FAILED
    assert "internal error" in final.message
    assert "boom" in final.message



async def test_a_failed_cleanup_is_reported_and_can_be_retried(trace: Path) -> None:
    cluster = FakeCluster()
    refuse = [True]

    def answer(call: Call) -> object:
        if call.method == "DELETE" and refuse[0]:
            return ApiError(code=403, reason="Forbidden", message="no deleting roots")
        return cluster(call)
    simulation = await _start(FakeKube(answer=answer), trace, speed=100.0)
    await simulation.wait()
    with pytest.raises(ApiError, match="no deleting roots"):
        await simulation.cancel()
    snapshot = simulation.snapshot()
    assert not snapshot.cleaned_up
    assert "cleanup failed" in snapshot.message
    refuse[0] = False
    assert (await simulation.cancel()).cleaned_up


def _deployment(replicas: int) -> dict[str, object]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "app"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "c", "image": "x"}]}}}}


@pytest.mark.parametrize("hold_pod_work", [True, False])
async def test_a_held_run_holds_by_itself_as_it_applies_work_that_makes_pods(
        tmp_path: Path, hold_pod_work: bool) -> None:
    scaled = write_native(tmp_path / "scaled.trace", build_trace(
        [(0, [_deployment(1)]), (2000, [_deployment(1)]), (4000, [_deployment(3)])]))
    simulation = await _start(FakeKube(answer=FakeCluster()), scaled, speed=100.0,
                              hold_pod_work=hold_pod_work)
    final = await simulation.wait()
    assert final.state is SimulationState.SUCCEEDED
    # Created, then scaled up: two brief holds, nobody here to take them over; the
    # unchanged apply at 2 s held nothing. The first expired; the replay's end ended the
    # second.
    holds = simulation.holds
    assert (holds.own_holds, holds.own_expired) == ((2, 1) if hold_pod_work else (0, 0))
    assert (final.held_ms >= 240) is hold_pod_work
    assert (final.held, final.held_since_unix_ms) == (False, 0)


async def test_a_hold_beginning_or_ending_is_told_at_once_not_an_interval_later(
        trace: Path) -> None:
    simulation = await _start(FakeKube(answer=FakeCluster()), trace, speed=0.5)
    await asyncio.sleep(0.02)
    updates = simulation.changes(interval=5.0)
    assert not (await anext(updates)).held
    simulation.hold(expires_after_s=5.0)
    async with asyncio.timeout(1.0):  # well inside the five-second interval
        assert (await anext(updates)).held
        simulation.release()
        assert not (await anext(updates)).held
    await updates.aclose()
    await simulation.cancel()
