"""A Simulation at speed 30: its timers reach the control plane, floors are named, all is undone.

The user asks for a 10 s graceful-termination limit for Cluster Autoscaler (trace time); at
speed 30 CA cannot take less than one whole wall second, which stretches it three times.
``skctl run`` says so before the run, the Simulation's status and the run's summary record
asked, given and effective values, the report repeats the warning, and when the Simulation
ends every component of the environment is back on the command line ``env up`` gave it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simkube.env.paths import env_dir
from tests.conftest import SimEnv, skctl

pytestmark = pytest.mark.e2e
TRACE = Path(__file__).parents[1] / "data" / "simkube" / "dsb-scaling.sktrace"
FLOOR = "at speed 30, clusterAutoscaler.max-graceful-termination-sec 10.0s is 30.0s of trace time"


def command_lines(name: str) -> dict[str, tuple[list[str], list[str]]]:
    state = json.loads((env_dir(name) / "state.json").read_text())
    return {c["name"]: (c["argv"], c.get("base_argv") or []) for c in state["components"]}


def test_speed_30_warns_records_and_restores(services_env: SimEnv) -> None:
    before = command_lines(services_env.name)
    run = skctl("run", "--env", services_env.name, "--name", "timed", "--trace", str(TRACE),
                "--speed", "30", "--duration", "2m", "--seed", "7",
                "--timer", "clusterAutoscaler.scan-interval=15s",
                "--timer", "clusterAutoscaler.max-graceful-termination-sec=10s", "--wait",
                "--timeout", "300", timeout=400)
    assert f"WARNING: {FLOOR}" in " ".join(run.stderr.split())
    status = json.loads(skctl("status", "timed", "--env", services_env.name,
                              "--json").stdout)["status"]
    assert status["state"] == "Finished"
    timers = status["timers"]
    assert timers["appliedTo"].startswith(f"local environment {services_env.name!r}")
    assert any(FLOOR in warning for warning in timers["warnings"])
    values = {v["timer"]: v for v in timers["values"]}
    assert values["clusterAutoscaler.scan-interval"]["wallTime"] == "500ms"
    assert values["clusterAutoscaler.max-graceful-termination-sec"]["effectiveTraceTime"] == "30.0s"
    # the scheduler's queue keeps the run's clock: its 1 s backoff is no longer floored
    backoff = values["scheduler.podInitialBackoffSeconds"]
    assert (backoff["effectiveTraceTime"], backoff["floored"]) == ("1.0s", False)
    assert values["nodeGroups.small.delay"]["wallTime"] == "2.0s"  # 60 s of trace ÷ 30
    summary = json.loads((Path(status["resultsDir"]) / "run-1" / "summary.json").read_text())
    assert summary["timers"]["warnings"] == timers["warnings"]
    shown = " ".join(skctl("status", "timed", "--env", services_env.name).stdout.split())
    assert f"warning: {FLOOR}" in shown
    assert f"timers local environment {services_env.name!r}" in shown
    report = skctl("report", "timed", "--env", services_env.name)
    assert FLOOR in " ".join(report.stdout.split())
    assert command_lines(services_env.name) == before  # restored, nothing left mid-change
