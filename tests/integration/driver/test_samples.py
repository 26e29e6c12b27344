"""Replaying SimKube's sample traces into the local environment, timed against the trace.

The three replays run side by side (they take minutes each at the speeds the checks need),
each in its own virtual namespaces, each watched from before its first event; every test
then checks what its watcher saw.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from simkube.core.kubeapi import KubeClient
from simkube.driver.progress import SimulationState
from simkube.driver.simulation import Simulation
from simkube.trace import read_trace
from tests.conftest import SimEnv
from tests.integration.driver.conftest import (
    DATA,
    Recorder,
    assert_nothing_left,
    start,
    wait_finished,
)
from tests.support.kube import eventually

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="module")]

DSB_SPEED = 10.0
ON_TIME = 1.0  # a change must be visible within this many seconds of its scaled time
EARLY = 0.05  # ...and never earlier than this before it
LIFETIME_TOLERANCE = 1.0


@dataclass
class Replay:
    simulation: Simulation
    recorder: Recorder


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def replays(sim_env: SimEnv) -> AsyncIterator[dict[str, Replay]]:
    kube = await KubeClient.connect(kubeconfig=Path(sim_env.kubeconfig))
    running: dict[str, Replay] = {}
    try:
        for sample, trace, speed, path in (
                ("dsb", "dsb-scaling.sktrace", DSB_SPEED, "/apis/apps/v1/deployments"),
                ("bare", "bare-pods.sktrace", 1.0, "/api/v1/pods"),
                ("cron", "cronjob.sktrace", 1.0, "/api/v1/pods")):
            simulation = await start(kube, DATA / trace, speed=speed)
            recorder = Recorder(kube=kube, path=path, simulation=simulation.name)
            await recorder.__aenter__()
            running[sample] = Replay(simulation=simulation, recorder=recorder)
        yield running
    finally:
        for replay in running.values():
            await replay.recorder.__aexit__()
            await replay.simulation.cancel(wait=True)
        await kube.close()


def _replicas(obj: dict[str, Any]) -> Any:
    return obj["spec"].get("replicas")


def _phase(obj: dict[str, Any]) -> Any:
    return obj.get("status", {}).get("phase")


async def test_dsb_scaling_replicas_follow_the_trace(replays: dict[str, Replay]) -> None:
    replay = replays["dsb"]
    simulation = replay.simulation
    await wait_finished(simulation, timeout=1200 / DSB_SPEED + 120)
    assert simulation.state is SimulationState.SUCCEEDED
    progress = simulation.snapshot()
    assert (progress.events_applied, progress.objects_failed) == (19, 0)

    trace = read_trace(DATA / "dsb-scaling.sktrace")
    expected: dict[str, list[tuple[float, int]]] = {}
    for event in trace.events:
        for obj in event.applied:
            due = simulation.clock.due(event.ts_ms - trace.events[0].ts_ms)
            changes = expected.setdefault(obj["metadata"]["name"], [])
            if not changes or changes[-1][1] != obj["spec"]["replicas"]:
                changes.append((due, obj["spec"]["replicas"]))
    assert len(expected) == 27
    late = []
    for name, changes in expected.items():
        seen = replay.recorder.timeline(name, _replicas)
        assert [value for _, value in seen] == [value for _, value in changes], name
        for (at, value), (due, _) in zip(seen, changes, strict=True):
            assert at >= due - EARLY, f"{name} became {value} {due - at:.3f}s early"
            if at - due > ON_TIME:
                late.append(f"{name}={value} {at - due:.3f}s late")
    assert not late, late


async def test_bare_pods_complete_after_their_recorded_durations(
        replays: dict[str, Replay]) -> None:
    replay = replays["bare"]
    simulation = replay.simulation
    await wait_finished(simulation, timeout=162 + 120)
    assert simulation.state is SimulationState.SUCCEEDED
    assert simulation.snapshot().pods_timed == 3

    trace = read_trace(DATA / "bare-pods.sktrace")
    for lifecycle in trace.lifecycles:
        name = lifecycle.owner.split("/")[1]
        run = lifecycle.runs[0]

        async def phases(name: str = name) -> list[tuple[float, Any]] | None:
            seen = replay.recorder.timeline(name, _phase)
            return seen if seen and seen[-1][1] in ("Running", "Succeeded") else None
        seen = await eventually(phases, timeout=30, what=f"pod {name} running")
        if run.end_ms is None:
            await asyncio.sleep(3)
            assert replay.recorder.timeline(name, _phase)[-1][1] == "Running"
            continue

        async def succeeded(name: str = name) -> list[tuple[float, Any]] | None:
            seen = replay.recorder.timeline(name, _phase)
            return seen if seen[-1][1] == "Succeeded" else None
        seen = await eventually(succeeded, timeout=60, what=f"pod {name} to complete")
        running = next(at for at, phase in seen if phase == "Running")
        lived = seen[-1][0] - running
        recorded = (run.end_ms - run.start_ms) / 1000
        assert abs(lived - recorded) <= LIFETIME_TOLERANCE, (name, lived, recorded)


async def test_cronjob_fires_at_the_traces_minute_boundaries(replays: dict[str, Replay]) -> None:
    """The driver fires the CronJob on the trace's clock: its Jobs are named for the trace's
    minute boundaries (23 s into a minute at the start: offsets 37, 97, 157 s) and their pods
    appear when those offsets are due, three before the trace deletes the CronJob at 205 s."""
    replay = replays["cron"]
    simulation = replay.simulation

    async def jobs_seen() -> dict[str, float] | None:
        first: dict[str, float] = {}
        for item in replay.recorder.seen:
            for ref in item.obj["metadata"].get("ownerReferences", []):
                if ref["kind"] == "Job":
                    first.setdefault(ref["name"], item.at)
        return first if len(first) >= 3 else None
    seen = await eventually(jobs_seen, timeout=240, what="pods of three fired Jobs")
    offsets = {}
    for job, at in seen.items():
        minute = int(job.rsplit("-", 1)[1])
        offsets[minute * 60_000 - simulation.scan.start_ms] = at
    assert sorted(offsets) == [37_000, 97_000, 157_000]
    for offset, at in offsets.items():
        lateness = at - simulation.clock.due(offset)
        assert -EARLY <= lateness <= ON_TIME + 1.0, (offset, lateness)  # + the Job controller


async def test_cronjob_pods_complete_after_30s_and_cancel_leaves_nothing(
        replays: dict[str, Replay]) -> None:
    replay = replays["cron"]

    async def first_job_pod() -> str | None:
        return next((item.name for item in replay.recorder.seen
                     if any(ref["kind"] == "Job"
                            for ref in item.obj["metadata"].get("ownerReferences", []))),
                    None)
    # The CronJob fires on the trace's clock (first at 37 s of trace).
    pod = await eventually(first_job_pod, timeout=90, what="the CronJob's first pod")

    async def completed() -> list[tuple[float, Any]] | None:
        seen = replay.recorder.timeline(pod, _phase)
        return seen if seen and seen[-1][1] == "Succeeded" else None
    seen = await eventually(completed, timeout=60, what=f"pod {pod} to complete")
    running = next(at for at, phase in seen if phase == "Running")
    assert abs(seen[-1][0] - running - 30.0) <= LIFETIME_TOLERANCE

    kube = replay.recorder.kube
    final = await replay.simulation.cancel(wait=True)
    assert final.state is SimulationState.CANCELLED
    assert final.cleaned_up
    await assert_nothing_left(kube, replay.simulation)

