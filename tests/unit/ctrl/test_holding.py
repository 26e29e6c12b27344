"""Holding a run's clock until Cluster Autoscaler has finished a loop that saw the new pod,
and every bound that keeps a slow, stuck or absent autoscaler from stalling the run."""

from __future__ import annotations

import asyncio
import time

import pytest

from simkube.core.simtime import TimeScale
from simkube.ctrl.autoscaler_loops import LoopCounts
from simkube.ctrl.holding import Holder
from simkube.simulation.trace_clock import TraceClock
from tests.unit.ctrl.fakes import PAUSED, FakeDriver, FakeLoops, progress

pytestmark = pytest.mark.unit
RUN = "shop-r1"


class Setup:
    def __init__(self, *, max_hold_s: float = 1.0, max_share: float = 0.5,
                 loop_wait_s: float = 0.0, share_allowance_s: float = 0.0) -> None:
        self.driver = FakeDriver()
        self.driver.known[RUN] = progress(RUN, trace_ms=4_000)
        self.loops = FakeLoops()
        self.clock = TraceClock(scale=TimeScale(20))
        self.warnings: list[tuple[str, str]] = []
        self.published: list[tuple[float, float]] = []
        self.began: list[tuple[float, float]] = []

        async def warn(reason: str, message: str) -> None:
            self.warnings.append((reason, message))
        self.holder = Holder(driver=self.driver, run=RUN, loops=self.loops, clock=self.clock,
                             max_hold_s=max_hold_s, loop_wait_s=loop_wait_s, warn=warn,
                             on_held=self.published.append,
                             on_hold=self.began.append, poll_s=0.005, max_share=max_share,
                             share_allowance_s=share_allowance_s)

    async def trigger_and_settle(self, *, wait: float = 0.1) -> None:
        self.holder.trigger()
        await asyncio.sleep(wait)


async def running(setup: Setup) -> asyncio.Task[None]:
    task = asyncio.create_task(setup.holder.run())
    await asyncio.sleep(0)
    return task


async def test_a_hold_lasts_until_a_loop_that_started_after_the_trigger_has_finished() -> None:
    setup = Setup()
    # The loop running at the trigger (started 5, finished 4) ends: not enough; then loop 6.
    def step(loops: FakeLoops) -> None:
        if loops.reads == 3:
            loops.counts = LoopCounts(started=5, finished=5)
        if loops.reads == 6:
            assert setup.driver.known[RUN].held  # still held after loop 5 finished
            loops.counts = LoopCounts(started=6, finished=6)
    setup.loops.step = step
    task = await running(setup)
    await setup.trigger_and_settle()
    task.cancel()
    assert setup.driver.called("hold") == [RUN]
    assert setup.driver.called("release") == [RUN]
    assert not setup.driver.known[RUN].held
    assert setup.loops.reads == 6  # released at the read that saw loop 6 finish
    assert setup.holder.holds == 1
    assert setup.holder.capped == 0
    # The hold's wall-clock interval goes to sk-cloudprov, as long as the driver held.
    [(began, ended)] = setup.published
    # Its start went out as the hold began, with the driver's own expiry (max hold + 3 s).
    assert setup.began == [(began, pytest.approx(began + 4.0))]
    assert ended - began == pytest.approx(setup.holder.held_s, abs=0.05)
    assert setup.driver.expiries == ["4000ms"]  # max_hold + the driver's margin
    assert setup.warnings == []


async def test_the_trace_clock_moves_at_real_time_while_held() -> None:
    setup = Setup()
    setup.clock.report(trace_s=4.0, running=True)
    setup.loops.finish_loop_after(40)  # 40 reads 5 ms apart: held for 0.2 s
    task = asyncio.create_task(setup.holder.run())
    setup.holder.trigger()
    await asyncio.sleep(0.02)
    assert setup.driver.known[RUN].held
    before = setup.clock.now()
    await asyncio.sleep(0.05)
    moved = setup.clock.now() - before
    assert 0.04 <= moved < 0.5  # about 0.05 s of trace, where speed 20 would move 1 s
    await asyncio.sleep(0.3)
    task.cancel()
    assert not setup.driver.known[RUN].held
    before = setup.clock.now()
    await asyncio.sleep(0.05)
    assert setup.clock.now() - before >= 0.9  # at the run's speed again after the release


async def test_a_stuck_autoscaler_is_bounded_by_max_hold_and_warned_once() -> None:
    setup = Setup(max_hold_s=0.05, max_share=10)
    task = await running(setup)
    await setup.trigger_and_settle()
    await setup.trigger_and_settle()
    task.cancel()
    assert setup.holder.holds == 2
    assert setup.holder.capped == 2
    assert not setup.driver.known[RUN].held
    assert [reason for reason, _ in setup.warnings] == ["AutoscalerSlow"]


async def test_a_ca_looping_on_its_scan_is_waited_for_two_loops_within_their_bound() -> None:
    """No loopWait: loop 5 may be running at the trigger, so the hold waits for loop 6; the
    bound is max hold plus the time two scans take."""
    setup = Setup(max_hold_s=0.05, loop_wait_s=0.2, max_share=10)
    setup.loops.counts = LoopCounts(started=0, finished=4)

    def step(loops: FakeLoops) -> None:
        if loops.reads == 3:
            loops.counts = LoopCounts(started=0, finished=5)
        if loops.reads == 20:  # 5 ms a read: past max hold, within its bound
            assert setup.driver.known[RUN].held  # loop 5 may have started before the pod
            loops.counts = LoopCounts(started=0, finished=6)
    setup.loops.step = step
    task = await running(setup)
    await setup.trigger_and_settle(wait=0.4)
    task.cancel()
    assert setup.loops.reads == 20
    assert setup.holder.capped == 0
    assert setup.driver.expiries == ["3250ms"]  # max hold + two scans + the driver's margin
    assert setup.warnings == []


