from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from simkube.core.simtime import TimeScale
from simkube.driver.clock import ReplayClock

pytestmark = pytest.mark.unit


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_due_times_scale_with_speed() -> None:
    now = FakeTime()
    clock = ReplayClock(scale=TimeScale(10.0), now=now)
    clock.start()
    assert clock.due(0) == 100.0
    assert clock.due(5_000) == pytest.approx(100.5)
    now.now = 100.25
    assert clock.trace_offset_ms() == pytest.approx(2_500)


def test_pause_shifts_the_remaining_schedule() -> None:
    now = FakeTime()
    clock = ReplayClock(scale=TimeScale(1.0), now=now)
    clock.start()
    now.now = 101.0
    assert clock.pause()
    assert not clock.pause()  # already paused
    now.now = 104.0
    assert clock.trace_offset_ms() == pytest.approx(1_000)  # trace time stood still
    assert clock.paused_seconds() == pytest.approx(3.0)
    assert clock.resume()
    assert not clock.resume()
    assert clock.due(2_000) == pytest.approx(105.0)
    assert clock.t0 == 100.0


def test_a_hold_runs_the_clock_at_real_time_and_is_counted_apart_from_pauses() -> None:
    now = FakeTime()
    clock = ReplayClock(scale=TimeScale(2.0), now=now)
    clock.start()
    now.now = 101.0
    assert clock.hold()
    assert not clock.hold()
    now.now = 102.0  # held alone: 1 s at real time, not 2 s
    assert clock.trace_offset_ms() == pytest.approx(3_000)
    assert clock.pause()
    now.now = 104.0  # held and paused: the pause's 2 s, trace time stands
    assert clock.trace_offset_ms() == pytest.approx(3_000)
    assert clock.release()  # the hold ends; the pause stays
    assert clock.paused
    assert not clock.held
    now.now = 105.0  # paused alone: 1 s more
    assert clock.resume()
    now.now = 106.0  # running: 1 s = 2 s of trace
    assert clock.held_seconds() == pytest.approx(1.0)
    assert clock.paused_seconds() == pytest.approx(3.0)
    assert clock.trace_offset_ms() == pytest.approx(5_000)
    # the schedule shifted by the pause and by half the hold (the half trace time stood)
    assert clock.due(5_000) == pytest.approx(106.0)


def test_a_hold_at_real_time_changes_nothing() -> None:
    now = FakeTime()
    clock = ReplayClock(scale=TimeScale(1.0), now=now)
    clock.start()
    clock.hold()
    now.now = 103.0
    assert clock.trace_offset_ms() == pytest.approx(3_000)
    clock.release()
    assert clock.due(4_000) == pytest.approx(104.0)
    assert clock.held_seconds() == pytest.approx(3.0)


class TickingTime(FakeTime):
    """Moves on a little at every read, by uneven steps, as the real clock does between two
    calls on a busy machine."""

    def __init__(self, *ticks: float) -> None:
        super().__init__()
        self._ticks = itertools.cycle(ticks)

    def __call__(self) -> float:
        self.now += next(self._ticks)
        return self.now


def test_a_stopped_clock_reads_exactly_the_same_however_long_it_stands() -> None:
    # Every read of the monotonic clock is a little later than the one before; a stopped
    # clock's position must not depend on how far apart two reads inside one call fell
    # (a paused run once reported 13.148 s, then 13.149 s).
    now = TickingTime(0.00001, 0.0003, 0.00007)
    clock = ReplayClock(scale=TimeScale(10.0), now=now)
    clock.start()
    now.now += 1.3148999
    assert clock.pause()
    first = clock.trace_offset_ms()
    for step in (0.1, 0.7, 1.9, 3.3, 17.0001):
        now.now += step
        assert clock.trace_offset_ms() == first
    assert clock.hold()  # both on: still the same instant
    now.now += 2.2
    assert clock.trace_offset_ms() == first


def test_unstarted_clock_refuses_t0() -> None:
    clock = ReplayClock(scale=TimeScale(1.0))
    assert not clock.started
    assert clock.trace_offset_ms() == 0.0
    with pytest.raises(RuntimeError, match="not started"):
        _ = clock.t0


async def test_wait_until_is_punctual() -> None:
    clock = ReplayClock(scale=TimeScale(100.0))
    clock.start()
    due = await clock.wait_until(5_000)  # 50 ms of wall time
    late = time.monotonic() - due
    assert due == pytest.approx(clock.t0 + 0.05)
    assert 0 <= late < 0.02


async def test_a_wait_begun_before_the_start_waits_for_it() -> None:
    """The usage player waits for its first sample before the replay starts the clock."""
    clock = ReplayClock(scale=TimeScale(100.0))
    waiter = asyncio.create_task(clock.wait_until(1_000))
    await asyncio.sleep(0.05)
    assert not waiter.done()
    clock.start()
    due = await asyncio.wait_for(waiter, timeout=1)
    assert due == pytest.approx(clock.t0 + 0.01)


async def test_a_paused_clock_wakes_no_waiter_until_it_resumes() -> None:
    clock = ReplayClock(scale=TimeScale(1.0))
    clock.start()
    clock.pause()
    waiter = asyncio.create_task(clock.wait_until(10))
    await asyncio.sleep(0.1)
    assert not waiter.done()
    clock.resume()
    due = await asyncio.wait_for(waiter, timeout=1)
    assert due >= clock.t0 + 0.1  # shifted by the pause
    assert time.monotonic() >= due


async def test_a_held_clock_wakes_waiters_at_real_time() -> None:
    """At speed 100 an event 150 ms of trace ahead is due in 1.5 ms; held, in 150 ms."""
    clock = ReplayClock(scale=TimeScale(100.0))
    clock.start()
    clock.hold()
    began = time.monotonic()
    waiter = asyncio.create_task(clock.wait_until(150))
    await asyncio.sleep(0.05)
    assert not waiter.done()  # would have fired at 1.5 ms unheld
    due = await asyncio.wait_for(waiter, timeout=1)
    assert time.monotonic() - began >= 0.14
    assert clock.trace_offset_ms() >= 150
    assert time.monotonic() >= due - 0.001


async def test_a_release_brings_a_held_waiter_forward() -> None:
    clock = ReplayClock(scale=TimeScale(100.0))
    clock.start()
    clock.hold()
    waiter = asyncio.create_task(clock.wait_until(2_000))  # 2 s held, 20 ms running
    await asyncio.sleep(0.05)
    assert not waiter.done()
    clock.release()
    await asyncio.wait_for(waiter, timeout=0.5)


async def test_pause_interrupts_a_sleep() -> None:
    clock = ReplayClock(scale=TimeScale(1.0))
    clock.start()
    waiter = asyncio.create_task(clock.wait_until(200))
    await asyncio.sleep(0.05)
    clock.pause()
    await asyncio.sleep(0.3)
    assert not waiter.done()  # would have fired at 0.2 s without the pause
    clock.resume()
    await asyncio.wait_for(waiter, timeout=1)
