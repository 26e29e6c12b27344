"""What a restarted recorder takes over from its run's files (a restarted sk-ctrl).

The run goes on in the same directory rather than starting a new one, so nothing recorded
is lost: wall time continues from the recorded start, trace time and cumulative cost from the
last timeline row; the scaling rows so far are kept (scale steps are counted over the whole
run), the pods from pods.csv, and what the summary knew of the groups' labels and the
autoscaler goes back into the observer. A torn last line is cut off first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from simkube.results import files, reading
from simkube.results.model import ScalingRow, TimelineRow
from simkube.results.observing import Observer
from simkube.results.pods import parse_time


@dataclass(frozen=True, kw_only=True)
class Earlier:
    started_at: datetime
    rows: list[TimelineRow] = field(default_factory=list)  # empty: a new run
    scaling: list[ScalingRow] = field(default_factory=list)


def resume(run_dir: Path, *, observer: Observer, now: datetime) -> Earlier:
    """The earlier part of the run in ``run_dir``, if any; its pods and labels go to
    ``observer``. ``now`` starts a new run, or one whose summary never said when it began."""
    timeline = run_dir / files.TIMELINE
    if not timeline.exists():
        return Earlier(started_at=now)
    files.repair_tail(timeline)
    rows = reading.read_timeline(timeline)
    started: datetime | None = None
    summary = run_dir / files.SUMMARY
    if summary.exists():
        earlier = reading.read_summary(summary)
        started = parse_time(earlier.started_at)
        observer.restore(earlier)
    if started is None:
        started = now - timedelta(seconds=rows[-1].wall_s if rows else 0.0)
    scaling_rows: list[ScalingRow] = []
    scaling = run_dir / files.SCALING
    if scaling.exists():
        files.repair_tail(scaling)
        scaling_rows = reading.read_scaling(scaling)
    pods = run_dir / files.PODS
    if pods.exists():
        observer.pods.restore(reading.read_pods(pods))
    return Earlier(started_at=started, rows=rows, scaling=scaling_rows)
