"""``skctl env build``'s output: a live line per building group on a terminal, plain lines
in a log.

A first build is about 20 minutes of ``go build``; the user should see it move. On a
terminal, rich shows the group being built, its phase (downloading modules, compiling), the
package Go started last and the elapsed time (``toolchain.progress`` reads Go's ``-v``
output), then one line per finished group. A CI log cannot redraw a line, so there the same
description is printed as a plain line when a build starts and every ``HEARTBEAT_SECONDS``
while it runs (Kubernetes links for minutes without printing anything, so the heartbeat is a
timer, not a reaction to Go's output), and one line per finished group.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn

from simkube.env.toolchain.building import BuildResult, build_group
from simkube.env.toolchain.catalog import BuildGroup
from simkube.env.toolchain.progress import BuildProgress

HEARTBEAT_SECONDS = 30.0


def _finished(console: Console, result: BuildResult) -> None:
    group = result.group
    done = "(cached)" if result.cached else f"built in {result.seconds:.0f}s"
    console.print(f"[green]✓[/] {group.name} {group.version} {done}")


def _label(group: BuildGroup, index: int, total: int) -> str:
    return f"[{index}/{total}] {group.name} {group.version}"


def elapsed_text(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


class _Heartbeat:
    """Prints ``line()`` with the elapsed time every ``every`` seconds until stopped."""

    def __init__(self, *, console: Console, line: Callable[[], str], every: float) -> None:
        self._console, self._line, self._every = console, line, every
        self._stop = threading.Event()
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._run, daemon=True, name="build-heartbeat")

    def start(self) -> None:
        self._started = time.monotonic()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            elapsed = elapsed_text(time.monotonic() - self._started)
            self._console.print(f"  {self._line()} ({elapsed})", highlight=False)


def _build_live(groups: Sequence[BuildGroup], *, force: bool,
                console: Console) -> list[BuildResult]:
    results = []
    # Elapsed before the description: a long package path must not push it off the line.
    with Progress(SpinnerColumn(), TimeElapsedColumn(), TextColumn("{task.description}"),
                  console=console, transient=True) as progress:
        for index, group in enumerate(groups, 1):
            state = BuildProgress(group=_label(group, index, len(groups)))
            task = progress.add_task(f"{state.group}: checking the cache")

            def show(line: str = "", *, state: BuildProgress = state,
                     task: TaskID = task) -> None:
                if line:
                    state.feed(line)
                progress.update(task, description=state.describe())

            result = build_group(group, force=force, on_package=show, on_build=show)
            progress.remove_task(task)
            _finished(console, result)
            results.append(result)
    return results


def _build_plain(groups: Sequence[BuildGroup], *, force: bool, console: Console,
                 every: float) -> list[BuildResult]:
    results = []
    for index, group in enumerate(groups, 1):
        state = BuildProgress(group=_label(group, index, len(groups)))
        beat = _Heartbeat(console=console, line=state.describe, every=every)

        def starting(*, state: BuildProgress = state, beat: _Heartbeat = beat) -> None:
            console.print(f"{state.group}: building from the Go module proxy", highlight=False)
            beat.start()

        try:
            result = build_group(group, force=force, on_package=state.feed, on_build=starting)
        finally:
            beat.stop()
        _finished(console, result)
        results.append(result)
    return results


def build_with_progress(groups: Sequence[BuildGroup], *, force: bool, console: Console,
                        every: float = HEARTBEAT_SECONDS) -> list[BuildResult]:
    """Build ``groups`` in order, live on a terminal, in plain lines otherwise."""
    if console.is_terminal:
        return _build_live(groups, force=force, console=console)
    return _build_plain(groups, force=force, console=console, every=every)
