from __future__ import annotations

import pytest

from simkube.check.figures import Figure, Spread
from simkube.check.judging import Verdict, judge, judge_figure
from simkube.check.thresholds import Direction, Threshold, default_thresholds
from tests.unit.check.runs import sample

pytestmark = pytest.mark.unit
FIVE_PERCENT = Threshold(relative=0.05)


def _verdict(baseline: tuple[float, ...], candidate: tuple[float, ...],
             threshold: Threshold = FIVE_PERCENT) -> Verdict:
    return judge_figure(figure=Figure.NODE_HOURS, threshold=threshold,
                        baseline=Spread.of(baseline), candidate=Spread.of(candidate)).verdict


def test_the_same_runs_pass() -> None:
    outcome = judge(baseline=sample("a"), candidate=sample("b"), thresholds=default_thresholds())
    assert outcome.passed
    assert {j.verdict for j in outcome.judgements} == {Verdict.OK}


def test_a_rise_past_the_threshold_is_a_regression_with_its_change() -> None:
    outcome = judge(baseline=sample("a"), candidate=sample("b", node_hours=(9.0,),
                                                           cost_usd=(4.1,)),
                    thresholds=default_thresholds())
    (regression,) = outcome.regressions
    assert regression.figure is Figure.NODE_HOURS
    assert regression.change == 1.0
    assert regression.relative_change == 0.125
    assert regression.upper == pytest.approx(8.24)
    assert not outcome.passed


def test_the_band_is_the_baseline_range_widened_by_the_threshold() -> None:
    # Baseline 8, 10, 9: mean 9, range [8, 10]; 5 % of 9 = 0.45: the band's top is 10.45.
    judgement = judge_figure(figure=Figure.NODE_HOURS, threshold=FIVE_PERCENT,
                             baseline=Spread.of([8.0, 10.0, 9.0]),
                             candidate=Spread.of([10.4]))
    assert judgement.upper == pytest.approx(10.45)
    assert judgement.lower is None
    assert judgement.verdict is Verdict.OK
    assert _verdict((8.0, 10.0, 9.0), (10.5,)) is Verdict.REGRESSION
    # One baseline run: 10.4 is 15.6 % above 9, a regression.
    assert _verdict((9.0,), (10.4,)) is Verdict.REGRESSION
    # The candidate's repetitions are averaged: 10.0 and 10.8 make 10.4.
    assert _verdict((8.0, 10.0, 9.0), (10.0, 10.8)) is Verdict.OK


def test_directions() -> None:
    down = Threshold(relative=0.05, direction=Direction.DECREASE)
    both = Threshold(relative=0.05, direction=Direction.BOTH)
    assert _verdict((10.0,), (5.0,)) is Verdict.BETTER
    assert _verdict((10.0,), (9.8,)) is Verdict.OK
    assert _verdict((10.0,), (5.0,), down) is Verdict.REGRESSION
    assert _verdict((10.0,), (15.0,), down) is Verdict.BETTER
    assert _verdict((10.0,), (5.0,), both) is Verdict.REGRESSION
    assert _verdict((10.0,), (15.0,), both) is Verdict.REGRESSION
    assert _verdict((10.0,), (10.4,), both) is Verdict.OK
    judgement = judge_figure(figure=Figure.NODE_HOURS, threshold=both,
                             baseline=Spread.of([10.0]), candidate=Spread.of([10.0]))
    assert (judgement.lower, judgement.upper) == (9.5, 10.5)


def test_absolute_zero_fails_any_rise_and_a_floor_covers_small_values() -> None:
    never = Threshold(absolute=0.0)
    assert _verdict((0.0,), (0.0,), never) is Verdict.OK
    assert _verdict((0.0,), (1.0,), never) is Verdict.REGRESSION
    floor = Threshold(relative=0.1, absolute=1.0)
    assert _verdict((0.5,), (1.4,), floor) is Verdict.OK
    assert _verdict((0.5,), (1.6,), floor) is Verdict.REGRESSION


def test_missing_and_ignored_figures_are_not_judged() -> None:
    assert _verdict((), (3.0,)) is Verdict.MISSING
    assert _verdict((3.0,), ()) is Verdict.MISSING
    assert _verdict((1.0,), (30.0,), Threshold(relative=0.1, ignore=True)) is Verdict.IGNORED
    judgement = judge_figure(figure=Figure.NODE_HOURS, threshold=FIVE_PERCENT, baseline=None,
                             candidate=Spread.of([1.0]))
    assert judgement.change is None
    assert judgement.relative_change is None
