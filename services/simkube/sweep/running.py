"""Running a sweep's points, one function per point, N points at a time, resumably.

``execute_point`` is the whole of one point: skip it when the manifest says it is done,
mark it running, hand it to the runner (which starts the point's own environment, runs the
Simulation, stops the environment and leaves ``run-N`` directories in the point's folder),
then record it done or failed with the reason. ``skctl sweep worker`` (what one pod of a
Kubernetes Indexed Job would run) and every worker thread of ``skctl sweep run`` call this
same function, so the two cannot drift apart. The runner is passed in: the orchestration
here is plain logic, tested with a fake runner, while the real runner (``skctl``'s, which
drives environments and Simulations) is exercised by running a sweep.

A failed point never stops the others; rerunning the command skips done points and runs
the rest again (failed ones, and ones left running by an interrupted sweep). Ctrl-C stops a
sweep cleanly: queued points never start, running ones are told to stop (``PointJob.stop``;
the runner takes its environment down) and go back to pending, and the command ends.
"""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from simkube.core.errors import ConfigError, SimkubeError
from simkube.sweep import manifest
from simkube.sweep.manifest import PointRecord, PointState
from simkube.sweep.points import Point
from simkube.sweep.spec import Sweep

POINTS_DIR = "points"
RUN_LOCK = ".run.lock"
MAX_ENV_NAME = 32
WAIT_SLICE_S = 0.2  # how soon the main thread notices Ctrl-C while points run


@dataclass(frozen=True, kw_only=True)
class PointJob:
    """What a runner needs to run one point."""

    sweep: Sweep
    point: Point
    folder: Path  # DIR/points/<index>: inputs the runner writes, and run-N results
    # Set when the sweep is interrupted: the runner stops the point (PointInterruptedError).
    stop: threading.Event = field(default_factory=threading.Event)

    @property
    def env_name(self) -> str:
        """The point's own environment: ``sw-<sweep>-<index>``, cut to an environment name."""
        suffix = f"-{self.point.index}"
        return f"sw-{self.sweep.name}"[:MAX_ENV_NAME - len(suffix)].rstrip("-") + suffix

    @property
    def simulation(self) -> str:
        return f"{self.sweep.name}-p{self.point.index}"


class PointInterruptedError(SimkubeError):
    """The runner stopped its point because the sweep was interrupted (not a failure)."""


PointRunner = Callable[[PointJob], None]
"""Runs a point and leaves ``run-1`` … ``run-R`` in ``job.folder``; raises on failure."""


def folder_of(output: Path, index: int) -> Path:
    return output / POINTS_DIR / str(index)


def prepare(sweep: Sweep, points: Sequence[Point], *, output: Path) -> manifest.Manifest:
    return manifest.prepare(output, sweep=sweep.name, file=sweep.path, digest=sweep.digest,
                            labels=[point.label for point in points])


def execute_point(*, sweep: Sweep, point: Point, output: Path, runner: PointRunner,
                  stop: threading.Event | None = None) -> PointRecord:
    """Run ``point`` unless it is done; its final record (done or failed, with the reason;
    pending again when ``stop`` was set and the runner gave up for it)."""
    current = manifest.read(output)
    if current is not None and current.points[point.index].state is PointState.DONE:
        return current.points[point.index]
    folder = folder_of(output, point.index)
    attempts = current.points[point.index].attempts if current else 0
    manifest.update(output, point.index, state=PointState.RUNNING, reason="",
                    attempts=attempts + 1, started_at=manifest.now(), finished_at="")
    shutil.rmtree(folder, ignore_errors=True)  # what an earlier attempt left is not this one's
    try:
        runner(PointJob(sweep=sweep, point=point, folder=folder,
                        stop=stop or threading.Event()))
        _check_runs(folder, expected=sweep.base.repetitions)
    except PointInterruptedError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        return manifest.update(output, point.index, state=PointState.PENDING,
                               reason=exc.message, finished_at=manifest.now())
    except Exception as exc:  # any failure is the point's, recorded, not fatal
        reason = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        return manifest.update(output, point.index, state=PointState.FAILED, reason=reason,
                               finished_at=manifest.now())
    return manifest.update(output, point.index, state=PointState.DONE,
                           results=str(folder.relative_to(output)), finished_at=manifest.now())


def _check_runs(folder: Path, *, expected: int) -> None:
    """A runner that returned without every run's results did not run the point."""
    runs = [path for path in folder.glob("run-*") if path.is_dir()]
    if len(runs) < expected:
        raise ConfigError(f"the point left {len(runs)} of {expected} runs' results in {folder}")


@contextlib.contextmanager
def _only_run(output: Path) -> Iterator[None]:
    """One ``sweep run`` per directory: two would run the same points twice."""
    output.mkdir(parents=True, exist_ok=True)
    with (output / RUN_LOCK).open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(f"another 'skctl sweep run' is using {output}") from None
        yield


def run_sweep(*, sweep: Sweep, points: Sequence[Point], output: Path, runner: PointRunner,
              parallel: int = 1,
              on_change: Callable[[PointRecord], None] | None = None,
              on_interrupt: Callable[[int], None] | None = None) -> manifest.Manifest:
    """Every point not yet done, ``parallel`` at a time; the manifest at the end.
    ``on_change`` hears each point start and end (from the worker threads). On Ctrl-C the
    queued points are dropped, the running ones stopped, and ``KeyboardInterrupt`` raised
    once they are back to pending (``on_interrupt`` hears how many are being stopped)."""
    with _only_run(output):
        state = prepare(sweep, points, output=output)
        todo = [point for point in points
                if state.points[point.index].state is not PointState.DONE]

        stop = threading.Event()
        busy: set[int] = set()

        def one(point: Point) -> None:
            if stop.is_set():
                return
            busy.add(point.index)
            if on_change is not None:
                on_change(PointRecord(index=point.index, label=point.label,
                                      state=PointState.RUNNING))
            record = execute_point(sweep=sweep, point=point, output=output, runner=runner,
                                   stop=stop)
            busy.discard(point.index)
            if on_change is not None:
                on_change(record)

        with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="sweep") as pool:
            futures: list[Future[None]] = []
            try:  # submitting too: point 0 may already run, and Ctrl-C come, meanwhile
                for point in todo:
                    futures.append(pool.submit(one, point))
                _wait_all(futures)
            except KeyboardInterrupt:
                stop.set()
                for future in futures:
                    future.cancel()
                if on_interrupt is not None:
                    on_interrupt(len(busy))
                pool.shutdown(wait=True)
                raise
        final = manifest.read(output)
        assert final is not None  # noqa: S101  # prepare wrote it
        return final


def _wait_all(futures: list[Future[None]]) -> None:
    """Wait for every point, in slices: Ctrl-C's SIGINT may reach a worker thread, and
    Python raises KeyboardInterrupt only in the main thread once it runs again, so a main
    thread blocked on one point's result would notice it only when that point ended."""
    pending = set(futures)
    while pending:
        _done, pending = wait(pending, timeout=WAIT_SLICE_S, return_when=FIRST_EXCEPTION)
        for future in _done:
            future.result()  # a point's unexpected error ends the sweep here

