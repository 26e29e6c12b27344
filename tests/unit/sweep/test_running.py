"""Resuming and recording, with the per-point runner replaced by a fake: pure logic."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from simkube.core.errors import ConfigError, SimkubeError
from simkube.sweep import manifest
from simkube.sweep.manifest import PointState
from simkube.sweep.points import build_points
from simkube.sweep.running import (
    PointInterruptedError,
    PointJob,
    execute_point,
    prepare,
    run_sweep,
)
from simkube.sweep.spec import Sweep, load_sweep
from tests.support.signals import default_sigint  # noqa: F401  # autouse
from tests.unit.sweep.files import write_sweep
from tests.unit.sweep.results import write_run

pytestmark = pytest.mark.unit
AXES = [{"caFlag": "--expander", "values": ["least-waste", "price", "random"]}]


class FakeRunner:
    """Leaves run-1..run-R for every point, except the ones told to fail."""

    def __init__(self, *, fail: set[int] = frozenset()) -> None:  # type: ignore[assignment]
        self.fail = set(fail)
        self.ran: list[int] = []
        self.jobs: list[PointJob] = []
        self.lock = threading.Lock()

    def __call__(self, job: PointJob) -> None:
        with self.lock:
            self.ran.append(job.point.index)
            self.jobs.append(job)
        if job.point.index in self.fail:
            raise SimkubeError(f"environment for point {job.point.index} did not start")
        for run in range(1, job.sweep.base.repetitions + 1):
            write_run(job.folder / f"run-{run}", cost=1.0 + job.point.index, node_hours=2.0,
                      p90=10.0)


def _sweep(tmp_path: Path) -> Sweep:
    return load_sweep(write_sweep(tmp_path, axes=AXES))


def test_every_point_runs_and_is_recorded_done(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path)
    runner = FakeRunner()
    final = run_sweep(sweep=sweep, points=build_points(sweep), output=tmp_path / "out",
                      runner=runner, parallel=2)
    assert sorted(runner.ran) == [0, 1, 2]
    assert {r.state for r in final.points.values()} == {PointState.DONE}
    assert final.points[1].results == "points/1"
    assert (tmp_path / "out" / "points" / "1" / "run-2" / "summary.json").is_file()
    assert final.points[1].label == "--expander=price"
    assert final.points[1].attempts == 1
    assert final.digest == sweep.digest


def test_a_failed_point_is_recorded_and_does_not_stop_the_others(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path)
    seen: list[tuple[int, PointState]] = []
    final = run_sweep(sweep=sweep, points=build_points(sweep), output=tmp_path / "out",
                      runner=FakeRunner(fail={1}),
                      on_change=lambda record: seen.append((record.index, record.state)))
    assert final.points[1].state is PointState.FAILED
    assert final.points[1].reason == "environment for point 1 did not start"
    assert [final.points[i].state for i in (0, 2)] == [PointState.DONE, PointState.DONE]
    assert seen == [(0, PointState.RUNNING), (0, PointState.DONE), (1, PointState.RUNNING),
                    (1, PointState.FAILED), (2, PointState.RUNNING), (2, PointState.DONE)]


def test_rerunning_skips_done_points_and_retries_the_failed(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path)
    points = build_points(sweep)
    output = tmp_path / "out"
    run_sweep(sweep=sweep, points=points, output=output, runner=FakeRunner(fail={1, 2}))
    again = FakeRunner()
    final = run_sweep(sweep=sweep, points=points, output=output, runner=again)
    assert sorted(again.ran) == [1, 2]
    assert {r.state for r in final.points.values()} == {PointState.DONE}
    assert final.points[0].attempts == 1
    assert final.points[1].attempts == 2
    assert final.points[1].reason == ""


def test_a_point_left_running_by_an_interrupted_sweep_runs_again(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path)
    points = build_points(sweep)
    output = tmp_path / "out"
    prepare(sweep, points, output=output)
    manifest.update(output, 0, state=PointState.RUNNING, attempts=1)
    (output / "points" / "0" / "run-1").mkdir(parents=True)  # half a run
    runner = FakeRunner()
    final = run_sweep(sweep=sweep, points=points, output=output, runner=runner)
    assert sorted(runner.ran) == [0, 1, 2]
    assert final.points[0].state is PointState.DONE
    assert final.points[0].attempts == 2


def test_a_runner_that_leaves_too_few_runs_failed_its_point(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path)
    points = build_points(sweep)
    output = tmp_path / "out"
    prepare(sweep, points, output=output)
    record = execute_point(sweep=sweep, point=points[0], output=output,
                           runner=lambda job: None)
    assert record.state is PointState.FAILED
    assert record.reason == (f"the point left 0 of 2 runs' results in "
                             f"{output / 'points' / '0'}")


def test_an_unexpected_exception_is_recorded_with_its_type(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path)
    points = build_points(sweep)
    output = tmp_path / "out"
    prepare(sweep, points, output=output)

    def broken(job: PointJob) -> None:
        raise OSError("disk full")

    record = execute_point(sweep=sweep, point=points[2], output=output, runner=broken)
    assert (record.state, record.reason) == (PointState.FAILED, "OSError: disk full")


def test_a_changed_sweep_file_is_refused_against_its_directory(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path)
    output = tmp_path / "out"
    run_sweep(sweep=sweep, points=build_points(sweep), output=output, runner=FakeRunner())
    changed = load_sweep(write_sweep(tmp_path, axes=[{**AXES[0], "values": ["price"]}]))
    runner = FakeRunner()
    with pytest.raises(ConfigError) as caught:
        run_sweep(sweep=changed, points=build_points(changed), output=output, runner=runner)
    assert caught.value.message.startswith(f"{output} holds results of another version of "
                                           f"the sweep file {changed.path} (SHA-256 ")
    assert runner.ran == []
    kept = manifest.read(output)
    assert kept is not None
    assert kept.digest == sweep.digest


def test_the_worker_path_skips_a_done_point(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path)
    points = build_points(sweep)
    output = tmp_path / "out"
    prepare(sweep, points, output=output)
    first = FakeRunner()
    execute_point(sweep=sweep, point=points[1], output=output, runner=first)
    second = FakeRunner()
    record = execute_point(sweep=sweep, point=points[1], output=output, runner=second)
    assert (record.state, second.ran) == (PointState.DONE, [])


def test_jobs_name_their_environment_and_simulation(tmp_path: Path) -> None:
    sweep = load_sweep(write_sweep(tmp_path, axes=AXES,
                                   name="a-rather-long-sweep-name-for-environment"))
    runner = FakeRunner()
    run_sweep(sweep=sweep, points=build_points(sweep), output=tmp_path / "out", runner=runner)
    job = next(job for job in runner.jobs if job.point.index == 2)
    assert job.env_name == "sw-a-rather-long-sweep-name-fo-2"
    assert len(job.env_name) <= 32
    assert job.simulation == "a-rather-long-sweep-name-for-environment-p2"


def test_the_manifest_is_json_with_every_point(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path)
    output = tmp_path / "out"
    prepare(sweep, build_points(sweep), output=output)
    read = manifest.read(output)
    assert read is not None
    assert [r.state for r in read.points.values()] == [PointState.PENDING] * 3
    assert not list(output.glob(".manifest.json.tmp"))


def test_ctrl_c_stops_the_running_point_and_starts_no_other(tmp_path: Path) -> None:
    """SIGINT while point 0 runs: point 0 is told to stop and goes back to pending, the
    queued points never start, and the interrupt reaches the caller."""
    sweep = _sweep(tmp_path)
    ran: list[int] = []
    stopping: list[int] = []

    def runner(job: PointJob) -> None:
        ran.append(job.point.index)
        os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C does, as the point runs
        if not job.stop.wait(timeout=10):
            raise AssertionError("the point was never told to stop")
        raise PointInterruptedError("interrupted; rerun the sweep to run it")

    with pytest.raises(KeyboardInterrupt):
        run_sweep(sweep=sweep, points=build_points(sweep), output=tmp_path / "out",
                  runner=runner, parallel=1, on_interrupt=stopping.append)
    assert ran == [0]
    assert stopping == [1]
    after = manifest.read(tmp_path / "out")
    assert after is not None
    assert [r.state for r in after.points.values()] == [PointState.PENDING] * 3
    assert after.points[0].reason == "interrupted; rerun the sweep to run it"
    assert (after.points[0].attempts, after.points[1].attempts) == (1, 0)
    assert not (tmp_path / "out" / "points" / "0").exists()
    # Resuming runs all three, the interrupted one included.
    resumed = FakeRunner()
    final = run_sweep(sweep=sweep, points=build_points(sweep), output=tmp_path / "out",
                      runner=resumed)
    assert resumed.ran == [0, 1, 2]
    assert {r.state for r in final.points.values()} == {PointState.DONE}
