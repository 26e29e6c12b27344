"""Run results for sweep tests, written with the recorder's own summary writer."""

from __future__ import annotations

from pathlib import Path

from simkube.results.files import write_summary
from simkube.results.model import PodsSummary, RunSummary


def write_run(run_dir: Path, *, cost: float, node_hours: float, p90: float | None,
              p50: float | None = 1.0, never: int = 0) -> Path:
    """``run_dir/summary.json`` (created) with these figures."""
    run_dir.mkdir(parents=True, exist_ok=True)
    pods = PodsSummary(seen=10, scheduled=10 - never, never_scheduled=never, succeeded=0,
                       failed=0, pending_p50_s=p50, pending_p90_s=p90, pending_p99_s=p90,
                       pending_max_s=p90, peak_pending=3, peak_running=10)
    write_summary(run_dir / "summary.json", RunSummary(
        simulation="sw", run=int(run_dir.name.removeprefix("run-")),
        started_at="2026-11-26T10:00:00Z", finished_at="2026-11-26T10:05:00Z",
        wall_seconds=300.0, trace_seconds=3000.0, speed=10.0, groups={}, pods=pods,
        node_hours=node_hours, cost_usd=cost, autoscaler_events=0, state="Finished"))
    return run_dir
