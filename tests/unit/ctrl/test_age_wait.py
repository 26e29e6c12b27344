"""Holding through Cluster Autoscaler's pod-age wait: released just after the loop whose
successor sees the pods old."""

from __future__ import annotations

import pytest

from simkube.ctrl.age_wait import wait_out_age
from simkube.ctrl.autoscaler_loops import LoopCounts
from tests.unit.ctrl.fakes import FakeLoops

pytestmark = pytest.mark.unit


class Clock:
    """Wall and monotonic time in one, moved by the loops' fake (a read every 0.1 s)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def waited(*, young_until: float | None, scan_s: float, finishes_at: list[float],
                 deadline_s: float = 5.0) -> tuple[bool, float, FakeLoops]:
    """Run the wait with loops finishing at the wall times ``finishes_at``; the outcome and
    the wall time of the release."""
    clock = Clock()
    loops = FakeLoops(started=5, finished=5)

    def step(fake: FakeLoops) -> None:
        clock.now = round(clock.now + 0.1, 3) if fake.reads > 1 else clock.now
        done = 5 + sum(1 for at in finishes_at if at <= clock.now)
        fake.counts = LoopCounts(started=done + 1, finished=done)
    loops.step = step
    released = await wait_out_age(young_until=lambda: young_until, loops=loops, scan_s=scan_s,
                                  wall=clock, monotonic=clock, deadline=clock.now + deadline_s,
                                  poll_s=0)
    return released, clock.now, loops


async def test_pods_already_old_or_gone_release_at_once() -> None:
    assert (await waited(young_until=None, scan_s=0.5, finishes_at=[]))[:2] == (True, 1000.0)
    assert (await waited(young_until=999.0, scan_s=0.5, finishes_at=[]))[:2] == (True, 1000.0)


async def test_the_release_follows_the_loop_whose_successor_sees_the_pods_old() -> None:
    # Old from 1001.7; scans of 0.5 s: the loop ending at 1001.2 has a successor at 1001.7.
    released, at, _ = await waited(young_until=1001.7, scan_s=0.5,
                                   finishes_at=[1000.6, 1001.2, 1001.8])
    assert released
    assert at == pytest.approx(1001.2)


async def test_the_deadline_bounds_the_hold() -> None:
    released, at, _ = await waited(young_until=1010.0, scan_s=0.5, finishes_at=[],
                                   deadline_s=1.0)
    assert not released
    assert at == pytest.approx(1001.0)


async def test_unreadable_or_restarted_loops_end_the_wait() -> None:
    loops = FakeLoops()
    loops.down = True
    assert not await wait_out_age(young_until=lambda: 2000.0, loops=loops, scan_s=0.5,
                                  wall=lambda: 1000.0, monotonic=lambda: 0.0, deadline=5.0,
                                  poll_s=0)
    restarted = FakeLoops(started=5, finished=5)

    def step(fake: FakeLoops) -> None:
        if fake.reads > 1:
            fake.counts = LoopCounts(started=0, finished=0)
    restarted.step = step
    assert await wait_out_age(young_until=lambda: 2000.0, loops=restarted, scan_s=0.5,
                              wall=lambda: 1000.0, monotonic=lambda: 0.0, deadline=5.0,
                              poll_s=0)
