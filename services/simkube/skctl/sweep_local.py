"""``skctl sweep run FILE --output DIR``: the points on this machine, with one progress bar.

Hands the points to ``simkube.sweep.running.run_sweep`` (``--parallel`` worker threads, each
point in its own environment through ``sweep_point.run_point``) and draws the whole sweep's
progress on stderr: points done of all, how many are done, running and failed, elapsed time
and an ETA from the plan's estimate, and a line per finished point (what a log keeps when no
bar is drawn). Ctrl-C is turned into one clear ending: the running points stopped, their
environments down, and how to resume.
"""

from __future__ import annotations

import time
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from simkube.core.durations import human_duration
from simkube.core.errors import SimkubeError
from simkube.skctl.sweep_point import run_point
from simkube.sweep import running
from simkube.sweep.estimate import makespan, point_seconds, trace_seconds
from simkube.sweep.manifest import PointRecord, PointState
from simkube.sweep.points import Point
from simkube.sweep.spec import Sweep

notes = Console(stderr=True)


class SweepFailedError(SimkubeError):
    """Some points of the sweep failed; the manifest says why."""


class SweepInterruptedError(SimkubeError):
    """Ctrl-C: the running points were stopped and are pending again."""

    exit_code = 130  # what a shell reports for SIGINT


def point_estimate(sweep: Sweep) -> float:
    """Wall seconds of one point (every point replays the same span the same number of
    times; trace edits scale replicas and requests, not time)."""
    trace_s = trace_seconds(duration=sweep.base.duration, trace=sweep.base.trace)
    return point_seconds(repetitions=sweep.base.repetitions, trace_s=trace_s,
                         scale=sweep.base.scale)


def run_locally(sweep: Sweep, points: list[Point], *, output: Path, parallel: int) -> None:
    """Every point of ``sweep`` not yet done in ``output``; ``SweepFailedError`` at the end
    when some failed, ``SweepInterruptedError`` on Ctrl-C."""
    estimate = point_estimate(sweep)
    counts = dict.fromkeys(PointState, 0)
    started: dict[int, float] = {}
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TextColumn("ETA {task.fields[eta]}"),
                  console=notes) as progress:
        task = progress.add_task(sweep.name, total=len(points), eta="-")

        def on_change(record: PointRecord) -> None:
            counts[record.state] += 1
            if record.state is PointState.RUNNING:
                started[record.index] = time.monotonic()
            else:
                counts[PointState.RUNNING] -= 1
                started.pop(record.index, None)
                progress.print(f"point {record.index} {record.state.value}"
                               + (f": {record.reason}" if record.reason else ""))
            finished = counts[PointState.DONE] + counts[PointState.FAILED]
            busy = [max(0.0, estimate - (time.monotonic() - t)) for t in started.values()]
            queued = max(0, len(todo) - finished - len(busy))
            eta = makespan([estimate] * queued, parallel=parallel, busy=busy)
            progress.update(task, completed=skipped + finished, eta=human_duration(eta * 1000),
                            description=f"{sweep.name}: {counts[PointState.DONE]} done, "
                                        f"{counts[PointState.RUNNING]} running, "
                                        f"{counts[PointState.FAILED]} failed")

        before = running.prepare(sweep, points, output=output)
        todo = [i for i, record in before.points.items() if record.state is not PointState.DONE]
        skipped = len(points) - len(todo)
        progress.update(task, completed=skipped)

        def on_interrupt(busy: int) -> None:
            progress.print(f"interrupted: stopping {busy} running point(s) and their "
                           "environments; the queued ones will not start")

        try:
            final = running.run_sweep(sweep=sweep, points=points, output=output,
                                      runner=run_point, parallel=parallel, on_change=on_change,
                                      on_interrupt=on_interrupt)
        except KeyboardInterrupt:
            raise SweepInterruptedError(
                f"sweep interrupted: {counts[PointState.DONE]} point(s) done in this run, "
                f"{skipped} before; the manifest is {output / 'manifest.json'}",
                hint="rerun the same command to resume") from None
    failed = [r for r in final.points.values() if r.state is PointState.FAILED]
    click.echo(f"{len(points) - len(failed)} of {len(points)} points done "
               f"({skipped} from before); report: skctl sweep report {output}")
    if failed:
        raise SweepFailedError(f"{len(failed)} point(s) failed: "
                               + "; ".join(f"{r.index}: {r.reason}" for r in failed),
                               hint="rerun the same command to retry them")