async def test_holds_stop_once_they_took_their_share_of_the_run() -> None:
    setup = Setup(max_hold_s=0.05, max_share=0.1)
    task = await running(setup)
    for _ in range(4):
        await setup.trigger_and_settle(wait=0.06)
    task.cancel()
    assert setup.holder.holds < 4  # later triggers found the share used up
    assert setup.holder.skipped == 4 - setup.holder.holds


async def test_the_first_holds_of_a_run_come_out_of_the_allowance() -> None:
    setup = Setup(max_hold_s=0.05, max_share=0.1, share_allowance_s=5.0)
    task = await running(setup)
    for _ in range(4):
        await setup.trigger_and_settle(wait=0.06)
    task.cancel()
    assert (setup.holder.holds, setup.holder.skipped) == (4, 0)


async def test_unreadable_metrics_mean_no_hold_and_one_warning() -> None:
    setup = Setup()
    setup.loops.down = True
    task = await running(setup)
    await setup.trigger_and_settle(wait=0.02)
    await setup.trigger_and_settle(wait=0.02)
    task.cancel()
    assert setup.driver.called("hold") == []
    assert [reason for reason, _ in setup.warnings] == ["AutoscalerMetricsUnavailable"]


async def test_a_trigger_during_a_hold_extends_it_to_a_later_loop() -> None:
    setup = Setup()
    def step(loops: FakeLoops) -> None:
        if loops.reads == 2:  # a loop started after the first trigger; a second pod arrives
            loops.counts = LoopCounts(started=6, finished=5)
            setup.holder.trigger()
        if loops.reads == 5:
            loops.counts = LoopCounts(started=7, finished=6)  # saw the first pod only
        if loops.reads == 8:
            loops.counts = LoopCounts(started=7, finished=7)  # saw the second
    setup.loops.step = step
    task = await running(setup)
    await setup.trigger_and_settle()
    task.cancel()
    assert setup.holder.holds == 1
    assert setup.loops.reads == 8


async def test_an_autoscaler_restart_ends_the_hold() -> None:
    setup = Setup()
    def step(loops: FakeLoops) -> None:
        if loops.reads == 3:
            loops.counts = LoopCounts(started=0, finished=0)  # counters reset
    setup.loops.step = step
    task = await running(setup)
    await setup.trigger_and_settle()
    task.cancel()
    assert setup.holder.capped == 0
    assert not setup.driver.known[RUN].held


async def test_a_paused_run_is_held_and_stays_paused_after_the_release() -> None:
    setup = Setup()
    setup.driver.known[RUN] = progress(RUN, PAUSED)
    setup.loops.finish_loop_after(2)
    task = await running(setup)
    await setup.trigger_and_settle()
    task.cancel()
    assert setup.driver.known[RUN].state == PAUSED
    assert setup.driver.called("release") == [RUN]
    assert setup.driver.called("resume") == []


async def test_an_ended_run_is_not_held() -> None:
    setup = Setup()
    setup.driver.known[RUN] = progress(RUN, 4)  # SUCCEEDED
    task = await running(setup)
    await setup.trigger_and_settle(wait=0.02)
    task.cancel()
    assert setup.holder.holds == 0
    assert setup.driver.called("release") == []


async def test_a_new_pod_holds_until_the_scheduler_rules_then_until_cas_loop() -> None:
    setup = Setup()
    waiting = {"pod"}
    setup.holder.awaiting = lambda: bool(waiting)
    task = await running(setup)
    setup.holder.expect()
    await asyncio.sleep(0.03)
    assert setup.driver.known[RUN].held  # the scheduler has not ruled yet
    assert setup.loops.reads == 0  # no loop is wanted for a pod not yet unschedulable
    setup.loops.finish_loop_after(3)
    waiting.clear()
    setup.holder.trigger()  # the scheduler ruled: unschedulable
    await asyncio.sleep(0.2)
    task.cancel()
    assert setup.holder.holds == 1
    assert not setup.driver.known[RUN].held
    assert setup.loops.reads == 3  # released once a loop that saw the pod finished


async def test_a_pod_judged_before_the_hold_began_holds_nothing() -> None:
    setup = Setup()
    task = await running(setup)
    setup.holder.expect()  # awaiting() is already false: bound at once
    await asyncio.sleep(0.03)
    task.cancel()
    assert setup.driver.called("hold") == []


async def test_a_hold_taken_over_from_the_driver_is_published_from_the_driver_s_start() -> None:
    setup = Setup()
    own_start = time.time() - 0.2  # sk-driver held by itself as it applied a scale-up
    setup.driver.known[RUN].held = True
    setup.driver.known[RUN].held_since_unix_ms = round(own_start * 1000)
    setup.loops.finish_loop_after(3)
    task = await running(setup)
    await setup.trigger_and_settle()
    task.cancel()
    [(began, _ended)] = setup.published
    assert began == pytest.approx(own_start, abs=0.002)
    assert setup.began[0][0] == began
