from __future__ import annotations

import asyncio
import contextlib
import time

import pytest

from simkube.core.kubeapi import ApiError
from simkube.core.simtime import TimeScale
from simkube.driver.clock import ReplayClock
from simkube.driver.countable import CountableMarker, countable_at, scrape_grid
from simkube.driver.names import USAGE_COUNTABLE
from tests.unit.driver.fakes import Call, FakeKube

pytestmark = pytest.mark.unit
GRID = (32_192, 15_000)  # the source scraped at 32.192 s and every 15 s before and after


def test_the_grid_is_the_first_stamp_and_the_shortest_gap() -> None:
    # a sampling round that read the same scrape again leaves a double gap: not the resolution
    assert scrape_grid([32_192, 47_192, 77_192, 77_192, 92_192]) == (32_192, 15_000)
    assert scrape_grid([5_000]) is None
    assert scrape_grid([]) is None


@pytest.mark.parametrize(("ready_ms", "counted_ms"), [
    (105_500, 122_192),  # 107.2 stores the first reading, 122.2 gives the first rate
    (107_192, 137_192),  # ready at a scrape's very moment: that scrape came before it ran
    (120_000, 137_192),
    (0, 17_192),  # before the first recorded scrape: the grid runs backwards too
])
def test_a_pod_counts_at_the_second_scrape_after_it_turned_ready(ready_ms: int,
                                                                counted_ms: int) -> None:
    assert countable_at(ready_ms, grid=GRID) == counted_ms


async def test_each_pod_is_marked_once_when_due_and_a_gone_pod_is_skipped() -> None:
    def answer(call: Call) -> object:
        return ApiError(code=404, reason="NotFound", message="gone") if "gone" in call.path \
            else {}

    kube = FakeKube(answer=answer)
    clock = ReplayClock(scale=TimeScale(1.0))
    marker = CountableMarker(kube=kube, clock=clock)
    clock.start()
    started = time.monotonic()
    marker.ready(namespace="ns", name="web-a", grid=(0, 100))  # due at 200 ms
    marker.ready(namespace="ns", name="web-a", grid=(0, 100))  # the same pod again: nothing
    marker.ready(namespace="ns", name="gone", grid=(0, 100))
    marker.ready(namespace="ns", name="web-b", grid=None)  # no grid: at once
    running = asyncio.create_task(marker.run())
    try:
        async with asyncio.timeout(5):
            while len(kube.made("PATCH")) < 3:  # noqa: ASYNC110  # the fake's own record
                await asyncio.sleep(0.01)
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
    assert time.monotonic() - started >= 0.2  # not before the source's second scrape
    patched = [call.path.rsplit("/", 1)[-1] for call in kube.made("PATCH")]
    assert patched == ["web-a", "gone", "web-b"]
    assert kube.made("PATCH")[0].body == {"metadata": {"annotations": {USAGE_COUNTABLE: "true"}}}
    assert marker.marked == 2
