"""A recorded workload replayed at speed 1, 10 and 20 says the same, in trace time.

With every timer in trace time and divided by the run's speed (docs/simulated-time.md), the
speed a user picks must not change the answer: the nodes-over-time curve and the node hours
of a replay at speed 10 are within 10 % of the replay at speed 1. Both Simulations use one seed, so
sk-cloudprov draws the same provisioning delays for both.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from simkube.env.services.commands import DEFAULT_NODE_GROUPS
from simkube.report import curve_difference
from simkube.results import load_run
from tests.conftest import skctl

pytestmark = pytest.mark.autoscaler
TRACE = Path(__file__).parents[1] / "data" / "recorded" / "fidelity-3min.trace"
TIMERS = ("--timer", "clusterAutoscaler.scale-down-unneeded-time=1m",
          "--timer", "clusterAutoscaler.scale-down-delay-after-add=1m")


async def replay(env_name: str, *, speed: int) -> Any:
    name = f"speed-{speed}"
    await asyncio.to_thread(
        skctl, "run", "--env", env_name, "--name", name, "--trace", str(TRACE), "--speed",
        str(speed), "--duration", "180s", "--seed", "5", *TIMERS, "--wait", "--timeout", "600",
        timeout=700)
    status = json.loads(skctl("status", name, "--env", env_name, "--json").stdout)["status"]
    assert status["state"] == "Finished", status
    return load_run(Path(status["resultsDir"]) / "run-1")


async def test_faster_replays_tell_what_speed_one_tells(make_env: Any) -> None:
    groups = yaml.safe_load(DEFAULT_NODE_GROUPS.read_text())["nodeGroups"]
    env = make_env(groups)
    slow = await replay(env.name, speed=1)
    totals = [row.nodes_total for row in slow.timeline]
    assert max(totals) > totals[0], f"the workload needed no new node: {totals}"
    missed = []
    for speed in (10, 20):  # both measured before judging, so a failure shows both figures
        fast = await replay(env.name, speed=speed)
        difference = curve_difference(slow, fast, column="nodes_total")
        hours = fast.summary.node_hours / slow.summary.node_hours - 1
        print(f"speed {speed} against speed 1: nodes curve {difference}, "
              f"node hours {hours:+.1%}")
        if difference.relative > 0.10 or abs(hours) > 0.10:
            missed.append((speed, difference, f"{hours:+.1%}"))
    assert not missed, missed
