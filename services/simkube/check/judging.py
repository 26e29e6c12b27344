"""The spread rule: is a candidate's figure a regression against a baseline's?

Runs of one trace differ a little even with one seed (the wall clock leaks into what the
autoscaler sees), so a gate comparing one number to one number would flap. The rule, per
figure:

- the baseline's value is the mean of its repetitions, its range [min, max] over them (one
  run: min = max = the value);
- the allowed band is that range widened on each side by the threshold's tolerance: the
  larger of ``relative`` * |baseline mean| and ``absolute`` (either may be left out);
- the candidate's value is the mean of its repetitions;
- a candidate value above the band is a regression when the direction is ``increase`` or
  ``both``, below it when the direction is ``decrease`` or ``both``; outside the band the
  other way it is "better", inside it "ok". A figure either side lacks (no pod was ever
  scheduled, so no pending p50) is "missing" and not judged; an ignored one is "ignored".

So more baseline repetitions widen the band by exactly the noise they showed, and nothing
else: the threshold is always on top of the observed spread.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from simkube.check.figures import Figure, Sample, Spread
from simkube.check.thresholds import Direction, Threshold, Thresholds


class Verdict(enum.Enum):
    OK = "ok"
    BETTER = "better"
    REGRESSION = "regression"
    MISSING = "missing"
    IGNORED = "ignored"


@dataclass(frozen=True, kw_only=True)
class Judgement:
    figure: Figure
    threshold: Threshold
    baseline: Spread | None
    candidate: Spread | None
    lower: float | None  # the band; None when that side is unbounded or unknown
    upper: float | None
    verdict: Verdict

    @property
    def change(self) -> float | None:
        """Candidate mean minus baseline mean."""
        if self.baseline is None or self.candidate is None:
            return None
        return self.candidate.mean - self.baseline.mean

    @property
    def relative_change(self) -> float | None:
        """The change as a fraction of the baseline mean (None when that is 0)."""
        change = self.change
        if change is None or self.baseline is None or self.baseline.mean == 0:
            return None
        return change / abs(self.baseline.mean)


@dataclass(frozen=True, kw_only=True)
class Outcome:
    baseline: Sample
    candidate: Sample
    judgements: tuple[Judgement, ...]

    @property
    def regressions(self) -> tuple[Judgement, ...]:
        return tuple(j for j in self.judgements if j.verdict is Verdict.REGRESSION)

    @property
    def passed(self) -> bool:
        return not self.regressions


def judge_figure(*, figure: Figure, threshold: Threshold, baseline: Spread | None,
                 candidate: Spread | None) -> Judgement:
    """One figure under the spread rule (module docstring)."""
    lower = upper = None
    if baseline is not None:
        tolerance = threshold.tolerance(baseline.mean)
        if threshold.direction is not Direction.INCREASE:
            lower = baseline.low - tolerance
        if threshold.direction is not Direction.DECREASE:
            upper = baseline.high + tolerance
    if threshold.ignore:
        verdict = Verdict.IGNORED
    elif baseline is None or candidate is None:
        verdict = Verdict.MISSING
    elif (upper is not None and candidate.mean > upper) or (
            lower is not None and candidate.mean < lower):
        verdict = Verdict.REGRESSION
    elif threshold.direction is Direction.BOTH:
        verdict = Verdict.OK
    elif threshold.direction is Direction.INCREASE:
        better = candidate.mean < baseline.low - threshold.tolerance(baseline.mean)
        verdict = Verdict.BETTER if better else Verdict.OK
    else:
        better = candidate.mean > baseline.high + threshold.tolerance(baseline.mean)
        verdict = Verdict.BETTER if better else Verdict.OK
    return Judgement(figure=figure, threshold=threshold, baseline=baseline,
                     candidate=candidate, lower=lower, upper=upper, verdict=verdict)


def judge(*, baseline: Sample, candidate: Sample, thresholds: Thresholds,
          figures: Sequence[Figure] = tuple(Figure)) -> Outcome:
    """Every figure of ``candidate`` against ``baseline``."""
    return Outcome(baseline=baseline, candidate=candidate, judgements=tuple(
        judge_figure(figure=figure, threshold=thresholds[figure],
                     baseline=baseline.figures.get(figure),
                     candidate=candidate.figures.get(figure))
        for figure in figures))
