"""Small results directories for the check tests, written with the recorder's own writers.

Only the figures ``skctl check`` reads vary; the rest is a plausible finished run. Writing
through ``results.files`` (not by hand) keeps these runs in the format ``load_run`` reads.
"""

from __future__ import annotations

from pathlib import Path

from simkube.check.figures import Figure, Sample, Spread
from simkube.results import files
from simkube.results.model import GroupSummary, PodsSummary, RunSummary, TimelineRow

BASE = {Figure.COST_USD: 4.0, Figure.NODE_HOURS: 8.0, Figure.PENDING_P50_S: 2.0,
        Figure.PENDING_P90_S: 20.0, Figure.NEVER_SCHEDULED: 0, Figure.PEAK_NODES: 6,
        Figure.SCALE_UPS: 4}


def write_run(root: Path, *, simulation: str = "shop", run: int = 1, finished: bool = True,
              **figures: float | None) -> Path:
    """``root/simulation/run-N`` with the figures of BASE, overridden by ``figures``
    (keyword: a Figure's value, e.g. ``node_hours=9.5``)."""
    values = {**BASE, **{Figure(name): value for name, value in figures.items()}}
    run_dir = root / simulation / f"run-{run}"
    run_dir.mkdir(parents=True)
    scale_ups = int(values[Figure.SCALE_UPS] or 0)
    groups = {"general": GroupSummary(price_per_hour=0.5, peak_nodes=4, min_nodes=1,
                                      final_nodes=1, node_hours=1.0, cost_usd=0.5,
                                      scale_ups=scale_ups - 1, scale_downs=1),
              "spot": GroupSummary(price_per_hour=0.25, peak_nodes=3, min_nodes=0,
                                   final_nodes=0, node_hours=1.0, cost_usd=0.25,
                                   scale_ups=1, scale_downs=1)}
    pods = PodsSummary(seen=10, scheduled=10, never_scheduled=int(values[Figure.NEVER_SCHEDULED]
                                                                  or 0),
                       succeeded=10, failed=0, pending_p50_s=values[Figure.PENDING_P50_S],
                       pending_p90_s=values[Figure.PENDING_P90_S], pending_p99_s=None,
                       pending_max_s=None, peak_pending=3, peak_running=10)
    summary = RunSummary(simulation=simulation, run=run, started_at="2026-01-01T00:00:00Z",
                         finished_at="2026-01-01T00:10:00Z" if finished else None,
                         wall_seconds=60.0, trace_seconds=600.0, speed=10.0, groups=groups,
                         pods=pods, node_hours=float(values[Figure.NODE_HOURS] or 0),
                         cost_usd=float(values[Figure.COST_USD] or 0), autoscaler_events=3,
                         state="Finished" if finished else "Running",
                         autoscaler="cluster-autoscaler")
    files.write_summary(run_dir / files.SUMMARY, summary)
    peak = int(values[Figure.PEAK_NODES] or 0)
    rows = [TimelineRow(wall_s=t, trace_s=10 * t, pods_pending=0, pods_running=0,
                        pods_succeeded=0, pods_failed=0, nodes_total=n,
                        nodes={"general": n, "spot": 0}, cost_usd=t)
            for t, n in ((0.0, 1), (1.0, peak), (2.0, 1))]
    files.atomic_write(run_dir / files.TIMELINE, "".join(
        [",".join(files.timeline_header(["general", "spot"])) + "\n",
         *(files.timeline_line(row, ["general", "spot"]) for row in rows)]))
    return run_dir


def sample(label: str = "s", **figures: tuple[float, ...]) -> Sample:
    """A sample whose figures are BASE, or the repetitions' values given by keyword."""
    spreads = {figure: Spread.of([BASE[figure]]) for figure in Figure}
    spreads.update({Figure(name): Spread.of(values) for name, values in figures.items()})
    return Sample(label=label, figures=spreads)
