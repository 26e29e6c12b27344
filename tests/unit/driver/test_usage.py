from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from simkube.core.simtime import TimeScale
from simkube.driver.clock import ReplayClock
from simkube.driver.names import USAGE_WORKLOAD
from simkube.driver.usage import UsagePlayer, WorkloadState
from simkube.driver.usage_objects import PodShare, workload_key
from simkube.trace.model.usage import UsageSample, WorkloadUsage
from tests.unit.driver.fakes import FakeKube

pytestmark = pytest.mark.unit
SERIES = WorkloadUsage(kind="apps/v1.Deployment", namespace="shop", name="web",
                       period_ms=15_000,
                       samples=(UsageSample(t_ms=0, pods=2, cpu_millicores=400,
                                            memory_bytes=2000),))


def _state() -> WorkloadState:
    return WorkloadState(series=SERIES, key="apps/v1.Deployment shop/web", namespace="v-shop",
                         name="sim-usage-x")


def _pod(name: str, phase: str, *, containers: int = 1, deleting: bool = False,
         ) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if deleting:
        metadata["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": metadata, "status": {"phase": phase},
            "spec": {"containers": [{"name": f"c{i}"} for i in range(containers)]}}


def test_nothing_is_written_before_a_sample_or_a_running_pod() -> None:
    state = _state()
    state.see(_pod("web-a", "Running"), deleted=False)
    assert state.wanted() is None  # no sample yet
    state.pods.clear()
    state.sample = SERIES.samples[0]
    state.see(_pod("web-a", "Pending"), deleted=False)
    assert state.wanted() is None  # nobody runs to report it


def test_pending_pods_are_named_but_only_running_ones_share_the_load() -> None:
    state = _state()
    state.sample = SERIES.samples[0]
    state.see(_pod("web-a", "Running"), deleted=False)
    state.see(_pod("web-b", "Pending"), deleted=False)
    assert state.wanted() == (("web-a", "web-b"), PodShare(cpu_millicores=400,
                                                           memory_bytes=2000))
    state.see(_pod("web-b", "Running"), deleted=False)  # the HPA's new pod runs
    assert state.wanted() == (("web-a", "web-b"), PodShare(cpu_millicores=200,
                                                           memory_bytes=1000))


def test_deleted_deleting_and_ended_pods_leave_the_workload() -> None:
    state = _state()
    state.sample = SERIES.samples[0]
    for name in ("a", "b", "c", "d"):
        state.see(_pod(name, "Running", containers=2), deleted=False)
    state.see(_pod("a", "Running"), deleted=True)
    state.see(_pod("b", "Running", deleting=True), deleted=False)
    state.see(_pod("c", "Succeeded"), deleted=False)
    assert state.wanted() == (("d",), PodShare(cpu_millicores=200, memory_bytes=1000))




async def test_a_due_sample_is_written_at_once_not_at_the_next_flush_tick() -> None:
    # Two samples 50 ms apart and a flush tick a minute away: each is written when due.
    series = WorkloadUsage(kind="apps/v1.Deployment", namespace="shop", name="web",
                           period_ms=15_000,
                           samples=(UsageSample(t_ms=0, pods=1, cpu_millicores=400,
                                                memory_bytes=2000),
                                    UsageSample(t_ms=50, pods=1, cpu_millicores=900,
                                                memory_bytes=2000)))
    kube = FakeKube()
    clock = ReplayClock(scale=TimeScale(1.0))
    player = UsagePlayer(kube=kube, simulation="sim", clock=clock, series=(series,),
                         namespace_of={"shop": "v-shop"}, owner={}, flush_s=60.0)
    key = workload_key(series)
    running = _pod("web-a", "Running")
    running["metadata"]["annotations"] = {USAGE_WORKLOAD: key}
    player.see(running, deleted=False)
    clock.start()
    playing = asyncio.gather(player.run())
    try:
        async with asyncio.timeout(5):
            while player.writes < 2:  # noqa: ASYNC110  # polling the player's own counter
                await asyncio.sleep(0.01)
    finally:
        playing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await playing
    written = [call.body for call in kube.made("PATCH")]
    assert len(written) == 2
    assert written[0] != written[1]  # the second sample's load, not the first again
