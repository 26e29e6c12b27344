"""A run's timers reach the real scheduler and controller-manager, and are taken back.

``env.retiming`` restarts the components that read their timers at start with the values
divided by the run's speed (scheduler backoffs in its configuration file, the unschedulable
flush and the controller-manager periods as flags), and ``restore`` puts the command lines
``env up`` gave back. The processes must come back healthy each time.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from simkube.core.simtime import TimerSettings, TimeScale
from simkube.env import retiming
from simkube.env.paths import env_dir
from tests.conftest import skctl

pytestmark = pytest.mark.integration


def argv_of(name: str) -> dict[str, list[str]]:
    state = json.loads((env_dir(name) / "state.json").read_text())
    return {c["name"]: c["argv"] for c in state["components"]}


def test_a_run_retimes_the_control_plane_and_restore_undoes_it() -> None:
    name = f"retime-{os.getpid()}"
    skctl("env", "up", "--name", name)
    try:
        before = argv_of(name)
        settings = TimerSettings(values={"scheduler.podMaxBackoffSeconds": 40_000})
        restarted = retiming.retime(name, scale=TimeScale(20), settings=settings)
        assert restarted == ["kube-controller-manager", "kube-scheduler"]
        during = argv_of(name)
        # 15 s ÷ 20 less the HPA's own reconcile (12 ms) that the period waits for: 15,012 ÷ 20 - 12
        assert "--horizontal-pod-autoscaler-sync-period=739ms" in \
            during["kube-controller-manager"]
        scheduler = during["kube-scheduler"]
        assert "--pod-max-in-unschedulable-pods-duration=15000ms" in scheduler
        config_path = next(a for a in scheduler if a.startswith("--config=")).split("=", 1)[1]
        config = yaml.safe_load(Path(config_path).read_text())
        # 1 s ÷ 20 is below the scheduler's minimum; 40 s ÷ 20 = 2 s.
        assert (config["podInitialBackoffSeconds"], config["podMaxBackoffSeconds"]) == (1, 2)
        assert config["leaderElection"] == {"leaderElect": False}  # the env's own settings kept
        assert retiming.retime(name, scale=TimeScale(20),
                               settings=settings) == []  # nothing to change
        assert json.loads(skctl("env", "status", "--name", name, "--json").stdout)["healthy"]
        assert sorted(retiming.restore(name)) == ["kube-controller-manager", "kube-scheduler"]
        assert argv_of(name) == before
        assert retiming.restore(name) == []
        assert json.loads(skctl("env", "status", "--name", name, "--json").stdout)["healthy"]
    finally:
        skctl("env", "down", "--name", name, check=False)
