from __future__ import annotations

import itertools

import pytest

from simkube.core.errors import ConfigError
from simkube.sweep.sampling import Method, Sampling, choose, parse_sampling

pytestmark = pytest.mark.unit


def test_the_grid_is_every_combination_first_axis_slowest() -> None:
    assert choose([2, 3], Sampling()) == list(itertools.product(range(2), range(3)))


def test_random_draws_the_budget_of_distinct_points_in_grid_order() -> None:
    sampling = Sampling(method=Method.RANDOM, points=5, seed=7)
    chosen = choose([4, 5, 3], sampling)
    assert len(chosen) == len(set(chosen)) == 5
    grid = choose([4, 5, 3], Sampling())
    assert all(point in grid for point in chosen)
    assert chosen == sorted(chosen, key=grid.index)


def test_random_is_seeded_the_same_seed_the_same_points() -> None:
    def drawn(seed: int) -> list[tuple[int, ...]]:
        return choose([10, 10], Sampling(method=Method.RANDOM, points=4, seed=seed))

    assert drawn(3) == drawn(3)
    assert drawn(3) != drawn(4)


def test_a_budget_of_the_whole_grid_is_the_grid() -> None:
    assert choose([2, 2], Sampling(method=Method.RANDOM, points=4, seed=1)) == choose(
        [2, 2], Sampling())


def test_a_budget_above_the_grid_is_refused() -> None:
    with pytest.raises(ConfigError) as caught:
        choose([2, 2], Sampling(method=Method.RANDOM, points=5, seed=1))
    assert caught.value.message == "sampling.points 5 is more than the 4 points of the grid"
    assert caught.value.hint == "use sampling: grid to run them all"


def test_parsing() -> None:
    assert parse_sampling(None) == Sampling()
    assert parse_sampling("grid") == Sampling()
    assert parse_sampling({"method": "random", "points": 3}) == Sampling(
        method=Method.RANDOM, points=3, seed=1)
    with pytest.raises(ConfigError, match="unknown field"):
        parse_sampling({"method": "random", "points": 3, "budget": 2})
    with pytest.raises(ConfigError, match=r"sampling.seed -1 must"):
        parse_sampling({"method": "random", "points": 3, "seed": -1})
