"""The report's breakdown plot: node hours per instance type and nodes removed by why, one
bar per run side by side, so a comparison of two autoscalers shows at a glance which shapes
each paid for and how each gave capacity back.

Drawn only when some run has a breakdown (runs recorded before it existed have none); the
values are the summary's (results/breakdown.py), so the bars and the table agree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from simkube.report.breakdown import has_breakdown
from simkube.report.loading import RunData

TITLE = "Node hours by instance type, nodes removed by why"


def has_bars(runs: Sequence[RunData]) -> bool:
    return any(has_breakdown(run.summary) and (run.summary.get("instance_types")
                                               or run.summary.get("disruptions"))
               for run in runs)


def draw_breakdown(figure: Any, runs: Sequence[RunData], _axis: Any) -> None:
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415  # as lazily as plots.py

    hours, removed = figure.subplots(1, 2)
    _bars(hours, runs, field="instance_types", ylabel="node hours",
          value=lambda entry: float(entry.get("node_hours") or 0.0))
    _bars(removed, runs, field="disruptions", ylabel="nodes removed",
          value=lambda count: float(count or 0))
    removed.yaxis.set_major_locator(MaxNLocator(integer=True))
    hours.set_title("node hours by instance type", fontsize="medium", loc="left")
    removed.set_title("nodes removed by why", fontsize="medium", loc="left")
    handles, labels = hours.get_legend_handles_labels()
    if not handles:
        handles, labels = removed.get_legend_handles_labels()
    if len(runs) > 1 and handles:  # one legend for both, below them: bars fill the axes
        figure.legend(handles, labels, fontsize="small", loc="outside lower center",
                      ncols=len(runs))


def _bars(ax: Any, runs: Sequence[RunData], *, field: str, ylabel: str,
          value: Callable[[Any], float]) -> None:
    names = sorted({str(name) for run in runs for name in run.summary.get(field) or {}})
    if not names:
        ax.text(0.5, 0.5, "none", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        return
    width = 0.8 / max(len(runs), 2)
    for index, run in enumerate(runs):
        entries = run.summary.get(field) or {}
        offset = (index - (len(runs) - 1) / 2) * width
        ax.bar([position + offset for position in range(len(names))],
               [value(entries[name]) if name in entries else 0.0 for name in names],
               width=width, label=run.title, color=f"C{index % 10}")
    ax.set_xticks(range(len(names)), names, rotation=20 if len(names) > 3 else 0)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, axis="y")
