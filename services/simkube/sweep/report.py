"""``skctl sweep report DIR``: every point's figures, the frontiers, the plots and one page.

The table lists every point of the manifest (those without results show their state and why
they failed), the frontiers say which points are worth a closer look on cost and on node
hours against pending p90, and the page embeds the plots beside the table with the run
report's own page writer and number formats, so a sweep's page reads like a run's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simkube.core.errors import ConfigError
from simkube.report.formatting import format_value
from simkube.report.html import write_page
from simkube.report.plots import Plot
from simkube.report.tables import Grid
from simkube.sweep import manifest
from simkube.sweep.collect import Figure, PointFigures, collect, done
from simkube.sweep.frontier import Candidate, Frontier, frontier
from simkube.sweep.plots import tradeoff_plot

PAIRS = ((Figure.COST, Figure.PENDING_P90), (Figure.NODE_HOURS, Figure.PENDING_P90))
COLUMNS = ((Figure.COST, "usd"), (Figure.NODE_HOURS, "hours"), (Figure.PENDING_P50, "seconds"),
           (Figure.PENDING_P90, "seconds"), (Figure.NEVER_SCHEDULED, "count"))
REPORT_DIR = "report"


@dataclass(frozen=True, kw_only=True)
class SweepReport:
    grid: Grid
    frontiers: dict[str, Frontier]  # "cost_usd/pending_p90_s" → frontier
    plots: list[Plot]
    html: Path
    data: dict[str, Any]  # what --json prints


def frontiers(points: Sequence[PointFigures]) -> dict[str, Frontier]:
    return {f"{x.value}/{y.value}": frontier(
        [Candidate(key=p.index, x=p.mean(x), y=p.mean(y)) for p in points],
        x_name=x.value, y_name=y.value) for x, y in PAIRS}


def grid(points: Sequence[PointFigures], *, title: str) -> Grid:
    header = ["point", "settings", "state", "runs", "cost", "node hours", "pending p50",
              "pending p90", "never scheduled", "cost spread", "p90 spread"]
    rows = []
    for point in points:
        figures = [format_value(point.mean(figure), kind=kind) for figure, kind in COLUMNS]
        spreads = [format_value(point.spread.get(figure), kind=kind) for figure, kind in
                   ((Figure.COST, "usd"), (Figure.PENDING_P90, "seconds"))]
        state = point.state.value + (f": {point.reason}" if point.reason else "")
        rows.append([str(point.index), point.label, state, str(len(point.runs)), *figures,
                     *spreads])
    return Grid(title=title, header=header, sections=[("points", rows)])


def make_report(output: Path) -> SweepReport:
    """Read ``output``'s manifest and results; write the plots and page under ``report/``."""
    recorded = manifest.read(output)
    if recorded is None:
        raise ConfigError(f"{output} has no {manifest.FILE}: not a sweep's output directory",
                          hint="'skctl sweep run FILE --output DIR' writes one")
    points = collect(output, recorded)
    measured = done(points)
    fronts = frontiers(measured)
    target = output / REPORT_DIR
    target.mkdir(parents=True, exist_ok=True)
    plots = [tradeoff_plot(measured, fronts[f"{x.value}/{y.value}"], x=x, y=y, output=target)
             for x, y in PAIRS] if measured else []
    table = grid(points, title=f"sweep {recorded.sweep}: {len(measured)} of {len(points)} "
                               "points measured")
    lines = headlines(points, fronts)
    html = write_page(path=target / "index.html", title=f"sweep {recorded.sweep}",
                      headlines=lines, grid=table, plots=plots, sources=[output])
    data = {"sweep": recorded.sweep, "file": recorded.file, "digest": recorded.digest,
            "html": str(html), "plots": {plot.name: str(plot.path) for plot in plots},
            "headlines": lines,
            "points": [_point_json(point) for point in points],
            "frontiers": {name: {"front": list(front.front), "dominated": list(front.dominated),
                                 "excluded": list(front.excluded), "notes": list(front.notes)}
                          for name, front in fronts.items()}}
    return SweepReport(grid=table, frontiers=fronts, plots=plots, html=html, data=data)


def headlines(points: Sequence[PointFigures], fronts: dict[str, Frontier]) -> list[str]:
    labels = {point.index: f"#{point.index} ({point.label})" for point in points}
    lines = [f"{sum(1 for p in points if p.state is state)} {state.value}"
             for state in manifest.PointState]
    lines = [", ".join(line for line in lines if not line.startswith("0 "))]
    for name, front in fronts.items():
        x, _, y = name.partition("/")
        members = ", ".join(labels[key] for key in front.front) or "none"
        lines.append(f"frontier of {x} vs {y}: {members}")
        lines += front.notes
    return lines


def _point_json(point: PointFigures) -> dict[str, Any]:
    return {"index": point.index, "settings": point.label, "state": point.state.value,
            "reason": point.reason or None, "runs": [str(run) for run in point.runs],
            "means": {figure.value: point.mean(figure) for figure in Figure},
            "spread": {figure.value: value for figure, value in point.spread.items()}}
