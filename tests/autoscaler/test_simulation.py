"""The dsb-scaling sample replayed at speed 10 as a Simulation, with the real CA: the node
groups rise while the load grows and fall after it goes (DESIGN.md §7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from simkube.env.services import DEFAULT_NODE_GROUPS
from simkube.results import load_run
from tests.autoscaler.conftest import FAST_SCALE_DOWN
from tests.conftest import skctl

pytestmark = pytest.mark.autoscaler
TRACE = Path(__file__).parents[1] / "data" / "simkube" / "dsb-scaling.sktrace"


def test_dsb_scaling_at_speed_ten_rises_and_falls(make_env: Any, tmp_path: Path) -> None:
    groups = yaml.safe_load(DEFAULT_NODE_GROUPS.read_text())["nodeGroups"]
    for entry in groups:
        entry["provisioning"] = {"delay": "6s", "readyAfter": "1s"}  # 60 s and 10 s at 10x
    env = make_env(groups, *FAST_SCALE_DOWN)
    skctl("run", "--env", env.name, "--name", "dsb", "--trace", str(TRACE), "--speed", "10",
          "--wait", "--timeout", "600", timeout=700)
    status = json.loads(skctl("status", "dsb", "--env", env.name, "--json").stdout)["status"]
    assert status["state"] == "Finished"
    run = load_run(Path(status["resultsDir"]) / "run-1")
    totals = [row.nodes_total for row in run.timeline]
    start, peak = totals[0], max(totals)
    after_peak = totals[totals.index(peak):]
    assert peak > start, f"no group grew: {totals}"
    assert min(after_peak) < peak, f"no group shrank after its peak: {totals}"
    autoscaled = [row for row in run.scaling if row.source == "autoscaler"]
    assert any(row.delta > 0 for row in autoscaled), run.scaling
    assert any(row.delta < 0 for row in autoscaled), run.scaling
