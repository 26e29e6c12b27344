"""The dsb-scaling sample replayed at speed 10 as a Simulation, with the real CA: the node
groups rise while the load grows, and fall back to their minimum once it goes.

The trace's load grows from 27 to 52 replicas and ends at 42, 18 wall seconds after its last
decrease began; the results cover the replay itself, so the rise is read from them and the
fall from the cluster after the run (sk-ctrl deletes the run's objects when it ends, and CA
removes the nodes they leave empty).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from simkube.env.services.commands import DEFAULT_NODE_GROUPS
from simkube.results import load_run
from tests.autoscaler.conftest import FAST_SCALE_DOWN, Sampler, connect
from tests.conftest import skctl
from tests.support.kube import eventually
from tests.support.scaling import node_paths

pytestmark = pytest.mark.autoscaler
TRACE = Path(__file__).parents[1] / "data" / "simkube" / "dsb-scaling.sktrace"


async def test_dsb_scaling_at_speed_ten_rises_and_falls(make_env: Any) -> None:
    config = yaml.safe_load(DEFAULT_NODE_GROUPS.read_text())
    groups = config["nodeGroups"]
    minimum = {entry["id"]: entry["minSize"] for entry in groups}
    for entry in groups:  # trace time: sk-cloudprov divides them by the run's speed
        entry["provisioning"] = {"delay": "60s", "readyAfter": "10s"}
    env = make_env(groups, *FAST_SCALE_DOWN)
    env.mark()
    await asyncio.to_thread(
        skctl, "run", "--env", env.name, "--name", "dsb", "--trace", str(TRACE), "--speed",
        "10", "--repetitions", "2", "--seed", "11", "--wait", "--timeout", "900", timeout=1000)
    status = json.loads(skctl("status", "dsb", "--env", env.name, "--json").stdout)["status"]
    assert status["state"] == "Finished"
    run = load_run(Path(status["resultsDir"]) / "run-1")
    again = load_run(Path(status["resultsDir"]) / "run-2")
    # One seed, one sequence: the node groups grow the same way in both repetitions.
    assert node_paths(run.scaling) == node_paths(again.scaling), (run.scaling, again.scaling)
    totals = [row.nodes_total for row in run.timeline]
    assert max(totals) > totals[0], f"no group grew: {totals}"
    autoscaled = [row for row in run.scaling if row.source == "autoscaler"]
    assert any(row.delta > 0 for row in autoscaled), run.scaling
    async with await connect(env) as api:
        sampler = Sampler(api)

        async def at_minimum() -> bool:
            return await sampler.counts() == minimum
        await eventually(at_minimum, timeout=300, what=f"every group back at {minimum}")
    assert len(env.deletions()) == max(totals) - sum(minimum.values())
