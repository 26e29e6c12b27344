"""The report's plots, drawn for one run or overlaid for several (one colour per run): four
curves and distributions always, the HPAs' replicas when a run recorded any, and the autoscaler
breakdown (``bars.py``) when there is one.

matplotlib is imported only when a report is drawn (skctl's other commands must start fast),
and only through ``Figure`` with the Agg canvas: no pyplot global state and no display
needed, so reports render the same on a laptop, in CI and over ssh. Timeline columns are
step curves (a row holds until the next), and are drawn as steps on the trace-time axis,
which is what runs at different speeds have in common.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simkube.report import bars
from simkube.report.loading import GROUP_PREFIX, RunData

MINUTES_FROM_S = 1800.0  # longer traces are labelled in minutes
DPI = 100


@dataclass(frozen=True, kw_only=True)
class Plot:
    name: str
    title: str
    path: Path
    png: bytes


def render_plots(runs: Sequence[RunData], *, output: Path) -> list[Plot]:
    """Draw every plot of ``runs`` into ``output`` (created) as PNG files."""
    # Lazily: matplotlib takes longer to import than the rest of skctl together.
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    from matplotlib.figure import Figure  # noqa: PLC0415

    output.mkdir(parents=True, exist_ok=True)
    axis = _TimeAxis.for_runs(runs)
    drawers: list[tuple[str, str, Callable[[Any, Sequence[RunData], _TimeAxis], None]]] = [
        ("nodes", "Nodes per group", _draw_nodes),
        ("pods", "Pods pending and running", _draw_pods),
        ("pending", "Time pending before scheduling", _draw_pending),
        ("cost", "Cumulative cost", _draw_cost),
    ]
    if any(run.hpas for run in runs):
        drawers.append(("hpa", "HPA replicas (desired solid, current dashed)", _draw_hpas))
    if bars.has_bars(runs):
        drawers.append(("breakdown", bars.TITLE, bars.draw_breakdown))
    plots = []
    for name, title, draw in drawers:
        figure = Figure(figsize=(9, 4.8), dpi=DPI, layout="constrained")
        figure.suptitle(title)
        draw(figure, runs, axis)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png")
        path = output / f"{name}.png"
        path.write_bytes(buffer.getvalue())
        plots.append(Plot(name=name, title=title, path=path, png=buffer.getvalue()))
    return plots


@dataclass(frozen=True, kw_only=True)
class _TimeAxis:
    scale: float
    label: str

    @classmethod
    def for_runs(cls, runs: Sequence[RunData]) -> _TimeAxis:
        longest = max((max(run.timeline["trace_s"], default=0.0) for run in runs), default=0.0)
        if longest > MINUTES_FROM_S:
            return cls(scale=60.0, label="trace time (min)")
        return cls(scale=1.0, label="trace time (s)")

    def times(self, run: RunData) -> list[float]:
        return [t / self.scale for t in run.timeline["trace_s"]]


def _colour(index: int) -> str:
    return f"C{index % 10}"


def _draw_nodes(figure: Any, runs: Sequence[RunData], axis: _TimeAxis) -> None:
    groups = sorted({group for run in runs for group in run.groups})
    columns = [f"{GROUP_PREFIX}{group}" for group in groups]
    if len(groups) != 1:
        columns.append("nodes_total")
    if len(runs) == 1:
        (run,) = runs
        ax = figure.subplots()
        for index, column in enumerate(columns):
            total = column == "nodes_total"
            _step(ax, axis=axis, run=run, column=column, label=_column_label(column),
                  color="black" if total else _colour(index), linestyle="--" if total else "-")
        _finish(ax, axis=axis, ylabel="nodes", legend=True)
        return
    axes = figure.subplots(len(columns), 1, sharex=True, squeeze=False)[:, 0]
    for ax, column in zip(axes, columns, strict=True):
        for index, run in enumerate(runs):
            _step(ax, axis=axis, run=run, column=column, label=run.title, color=_colour(index))
        ax.set_title(_column_label(column), fontsize="medium", loc="left")
        _finish(ax, axis=axis, ylabel="nodes", legend=ax is axes[0], xlabel=ax is axes[-1])


def _draw_pods(figure: Any, runs: Sequence[RunData], axis: _TimeAxis) -> None:
    axes = figure.subplots(2, 1, sharex=True)
    for ax, column, title in ((axes[0], "pods_pending", "pending"),
                              (axes[1], "pods_running", "running")):
        for index, run in enumerate(runs):
            _step(ax, axis=axis, run=run, column=column, label=run.title, color=_colour(index))
        ax.set_title(f"pods {title}", fontsize="medium", loc="left")
        _finish(ax, axis=axis, ylabel="pods", legend=ax is axes[0], xlabel=ax is axes[1])


def _draw_pending(figure: Any, runs: Sequence[RunData], axis: _TimeAxis) -> None:
    histogram, cdf = figure.subplots(1, 2)
    drawn = [run for run in runs if run.pending_s]
    if not drawn:
        for ax in (histogram, cdf):
            ax.text(0.5, 0.5, "no scheduled pods", ha="center", va="center",
                    transform=ax.transAxes)
        return
    top = max(max(run.pending_s) for run in drawn)
    bins = [top * i / 30 for i in range(31)] if top > 0 else 30
    for index, run in enumerate(runs):
        if not run.pending_s:
            continue
        values = sorted(run.pending_s)
        histogram.hist(values, bins=bins, histtype="stepfilled" if len(runs) == 1 else "step",
                       color=_colour(index), alpha=0.8, label=run.title, linewidth=1.5)
        share = [(i + 1) / len(values) for i in range(len(values))]
        cdf.step([0.0, *values], [0.0, *share], where="post", color=_colour(index),
                 label=run.title)
    histogram.set_xlabel("time pending (trace s)")
    histogram.set_ylabel("pods")
    cdf.set_xlabel("time pending (trace s)")
    cdf.set_ylabel("share of scheduled pods")
    cdf.set_ylim(0, 1.02)
    for ax in (histogram, cdf):
        ax.grid(alpha=0.3)
    cdf.legend(fontsize="small", loc="lower right")


MAX_HPA_PANELS = 4  # more HPAs than this: the first ones by name


def _draw_hpas(figure: Any, runs: Sequence[RunData], axis: _TimeAxis) -> None:
    names = sorted({name for run in runs for name in run.hpas})[:MAX_HPA_PANELS]
    axes = figure.subplots(len(names), 1, sharex=True, squeeze=False)[:, 0]
    for ax, name in zip(axes, names, strict=True):
        for index, run in enumerate(runs):
            curve = run.hpas.get(name)
            if not curve:
                continue
            times = [t / axis.scale for t in curve["trace_s"]]
            ax.step(times, curve["desired"], where="post", color=_colour(index),
                    label=run.title)
            ax.step(times, curve["current"], where="post", color=_colour(index),
                    linestyle="--", alpha=0.7)
        ax.set_title(f"HPA {name}", fontsize="medium", loc="left")
        _finish(ax, axis=axis, ylabel="replicas", legend=ax is axes[0],
                xlabel=ax is axes[-1])


def _draw_cost(figure: Any, runs: Sequence[RunData], axis: _TimeAxis) -> None:
    ax = figure.subplots()
    for index, run in enumerate(runs):
        _step(ax, axis=axis, run=run, column="cost_usd", label=run.title, color=_colour(index))
    _finish(ax, axis=axis, ylabel="cost (USD)", legend=True)


def _step(ax: Any, *, axis: _TimeAxis, run: RunData, column: str, label: str,
          **style: Any) -> None:
    """One step curve (a row's value holds until the next); absent columns are skipped."""
    if column in run.timeline:
        ax.step(axis.times(run), run.timeline[column], where="post", label=label, **style)


def _finish(ax: Any, *, axis: _TimeAxis, ylabel: str, legend: bool, xlabel: bool = True) -> None:
    if xlabel:
        ax.set_xlabel(axis.label)
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    if legend:
        ax.legend(fontsize="small", loc="upper right")


def _column_label(column: str) -> str:
    return "all groups" if column == "nodes_total" else column.removeprefix(GROUP_PREFIX)
