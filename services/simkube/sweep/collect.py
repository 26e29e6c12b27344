"""Each point's figures, read from its runs' ``summary.json`` with the recorder's own reader.

A point has ``repetitions`` runs; the report compares points by the mean of their runs and
shows how far the runs of one point spread (max - min), because a difference between two
points smaller than either point's spread is noise, not a finding. A point that has no runs
yet (pending, running, failed) is still listed, with its state and without figures.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from simkube.results.model import RunSummary
from simkube.results.reading import read_summary
from simkube.sweep.manifest import Manifest, PointState


class Figure(StrEnum):
    """The figures a sweep compares, as the JSON names them."""

    COST = "cost_usd"
    NODE_HOURS = "node_hours"
    PENDING_P50 = "pending_p50_s"
    PENDING_P90 = "pending_p90_s"
    NEVER_SCHEDULED = "never_scheduled"


SPREAD = (Figure.COST, Figure.NODE_HOURS, Figure.PENDING_P90)


@dataclass(frozen=True, kw_only=True)
class PointFigures:
    index: int
    label: str
    state: PointState
    reason: str = ""
    runs: tuple[Path, ...] = ()
    means: Mapping[Figure, float | None] = field(default_factory=dict)
    spread: Mapping[Figure, float | None] = field(default_factory=dict)  # max - min over runs

    def mean(self, figure: Figure) -> float | None:
        return self.means.get(figure)


def _values(summary: RunSummary) -> dict[Figure, float | None]:
    return {Figure.COST: summary.cost_usd, Figure.NODE_HOURS: summary.node_hours,
            Figure.PENDING_P50: summary.pods.pending_p50_s,
            Figure.PENDING_P90: summary.pods.pending_p90_s,
            Figure.NEVER_SCHEDULED: float(summary.pods.never_scheduled)}


def point_figures(*, index: int, label: str, state: PointState, reason: str,
                  folder: Path | None) -> PointFigures:
    """The figures of one point's ``run-N`` folders (none read unless it is done)."""
    runs = tuple(sorted((p for p in folder.glob("run-*") if (p / "summary.json").is_file()),
                        key=lambda p: int(p.name.removeprefix("run-")))
                 ) if folder is not None and state is PointState.DONE else ()
    per_run = [_values(read_summary(run / "summary.json")) for run in runs]
    means: dict[Figure, float | None] = {}
    spread: dict[Figure, float | None] = {}
    for figure in Figure:
        known = [values[figure] for values in per_run if values[figure] is not None]
        numbers = [float(value) for value in known if value is not None]
        means[figure] = statistics.fmean(numbers) if numbers else None
        if figure in SPREAD:
            spread[figure] = max(numbers) - min(numbers) if numbers else None
    return PointFigures(index=index, label=label, state=state, reason=reason, runs=runs,
                        means=means, spread=spread)


def collect(output: Path, manifest: Manifest) -> list[PointFigures]:
    """Every point of the manifest, in index order."""
    return [point_figures(index=index, label=record.label, state=record.state,
                          reason=record.reason,
                          folder=output / record.results if record.results else None)
            for index, record in sorted(manifest.points.items())]


def done(points: Sequence[PointFigures]) -> list[PointFigures]:
    return [point for point in points if point.runs]
