"""``skctl sweep run`` on this machine, with the per-point runner replaced: the lines it
prints, and Ctrl-C turned into one clear ending with exit code 130."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from click.testing import CliRunner

from simkube.skctl import sweep_local
from simkube.skctl.main import cli
from simkube.skctl.sweep_local import SweepInterruptedError
from simkube.sweep import manifest
from simkube.sweep.manifest import PointState
from simkube.sweep.running import PointInterruptedError, PointJob
from tests.support.signals import default_sigint  # noqa: F401  # autouse
from tests.unit.sweep.files import write_sweep
from tests.unit.sweep.results import write_run

pytestmark = pytest.mark.unit
AXES = [{"caFlag": "--expander", "values": ["least-waste", "price", "random"]}]


def test_every_point_done_is_said_and_the_report_named(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def runner(job: PointJob) -> None:
        for run in (1, 2):
            write_run(job.folder / f"run-{run}", cost=1.0, node_hours=1.0, p90=5.0)

    monkeypatch.setattr(sweep_local, "run_point", runner)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["sweep", "run", str(write_sweep(tmp_path, axes=AXES)),
                                      "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert f"3 of 3 points done (0 from before); report: skctl sweep report {out}" in (
        result.output)


def test_ctrl_c_ends_with_how_to_resume(tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def runner(job: PointJob) -> None:
        if job.point.index == 0:  # one Ctrl-C, while points 0 and 1 run
            os.kill(os.getpid(), signal.SIGINT)
        job.stop.wait(timeout=10)
        raise PointInterruptedError("interrupted; rerun the sweep to run it")

    monkeypatch.setattr(sweep_local, "run_point", runner)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["sweep", "run", str(write_sweep(tmp_path, axes=AXES)),
                                      "--output", str(out), "--parallel", "2"])
    assert isinstance(result.exception, SweepInterruptedError)
    assert result.exception.exit_code == 130
    assert result.exception.message == (f"sweep interrupted: 0 point(s) done in this run, 0 "
                                        f"before; the manifest is {out / 'manifest.json'}")
    after = manifest.read(out)
    assert after is not None
    assert {record.state for record in after.points.values()} == {PointState.PENDING}
