from __future__ import annotations

import time

import pytest

from simkube.cloudprov.age_wait import REQUEST_TTL_S, AgeWaits
from simkube.cloudprov.current_run import CurrentRun
from simkube.core.simtime import TimeScale
from simkube.simulation.run_configmap import RunTiming

pytestmark = pytest.mark.unit
RUN = RunTiming(scale=TimeScale(20.0), seed=1, run="sim-r1", age_wait_s=10.0)


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def setup(*, timing: RunTiming = RUN, now: float = 1000.0) -> tuple[CurrentRun, AgeWaits, Clock]:
    current = CurrentRun(timing=timing)
    clock = Clock(now)
    return current, AgeWaits(current=current, clock=clock), clock


def test_instances_asked_for_during_a_hold_owe_the_wait_and_others_do_not() -> None:
    current, waits, clock = setup()
    current.update(timing=RUN, holds=((999.9, 1000.2),))
    waits.requested("large", 2)  # at 1000.0, inside the hold
    clock.now = 1005.0
    waits.requested("large", 1)  # after it: CA saw pods production would see as old
    got = [waits.wait_for(group="large", instance=name) for name in ("a", "b", "c")]
    assert got == [10.0, 10.0, 0.0]
    # an instance keeps its request: asking again changes nothing
    assert waits.wait_for(group="large", instance="a") == 10.0
    assert waits.wait_for(group="large", instance="c") == 0.0


def test_a_hold_heard_of_late_still_counts_and_once_owed_stays_owed() -> None:
    current, waits, _clock = setup(now=time.time())
    waits.requested("small", 1)
    assert waits.wait_for(group="small", instance="x") == 0.0  # no hold known yet
    at = time.time()
    current.update(timing=RUN, holding=(at - 1.0, at + 5.0))  # its start arrives now
    assert waits.wait_for(group="small", instance="x") == 10.0
    current.update(timing=RUN, holds=())  # trimmed from the ConfigMap later on
    assert waits.wait_for(group="small", instance="x") == 10.0


def test_groups_queue_apart_and_unclaimed_requests_expire() -> None:
    current, waits, clock = setup()
    current.update(timing=RUN, holds=((990.0, 1001.0),))
    waits.requested("small", 1)
    assert waits.wait_for(group="large", instance="l1") == 0.0  # nothing asked of large
    clock.now += REQUEST_TTL_S + 1  # the request's pod never came (a failed scale-up)
    assert waits.wait_for(group="small", instance="s1") == 0.0


def test_nothing_is_owed_when_the_run_keeps_the_wait_or_a_new_run_starts() -> None:
    current, waits, _clock = setup(timing=RunTiming(scale=TimeScale(1.0), run="truth"))
    current.update(timing=current.timing, holds=((999.0, 1001.0),))
    waits.requested("small", 1)
    assert waits.wait_for(group="small", instance="a") == 0.0  # age_wait_s 0: CA waits itself
    current, waits, _clock = setup()
    current.update(timing=RUN, holds=((999.0, 1001.0),))
    waits.requested("small", 1)
    current.update(timing=RunTiming(scale=TimeScale(20.0), run="sim-r2", age_wait_s=10.0),
                   holds=((999.0, 1001.0),))
    assert waits.wait_for(group="small", instance="a") == 0.0  # the old run's request
