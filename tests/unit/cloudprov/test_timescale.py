from __future__ import annotations

import pytest

from simkube.cloudprov.timescale import RunTimescale

pytestmark = pytest.mark.unit


def draws(timescale: RunTimescale, names: list[str]) -> list[float]:
    return [timescale.share(group="small", instance=name) for name in names]


def test_draws_follow_arrival_order_not_names() -> None:
    first = draws(RunTimescale(seed=7), ["small-x1", "small-x2", "small-x3"])
    second = draws(RunTimescale(seed=7), ["small-q9", "small-a0", "small-zz"])
    assert first == second
    assert len(set(first)) == 3
    assert all(0.0 <= share < 1.0 for share in first)


def test_an_instance_keeps_its_draw_and_seeds_differ() -> None:
    timescale = RunTimescale(seed=7)
    once = timescale.share(group="small", instance="a")
    timescale.share(group="small", instance="b")
    assert timescale.share(group="small", instance="a") == once
    assert draws(RunTimescale(seed=8), ["a"]) != [once]
    assert draws(RunTimescale(seed=7), ["a"]) == [once]


def test_a_new_run_starts_the_draws_over_and_scales_time() -> None:
    timescale = RunTimescale(seed=7)
    before = draws(timescale, ["a", "b"])
    assert timescale.update(speed=10.0, seed=7, run="sim-r2")
    assert not timescale.update(speed=10.0, seed=7, run="sim-r2")
    assert draws(timescale, ["c", "d"]) == before
    assert timescale.to_wall(60.0) == 6.0


def test_groups_draw_independently() -> None:
    timescale = RunTimescale(seed=1)
    small = timescale.share(group="small", instance="a")
    large = timescale.share(group="large", instance="b")
    assert small != large
    assert RunTimescale(seed=1).share(group="large", instance="z") == large
