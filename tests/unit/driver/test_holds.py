from __future__ import annotations

import asyncio

import pytest

from simkube.core.simtime import TimeScale
from simkube.driver.clock import ReplayClock
from simkube.driver.holds import Holds

pytestmark = pytest.mark.unit


class Wall:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def holds(*, wall: float = 1000.0) -> tuple[Holds, ReplayClock, list[int], Wall]:
    clock = ReplayClock(scale=TimeScale(speed=10.0))
    clock.start()
    changes: list[int] = []
    unix = Wall(wall)
    return Holds(clock=clock, simulation="sim", changed=lambda: changes.append(1),
                 wall=unix), clock, changes, unix


async def test_a_brief_hold_nobody_takes_over_ends_by_itself() -> None:
    own, clock, changes, _ = holds()
    own.hold_briefly(expires_after_s=0.02, bound_s=0.5)
    assert clock.held
    assert own.since_unix == 1000.0
    await asyncio.sleep(0.05)
    assert not clock.held
    assert own.since_unix == 0.0
    assert (own.own_holds, own.own_expired, len(changes)) == (1, 1, 2)


async def test_a_brief_hold_never_cuts_sk_ctrls_hold_short() -> None:
    own, clock, _, _ = holds()
    own.hold(expires_after_s=0.2)
    own.hold_briefly(expires_after_s=0.01, bound_s=0.5)
    await asyncio.sleep(0.04)
    assert clock.held
    assert own.own_holds == 0  # sk-ctrl's hold was on: nothing of the driver's own began
    own.release()  # the brief deadline has passed: the release ends the hold
    assert not clock.held


async def test_sk_ctrl_takes_a_brief_hold_over_from_its_start() -> None:
    own, clock, _, _ = holds(wall=500.0)
    own.hold_briefly(expires_after_s=0.02, bound_s=0.5)
    own.hold(expires_after_s=0.2)  # found the driver's hold on: it keeps its start
    assert own.since_unix == 500.0
    await asyncio.sleep(0.05)
    assert clock.held  # the brief expiry was replaced by sk-ctrl's
    own.release()
    assert (clock.held, own.since_unix, own.own_expired) == (False, 0.0, 0)


async def test_a_release_leaves_a_brief_hold_still_due_on_as_the_driver_s_own() -> None:
    own, clock, changes, unix = holds(wall=700.0)
    own.hold(expires_after_s=5.0)
    own.hold_briefly(expires_after_s=0.05, bound_s=0.5)  # new pod work in sk-ctrl's hold
    unix.now = 700.3
    own.release()  # sk-ctrl's wait was for something earlier
    assert clock.held
    assert own.since_unix == 700.3  # a new stretch: sk-ctrl published its own up to here
    assert own.own_holds == 1
    await asyncio.sleep(0.08)
    assert not clock.held
    assert own.own_expired == 1
    assert len(changes) == 3  # held, new stretch, ended


async def test_brief_holds_chain_only_within_their_bound() -> None:
    own, clock, _, _ = holds()
    own.hold_briefly(expires_after_s=0.2, bound_s=0.1)  # 200 ms asked, 100 ms given
    await asyncio.sleep(0.05)
    own.hold_briefly(expires_after_s=0.2, bound_s=0.1)  # work while it is on: no further
    await asyncio.sleep(0.12)
    assert not clock.held  # at 170 ms: ended at its bound, not at 250 ms
    assert (own.own_holds, own.own_expired) == (1, 1)


async def test_the_end_ends_every_hold() -> None:
    own, clock, _, _ = holds()
    own.hold(expires_after_s=5.0)
    own.hold_briefly(expires_after_s=5.0, bound_s=5.0)
    own.end()
    assert not clock.held
    assert own.since_unix == 0.0
