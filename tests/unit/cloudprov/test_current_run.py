from __future__ import annotations

import time

import pytest

from simkube.cloudprov.current_run import CurrentRun
from simkube.core.simtime import TimeScale
from simkube.simulation.run_configmap import RunTiming

pytestmark = pytest.mark.unit


def seeded(seed: int) -> CurrentRun:
    return CurrentRun(timing=RunTiming(seed=seed))


def draws(current: CurrentRun, names: list[str]) -> list[float]:
    return [current.share(group="small", instance=name) for name in names]


def test_draws_follow_arrival_order_not_names() -> None:
    first = draws(seeded(7), ["small-x1", "small-x2", "small-x3"])
    second = draws(seeded(7), ["small-q9", "small-a0", "small-zz"])
    assert first == second
    assert len(set(first)) == 3
    assert all(0.0 <= share < 1.0 for share in first)


def test_an_instance_keeps_its_draw_and_seeds_differ() -> None:
    current = seeded(7)
    once = current.share(group="small", instance="a")
    current.share(group="small", instance="b")
    assert current.share(group="small", instance="a") == once
    assert draws(seeded(8), ["a"]) != [once]
    assert draws(seeded(7), ["a"]) == [once]


def test_a_new_run_starts_the_draws_over_and_scales_time() -> None:
    current = seeded(7)
    before = draws(current, ["a", "b"])
    assert current.update(timing=RunTiming(scale=TimeScale(10.0), seed=7, run="sim-r2"))
    assert not current.update(timing=RunTiming(scale=TimeScale(10.0), seed=7, run="sim-r2"))
    assert draws(current, ["c", "d"]) == before
    assert current.to_wall(60.0) == 6.0


def test_groups_draw_independently() -> None:
    current = seeded(1)
    small = current.share(group="small", instance="a")
    large = current.share(group="large", instance="b")
    assert small != large
    assert seeded(1).share(group="large", instance="z") == large


def test_held_time_counts_from_the_request_of_an_instance() -> None:
    current = CurrentRun(timing=RunTiming(run="r1"))
    current.update(timing=RunTiming(run="r1"), holds=((100.0, 100.4), (105.0, 106.5)))
    assert current.held_since(99.0) == pytest.approx(1.9)  # both holds after the request
    # Requested in the middle of the first hold (CA plans inside the loop a hold waits
    # for): only the part after the request counts.
    assert current.held_since(100.3) == pytest.approx(1.6)
    assert current.held_since(107.0) == 0.0
    current.update(timing=RunTiming(run="r2"))  # a new run starts over
    assert current.holds == ()
    assert current.held_since(0.0) == 0.0


def test_the_hold_in_progress_counts_up_to_now_and_listeners_hear_of_changes() -> None:
    current = CurrentRun(timing=RunTiming(run="r1"))
    heard: list[bool] = []
    current.listeners.append(lambda: heard.append(current.holding))
    soon = time.time() + 60  # the hold's expiry
    current.update(timing=RunTiming(run="r1"), holds=((100.0, 100.5),), holding=(104.0, soon))
    assert current.holding
    assert current.held_since(99.0, now=105.0) == pytest.approx(1.5)
    assert current.held_since(104.5, now=105.0) == pytest.approx(0.5)
    current.update(timing=RunTiming(run="r1"), holds=((100.0, 100.5), (104.0, 105.2)))
    assert not current.holding
    assert current.held_since(99.0, now=200.0) == pytest.approx(1.7)
    current.update(timing=RunTiming(run="r1"), holds=((100.0, 100.5), (104.0, 105.2)))
    assert heard == [True, False]  # an unchanged ConfigMap tells nobody


def test_a_malformed_configmap_keeps_the_last_run_and_an_absent_one_means_none() -> None:
    current = CurrentRun()
    current._take({"data": {"speed": "10", "seed": "3", "run": "r1",
                            "holding": f"1000-{round((time.time() + 60) * 1000)}"}})
    assert (current.scale.speed, current.timing.seed, current.holding) == (10.0, 3, True)
    current._take({"data": {"speed": "10", "seed": "3", "run": "r1", "holding": "soon"}})
    assert current.holding
    assert current.timing.run == "r1"
    current._take(None)
    assert current.timing.run == ""
    assert not current.holding


def test_a_hold_whose_end_never_came_ends_at_its_expiry() -> None:
    """sk-ctrl died mid-hold: sk-driver ended the hold at the expiry, and so does this view."""
    current = CurrentRun(timing=RunTiming(run="r1"))
    current.update(timing=RunTiming(run="r1"), holding=(100.0, 104.0))
    assert not current.holding  # 104 s after the epoch is long past
    assert current.held_since(99.0, now=200.0) == pytest.approx(4.0)


AT_10 = RunTiming(scale=TimeScale(10.0), run="r1")  # held, the clock keeps a tenth of its pace


def test_holds_slip_the_schedule_by_the_pace_they_lost() -> None:
    current = CurrentRun(timing=AT_10)
    current.update(timing=AT_10, holds=((100.0, 101.0), (105.0, 107.0)))
    assert current.slip_since(99.0) == pytest.approx(2.7)  # 3 s held, 0.9 of each lost
    assert current.due_at(since=99.0, wall=4.0, now=108.0) == pytest.approx(105.7)
    at_1 = RunTiming(run="r2")
    current.update(timing=at_1, holds=((100.0, 101.0),))
    assert current.slip_since(99.0) == 0.0  # at real time a hold changes nothing


def test_a_deadline_in_a_hold_passes_at_the_held_pace() -> None:
    current = CurrentRun(timing=AT_10)
    current.update(timing=AT_10, holding=(100.0, 200.0))
    # 0.5 s of the run's pace was left when the hold began: 5 wall s at its tenth.
    assert current.due_at(since=99.0, wall=1.5, now=101.0) == pytest.approx(105.0)
    # Requested mid-hold, it counts from the request.
    assert current.due_at(since=102.0, wall=0.2, now=102.0) == pytest.approx(104.0)
    # Overdue when the hold began: due at once, not at the hold's end.
    assert current.due_at(since=98.0, wall=1.0, now=101.0) == pytest.approx(99.0)
    # Past the hold's expiry, the rest goes at the run's pace again.
    current.update(timing=AT_10, holding=(100.0, 101.0))
    assert current.due_at(since=99.0, wall=1.5, now=100.5) == pytest.approx(101.0 + 0.4)
    # Once expired (sk-ctrl died mid-hold), the whole hold has slipped.
    assert current.due_at(since=99.0, wall=1.5, now=102.0) == pytest.approx(100.5 + 0.9)
