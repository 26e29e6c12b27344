"""The fidelity benchmark's one picture: error against replay speed.

A table says whether a speed keeps its limits; the plot shows how error grows with speed, and
where each figure crosses its limit, which is what a user choosing a speed needs. The worst
repetition of each speed is drawn (absolute value, in percent) on a log speed axis, with the
limits as dashed lines. Infinite or missing values are left out and named in the legend. Like
the report's plots it uses matplotlib's ``Figure`` with the Agg canvas only (no pyplot state,
no display).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from benchmarks.fidelity_figures import LIMITS, Value

DRAWN = {"nodes_curve": "nodes over time (area)", "node_hours": "node hours",
         "cost": "cost", "pending_p50": "pending time p50", "pending_p90": "pending time p90"}


def draw(*, worst_by_speed: Mapping[float, Mapping[str, Value]], path: Path,
         title: str) -> Path:
    """Write the plot to ``path`` (its directory created) and return the path."""
    import matplotlib  # noqa: PLC0415  # slow to import; only this step needs it

    matplotlib.use("Agg")
    from matplotlib.figure import Figure  # noqa: PLC0415

    speeds = sorted(worst_by_speed)
    figure = Figure(figsize=(8, 4.8), dpi=100, layout="constrained")
    axes = figure.add_subplot()
    highest = 10.0
    for name, label in DRAWN.items():
        points = [(speed, abs(value) * 100) for speed in speeds
                  if (value := worst_by_speed[speed].get(name)) is not None
                  and math.isfinite(value)]
        left_out = len(speeds) - len(points)
        suffix = f" ({left_out} speed(s) without a finite value)" if left_out else ""
        highest = max([highest, *(p[1] for p in points)])
        if points:
            axes.plot([p[0] for p in points], [p[1] for p in points], marker="o",
                      label=label + suffix)
    limits: dict[float, list[str]] = {}
    for name, limit in LIMITS.items():
        limits.setdefault(limit, []).append(DRAWN[name])
    for limit, names in limits.items():
        axes.axhline(limit * 100, linestyle="--", linewidth=0.8, color="grey")
        axes.annotate(f"limit: {', '.join(names)}", (speeds[0] if speeds else 1, limit * 100),
                      fontsize=7, color="grey", va="bottom")
    axes.set_xscale("log")
    # Linear up to 10 % where the limits are, logarithmic above: a 100 % miss at high speed
    # must not flatten the differences that decide the answer.
    axes.set_yscale("symlog", linthresh=10)
    ticks = [0, 2, 5, *(m * 10**k for k in range(1, 8) for m in (1, 2, 5))]
    shown = [t for t in ticks if t <= max(highest * 2, 10)]
    axes.set_yticks(shown, [f"{t:,} %" for t in shown])
    axes.set_ylim(bottom=0)
    axes.set_xticks(speeds, [f"{speed:g}x" for speed in speeds])
    axes.set_xlabel("replay speed (trace seconds per wall second)")
    axes.set_ylabel("|replay - truth| relative to truth (worst repetition)")
    axes.set_title(title, fontsize=10)
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png")
    return path
