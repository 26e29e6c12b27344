from __future__ import annotations

import asyncio

import pytest

from simkube.core.simtime import TimeScale
from simkube.driver.clock import ReplayClock
from simkube.driver.holds import Holds

pytestmark = pytest.mark.unit


def holds(*, wall: float = 1000.0) -> tuple[Holds, ReplayClock, list[int]]:
    clock = ReplayClock(scale=TimeScale(speed=10.0))
    clock.start()
    changes: list[int] = []
    return Holds(clock=clock, simulation="sim", changed=lambda: changes.append(1),
                 wall=lambda: wall), clock, changes


async def test_a_brief_hold_nobody_takes_over_ends_by_itself() -> None:
    own, clock, changes = holds()
    own.hold_briefly(expires_after_s=0.02)
    assert clock.held
    assert own.since_unix == 1000.0
    await asyncio.sleep(0.05)
    assert not clock.held
    assert own.since_unix == 0.0
    assert (own.own_holds, own.own_expired, len(changes)) == (1, 1, 2)


async def test_a_brief_hold_never_cuts_sk_ctrls_hold_short() -> None:
    own, clock, _ = holds()
    own.hold(expires_after_s=0.2)
    own.hold_briefly(expires_after_s=0.01)
    await asyncio.sleep(0.04)
    assert clock.held
    assert own.own_holds == 0  # sk-ctrl's hold was on: nothing of the driver's own began
    own.release()
    assert not clock.held


async def test_sk_ctrl_takes_a_brief_hold_over_from_its_start() -> None:
    own, clock, _ = holds(wall=500.0)
    own.hold_briefly(expires_after_s=0.02)
    own.hold(expires_after_s=0.2)  # found the driver's hold on: it keeps its start
    assert own.since_unix == 500.0
    await asyncio.sleep(0.05)
    assert clock.held  # the brief expiry was replaced by sk-ctrl's
    own.release()
    assert (clock.held, own.since_unix, own.own_expired) == (False, 0.0, 0)


async def test_a_brief_hold_lengthens_a_shorter_one() -> None:
    own, clock, _ = holds()
    own.hold_briefly(expires_after_s=0.02)
    await asyncio.sleep(0.01)
    own.hold_briefly(expires_after_s=0.05)  # newer work: held for it too
    await asyncio.sleep(0.03)
    assert clock.held
    await asyncio.sleep(0.05)
    assert not clock.held
    assert (own.own_holds, own.own_expired) == (1, 1)
