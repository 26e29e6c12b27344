"""The sweep's trade-off plots: every point on two figures, the frontier picked out.

Dominated points are grey, frontier points coloured, joined in order and labelled with what
differs from the base, so the plot answers "which settings are worth looking at" without
the table. matplotlib is imported lazily and used through ``Figure`` with the Agg canvas, as
the run report's plots are (``report/plots.py``), and the result is the report's ``Plot``, so
the report's HTML page embeds it the same way.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

from simkube.report.plots import DPI, Plot
from simkube.sweep.collect import Figure, PointFigures
from simkube.sweep.frontier import Frontier

GREY = "#b0b0b0"
FRONT = "#1f77b4"
AXIS_LABELS = {Figure.COST: "cost (USD)", Figure.NODE_HOURS: "node hours",
               Figure.PENDING_P90: "pending p90 (s of trace)"}


def tradeoff_plot(points: Sequence[PointFigures], front: Frontier, *, x: Figure, y: Figure,
                  output: Path) -> Plot:
    """``output/<x>-vs-<y>.png``: the points on ``x`` and ``y``, the frontier labelled."""
    import matplotlib  # noqa: PLC0415  # lazily: slow to import, and only reports need it

    matplotlib.use("Agg")
    from matplotlib.figure import Figure as MplFigure  # noqa: PLC0415

    by_index = {point.index: point for point in points}
    figure = MplFigure(figsize=(9, 5.4), dpi=DPI, layout="constrained")
    title = f"{AXIS_LABELS[x]} vs {AXIS_LABELS[y]}"
    figure.suptitle(title)
    axes = figure.add_subplot()
    grey = [by_index[key] for key in front.dominated]
    axes.scatter(*_xy(grey, x, y), color=GREY, label="dominated", zorder=2)
    best = [by_index[key] for key in front.front]
    axes.plot(*_xy(best, x, y), color=FRONT, marker="o", drawstyle="steps-post",
              label="frontier", zorder=3)
    for point, at in zip(best, zip(*_xy(best, x, y), strict=True), strict=True):
        axes.annotate(f"#{point.index} {point.label}", at, textcoords="offset points",
                      xytext=(6, 6), fontsize=8)
    axes.set_xlabel(AXIS_LABELS[x])
    axes.set_ylabel(AXIS_LABELS[y])
    axes.grid(visible=True, alpha=0.3)
    axes.legend(loc="best")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    output.mkdir(parents=True, exist_ok=True)
    path = output / f"{x.value}-vs-{y.value}.png"
    path.write_bytes(buffer.getvalue())
    return Plot(name=f"{x.value}-vs-{y.value}", title=title, path=path, png=buffer.getvalue())


def _xy(points: Sequence[PointFigures], x: Figure, y: Figure) -> tuple[list[float], list[float]]:
    """The points' coordinates; the frontier only places points with both figures."""
    return ([point.mean(x) or 0.0 for point in points], [point.mean(y) or 0.0 for point in points])
