"""The figures a CI gate watches, read from runs, and their spread over repetitions.

A gate needs a handful of numbers that answer "did this change make the cluster dearer or
slower": cost, node hours, time pending, pods never scheduled, peak nodes, scale-ups. They
come from each run's ``summary.json`` through the results reader (``load_run``), except peak
nodes, which is the timeline's largest ``nodes_total`` (as ``skctl report`` shows it): the
summary keeps each group's peak, and groups peaking at different times do not add up.

A run repeated N times is N samples of the same experiment; a ``Spread`` (mean, min, max,
count) per figure is what the judging needs from them, whether the runs are on disk or were
summarised into a committed baseline file (``check.baseline``).
"""

from __future__ import annotations

import enum
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simkube.core.errors import ConfigError, SimkubeError

if TYPE_CHECKING:
    from simkube.results.model import RunResults


class Figure(enum.Enum):
    """One watched figure; the value is its key in summaries, thresholds and baselines."""

    COST_USD = "cost_usd"
    NODE_HOURS = "node_hours"
    PENDING_P50_S = "pending_p50_s"
    PENDING_P90_S = "pending_p90_s"
    NEVER_SCHEDULED = "never_scheduled"
    PEAK_NODES = "peak_nodes"
    SCALE_UPS = "scale_ups"

    @property
    def label(self) -> str:
        return _LABELS[self][0]

    def show(self, value: float | None) -> str:
        """``value`` in the figure's unit, for tables ("-" when unknown)."""
        if value is None:
            return "-"
        unit = _LABELS[self][1]
        if unit == "usd":
            # Three decimals below $100: a simulated bill of a few dollars moving 5 % must
            # not show its limit and the candidate as the same "$1.16".
            if abs(value) < 1:
                return f"${value:,.4f}"
            return f"${value:,.3f}" if abs(value) < 100 else f"${value:,.2f}"
        if unit == "h":
            return f"{value:,.3f} h"
        if unit == "s":
            return f"{value:,.1f} s"
        return f"{value:g}"


_LABELS = {Figure.COST_USD: ("cost", "usd"), Figure.NODE_HOURS: ("node hours", "h"),
           Figure.PENDING_P50_S: ("pending p50", "s"),
           Figure.PENDING_P90_S: ("pending p90", "s"),
           Figure.NEVER_SCHEDULED: ("never scheduled", "count"),
           Figure.PEAK_NODES: ("peak nodes", "count"), Figure.SCALE_UPS: ("scale-ups", "count")}


@dataclass(frozen=True, kw_only=True)
class Spread:
    """A figure over repetitions: their mean and range, and how many had a value."""

    mean: float
    low: float
    high: float
    count: int

    @classmethod
    def of(cls, values: Sequence[float | None]) -> Spread | None:
        """None when no repetition had a value (no pod scheduled: no pending p50)."""
        known = [v for v in values if v is not None]
        if not known:
            return None
        return cls(mean=statistics.fmean(known), low=min(known), high=max(known),
                   count=len(known))


@dataclass(frozen=True, kw_only=True)
class Sample:
    """What is compared: one or more repetitions summarised per figure, and where from."""

    label: str
    figures: Mapping[Figure, Spread | None]
    provenance: Mapping[str, Any] = field(default_factory=dict)


def figures_of(results: RunResults) -> dict[Figure, float | None]:
    """The watched figures of one run."""
    summary = results.summary
    totals = [row.nodes_total for row in results.timeline]
    return {Figure.COST_USD: summary.cost_usd, Figure.NODE_HOURS: summary.node_hours,
            Figure.PENDING_P50_S: summary.pods.pending_p50_s,
            Figure.PENDING_P90_S: summary.pods.pending_p90_s,
            Figure.NEVER_SCHEDULED: summary.pods.never_scheduled,
            Figure.PEAK_NODES: max(totals) if totals else None,
            Figure.SCALE_UPS: sum(group.scale_ups for group in summary.groups.values())}


def read_runs(run_dirs: Sequence[Path], *, label: str) -> Sample:
    """The repetitions in ``run_dirs`` as one sample; provenance says which runs these were."""
    if not run_dirs:
        raise ConfigError(f"{label}: no runs to read")
    # Lazily: simkube.results carries the recorder's Kubernetes client (0.4 s of imports).
    from simkube.results import load_run  # noqa: PLC0415

    runs = []
    for run_dir in run_dirs:
        try:
            runs.append(load_run(run_dir))
        except SimkubeError as exc:  # the reader names the file and the line
            raise ConfigError(f"unreadable results: {exc.message}", hint=exc.hint) from None
    unfinished = [str(r.run_dir) for r in runs if r.summary.finished_at is None]
    if unfinished:
        raise ConfigError(f"{label}: run {unfinished[0]} is still being recorded",
                          hint="check a run once its Simulation has finished")
    values = [figures_of(run) for run in runs]
    figures = {figure: Spread.of([v[figure] for v in values]) for figure in Figure}
    first = runs[0].summary
    provenance = {"simulation": first.simulation, "runs": [r.summary.run for r in runs],
                  "speed": first.speed, "autoscaler": first.autoscaler or None,
                  "trace_seconds": first.trace_seconds}
    return Sample(label=label, figures=figures, provenance=provenance)
