"""Produce a report or a comparison: plots, the HTML page, and the data ``--json`` prints.

This is the one entry point the CLI (and scripts) call with already loaded runs; it decides
nothing about where results live (``locate``) or how they are read (``loading``). The JSON
document carries every number of the table by stable key, the headline sentences and the
paths written, so tests and scripts never scrape the terminal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from simkube.report.compare import DEFAULT_THRESHOLD, Comparison, compare_runs
from simkube.report.html import write_page
from simkube.report.loading import RunData
from simkube.report.metrics import headlines, metric_values
from simkube.report.plots import Plot, render_plots
from simkube.report.tables import Grid, compare_grid, report_grid


@dataclass(frozen=True, kw_only=True)
class Rendered:
    html: Path
    plots: list[Plot]
    grid: Grid
    headlines: list[str]
    callouts: list[str] | None  # compare only
    data: dict[str, Any]        # what --json prints


def make_report(runs: Sequence[RunData], *, output: Path) -> Rendered:
    """Report on one run, or on several repetitions overlaid."""
    plots = render_plots(runs, output=output)
    lines = [line for run in runs for line in headlines(run)]
    grid = report_grid(runs)
    title = grid.title
    html = write_page(path=output / "index.html", title=title, headlines=lines, grid=grid,
                      plots=plots, sources=[run.directory for run in runs])
    data = {"simulation": runs[0].label.split("/")[0], "html": str(html), "output": str(output),
            "plots": {plot.name: str(plot.path) for plot in plots}, "headlines": lines,
            "runs": [_run_json(run) for run in runs]}
    return Rendered(html=html, plots=plots, grid=grid, headlines=lines, callouts=None,
                    data=data)


def make_comparison(runs: Sequence[RunData], *, output: Path,
                    threshold: float = DEFAULT_THRESHOLD) -> Rendered:
    """Compare ``runs[1:]`` with ``runs[0]``, overlaid in the plots."""
    comparison = compare_runs(runs, threshold=threshold)
    plots = render_plots(runs, output=output)
    grid = compare_grid(comparison)
    callouts = [callout.text for callout in comparison.callouts]
    lines = [f"{len(callouts)} difference(s) above {threshold:.1%} against {runs[0].label}"]
    html = write_page(path=output / "compare.html",
                      title=f"comparison: {', '.join(run.label for run in runs)}",
                      headlines=lines, grid=grid, plots=plots, callouts=callouts,
                      sources=[run.directory for run in runs])
    data = {"html": str(html), "output": str(output), "baseline": runs[0].label,
            "threshold": threshold, "plots": {plot.name: str(plot.path) for plot in plots},
            "headlines": lines, "runs": [_run_json(run) for run in runs],
            "metrics": _metrics_json(comparison),
            "differences": [{**asdict(c), "relative": _finite(c.relative)}
                            for c in comparison.callouts],
            "curves": [{"run": label, **{k: _finite(v) if isinstance(v, float) else v
                                         for k, v in asdict(diff).items()}}
                       for label, diff in comparison.curves]}
    return Rendered(html=html, plots=plots, grid=grid, headlines=lines, callouts=callouts,
                    data=data)


def _run_json(run: RunData) -> dict[str, Any]:
    return {"label": run.label, "directory": str(run.directory),
            "run": run.summary.get("run"), "state": run.summary.get("state"),
            "autoscaler": run.autoscaler or None, "metrics": metric_values(run)}


def _metrics_json(comparison: Comparison) -> list[dict[str, Any]]:
    return [{"key": row.metric.key, "label": row.metric.label, "values": row.values,
             "absolute": row.absolute, "relative": [_finite(r) for r in row.relative]}
            for row in comparison.rows]


def _finite(value: float | None) -> float | None:
    """JSON has no infinity: a change from zero is reported as null (and called out)."""
    return None if value is None or not math.isfinite(value) else value
