"""The recorder around a run: started, stopped, its failures reported and never raised;
earlier results of a reused Simulation name set aside, never appended to."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import cast

import pytest

from simkube.core.kubeapi import KubeClient
from simkube.core.simtime import TimeScale
from simkube.ctrl.recording import (
    RunRecorder,
    driver_summary,
    set_aside_previous,
    unstarted_warning,
)
from simkube.gen.simkube.driver.v1 import driver_pb2
from tests.support.fake_api import FakeApi

pytestmark = pytest.mark.unit


def test_an_older_namesakes_results_move_aside(tmp_path: Path) -> None:
    old = tmp_path / "shop" / "run-2"
    old.mkdir(parents=True)
    (old / "summary.json").write_text("{}")
    moved = set_aside_previous(tmp_path / "shop")
    assert moved is not None
    assert moved.name.startswith("shop.previous-")
    assert (moved / "run-2" / "summary.json").read_text() == "{}"
    assert not (tmp_path / "shop").exists()


def test_nothing_to_set_aside(tmp_path: Path) -> None:
    assert set_aside_previous(tmp_path / "absent") is None
    (tmp_path / "empty").mkdir()
    assert set_aside_previous(tmp_path / "empty") is None
    assert (tmp_path / "empty").is_dir()


def test_a_failed_rename_is_not_an_error(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "shop" / "run-1").mkdir(parents=True)

    def refuse(self: Path, target: Path) -> Path:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "rename", refuse)
    assert set_aside_previous(tmp_path / "shop") is None
    assert (tmp_path / "shop" / "run-1").is_dir()


def recorder(api: FakeApi, run_dir: Path) -> RunRecorder:
    return RunRecorder(kube=cast(KubeClient, api), run_dir=run_dir, simulation="shop", run=1,
                       namespace_prefix="virtual", groups={"small": 0.1},
                       trace_clock=lambda: 0.0, scale=TimeScale(10.0), timers={"appliedTo": "x"})


async def test_a_run_recorded_from_start_to_stop(tmp_path: Path) -> None:
    run = recorder(FakeApi(), tmp_path / "run-1")
    assert await run.start()
    final = driver_pb2.SimulationProgress(events_applied=7, events_total=9, objects_failed=1)
    summary = await run.stop(state="Finished", driver=driver_summary(final))
    assert summary is not None
    assert (summary.state, summary.driver.events_applied, summary.driver.objects_failed) == (
        "Finished", 7, 1)
    assert summary.timers == {"appliedTo": "x"}
    assert (tmp_path / "run-1" / "summary.json").is_file()
    assert unstarted_warning(summary) is None
    assert await run.stop(state="Finished", driver={}) is None  # stopped once
    assert run.error is None


async def test_a_recorder_that_cannot_start_says_why(tmp_path: Path) -> None:
    (tmp_path / "blocked").write_text("")
    run = recorder(FakeApi(), tmp_path / "blocked" / "run-1")
    assert not await run.start()
    assert (run.error or "").startswith("the results recorder did not start")
    assert await run.stop(state="Failed", driver={}) is None


async def test_a_recorder_that_cannot_stop_says_why(tmp_path: Path) -> None:
    run = recorder(FakeApi(), tmp_path / "run-1")  # never started: its stop refuses
    assert await run.stop(state="Finished", driver={}) is None
    assert (run.error or "").startswith("the results recorder did not stop cleanly")


async def test_pods_bound_but_never_started_are_warned_about(tmp_path: Path) -> None:
    run = recorder(FakeApi(), tmp_path / "run-1")
    await run.start()
    summary = await run.stop(state="Finished", driver={})
    assert summary is not None
    pods = replace(summary.pods, bound_never_started=4,
                   bound_never_started_pods=("a/p1", "a/p2", "a/p3", "a/p4"))
    warning = unstarted_warning(replace(summary, pods=pods))
    assert warning == ("4 pod(s) were bound to a node but never started (a/p1, a/p2, a/p3, "
                       "...): the simulator's fault, not the workload's; see the report")


def test_the_drivers_summary() -> None:
    assert driver_summary(None) == {}
    final = driver_pb2.SimulationProgress(events_applied=3, events_total=4, lag_p99_ms=2.5)
    assert driver_summary(final) == {"events_applied": 3, "events_total": 4,
                                     "objects_failed": 0, "lag_p99_ms": 2.5,
                                     "held_seconds": 0.0}
    held = driver_pb2.SimulationProgress(trace_time_ms=90_000, wall_time_ms=12_000,
                                         paused_ms=2_000, held_ms=1_500)
    summary = driver_summary(held)
    assert (summary["achieved_speed"], summary["held_seconds"]) == (9.0, 1.5)
