"""How ``sk-driver replay`` shows a running simulation: a live bar on a terminal, lines elsewhere.

On a terminal the user watches one rich progress line (state, events, trace time, lag,
failures) redraw in place; in a Kubernetes Job or a CI log nothing redraws, so a plain line
is printed every ``LINE_INTERVAL`` seconds instead. Both end with the same summary.
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from simkube.core.durations import human_duration
from simkube.driver.progress import ProgressSnapshot, SimulationState

LINE_INTERVAL = 10.0
STATE_STYLE = {SimulationState.SUCCEEDED: "green", SimulationState.FAILED: "red",
               SimulationState.PAUSED: "yellow", SimulationState.CANCELLING: "yellow",
               SimulationState.CANCELLED: "yellow"}


def status_line(snapshot: ProgressSnapshot) -> str:
    return (f"{snapshot.state.value.lower()}: events {snapshot.events_applied}/"
            f"{snapshot.events_total}, trace {human_duration(snapshot.trace_time_ms)}/"
            f"{human_duration(snapshot.trace_length_ms)}, lag p99 "
            f"{snapshot.lag_p99_ms:.1f}ms, failed {snapshot.objects_failed}")


def summary(snapshot: ProgressSnapshot) -> str:
    lines = [f"simulation {snapshot.name} {snapshot.state.value.lower()}: "
             f"{snapshot.events_applied}/{snapshot.events_total} events, "
             f"{snapshot.objects_applied} objects applied, {snapshot.objects_failed} failed, "
             f"in {human_duration(snapshot.wall_time_ms)} "
             f"(lag p50 {snapshot.lag_p50_ms:.1f}ms, p99 {snapshot.lag_p99_ms:.1f}ms, "
             f"max {snapshot.lag_max_ms:.1f}ms)"]
    if snapshot.pods_timed:
        lines.append(f"  {snapshot.pods_timed} pods got recorded lifetimes")
    for failure in snapshot.failures[-10:]:
        lines.append(f"  failed: {failure}")
    if snapshot.objects_failed > 10:
        lines.append(f"  ... {snapshot.objects_failed - 10} more failures (see the log)")
    if snapshot.message:
        lines.append(f"  {snapshot.message}")
    if snapshot.cleaned_up:
        lines.append("  cleaned up: the simulation root and everything it owned are gone")
    return "\n".join(lines)


class ProgressDisplay:
    """``with ProgressDisplay(stream) as display: display.update(snapshot)``."""

    def __init__(self, stream: TextIO) -> None:
        self._console = Console(file=stream)
        self._live = self._console.is_terminal
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._last_line = 0.0
        self._last_state: SimulationState | None = None

    def __enter__(self) -> ProgressDisplay:
        if self._live:
            self._bar = Progress(
                TextColumn("{task.fields[state]}"), BarColumn(),
                TextColumn("events {task.completed:.0f}/{task.total:.0f}"),
                TextColumn("trace {task.fields[trace]}"),
                TextColumn("lag {task.fields[lag]}"),
                TextColumn("failed {task.fields[failed]}"), TimeElapsedColumn(),
                console=self._console, transient=False)
            self._bar.start()
            self._task = self._bar.add_task("replay", total=1, state="pending", trace="-",
                                            lag="-", failed=0)
        return self

    def update(self, snapshot: ProgressSnapshot) -> None:
        if self._bar is not None and self._task is not None:
            style = STATE_STYLE.get(snapshot.state, "cyan")
            self._bar.update(
                self._task, total=max(snapshot.events_total, 1),
                completed=snapshot.events_applied,
                state=f"[{style}]{snapshot.state.value.lower()}[/]",
                trace=f"{human_duration(snapshot.trace_time_ms)}/"
                      f"{human_duration(snapshot.trace_length_ms)}",
                lag=f"{snapshot.lag_current_ms:.1f}ms (p99 {snapshot.lag_p99_ms:.1f}ms)",
                failed=snapshot.objects_failed)
            return
        now = time.monotonic()
        if now - self._last_line >= LINE_INTERVAL or snapshot.state is not self._last_state:
            self._last_line = now
            self._last_state = snapshot.state
            self._console.print(status_line(snapshot), markup=False, highlight=False)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()
