from __future__ import annotations

import math

import pytest

from simkube.sweep.frontier import Candidate, dominates, frontier

pytestmark = pytest.mark.unit


def _c(key: int, x: float | None, y: float | None) -> Candidate:
    return Candidate(key=key, x=x, y=y)


def test_dominance_needs_no_worse_on_both_and_better_on_one() -> None:
    assert dominates((1, 1), (2, 2))
    assert dominates((1, 2), (2, 2))
    assert not dominates((2, 2), (2, 2))
    assert not dominates((1, 3), (2, 2))


def test_a_trade_off_keeps_both_ends_and_drops_the_beaten() -> None:
    result = frontier([_c(0, 1, 10), _c(1, 5, 5), _c(2, 10, 1), _c(3, 6, 6), _c(4, 10, 10)])
    assert result.front == (0, 1, 2)
    assert result.dominated == (3, 4)
    assert result.excluded == ()
    assert result.notes == ()


def test_a_single_point_is_the_frontier() -> None:
    assert frontier([_c(7, 3, 4)]).front == (7,)


def test_no_points_no_frontier() -> None:
    result = frontier([])
    assert (result.front, result.dominated, result.excluded) == ((), (), ())


def test_ties_are_both_on_the_frontier() -> None:
    result = frontier([_c(0, 2, 2), _c(1, 2, 2), _c(2, 3, 3)])
    assert result.front == (0, 1)
    assert result.dominated == (2,)


def test_a_tie_on_one_figure_is_broken_by_the_other() -> None:
    result = frontier([_c(0, 2, 5), _c(1, 2, 3), _c(2, 1, 3)])
    assert result.front == (2,)
    assert result.dominated == (0, 1)


def test_all_dominated_except_one() -> None:
    result = frontier([_c(i, 2 + i, 3 + i) for i in range(5)] + [_c(9, 1, 1)])
    assert result.front == (9,)
    assert result.dominated == (0, 1, 2, 3, 4)


def test_the_frontier_is_ordered_by_the_first_figure() -> None:
    assert frontier([_c(0, 9, 1), _c(1, 1, 9), _c(2, 5, 5)]).front == (1, 2, 0)


def test_missing_and_not_finite_figures_are_left_out_with_a_note() -> None:
    result = frontier([_c(0, 1, None), _c(1, math.nan, 1), _c(2, 2, math.inf), _c(3, 5, 5),
                       _c(4, None, None)], x_name="cost_usd", y_name="pending_p90_s")
    assert result.front == (3,)
    assert result.dominated == ()
    assert result.excluded == (0, 1, 2, 4)
    assert result.notes == (
        "point 0 left out of the cost_usd / pending_p90_s frontier: no pending_p90_s",
        "point 1 left out of the cost_usd / pending_p90_s frontier: no cost_usd",
        "point 2 left out of the cost_usd / pending_p90_s frontier: no pending_p90_s",
        "point 4 left out of the cost_usd / pending_p90_s frontier: no cost_usd and no "
        "pending_p90_s")


def test_an_excluded_point_does_not_dominate_anyone() -> None:
    # (0, None) would beat everything on x if it were compared as 0 or skipped wrongly.
    assert frontier([_c(0, 0, None), _c(1, 3, 3), _c(2, 4, 4)]).front == (1,)
