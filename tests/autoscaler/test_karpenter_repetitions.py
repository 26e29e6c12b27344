"""The dsb-scaling sample replayed at speed 10 with Karpenter, twice under one seed: the
NodePools grow the same way in both repetitions (#25's determinism with Karpenter).

Karpenter needs no binary of the user's (it is built from the Go module proxy), but the run
is long and timing-sensitive like the rest of this tier, so it runs here rather than in
``make test``. Each repetition restarts Karpenter afresh, holds the run's clock for its
provisioner passes, and registers nodes on the run's pace (docs/simulated-time.md).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from simkube.env.services.commands import DEFAULT_NODE_GROUPS
from simkube.results import load_run
from tests.conftest import skctl
from tests.support.scaling import node_paths

pytestmark = pytest.mark.autoscaler
TRACE = Path(__file__).parents[1] / "data" / "simkube" / "dsb-scaling.sktrace"


def test_two_seeded_repetitions_with_karpenter_scale_the_same_way(tmp_path: Path) -> None:
    config = yaml.safe_load(DEFAULT_NODE_GROUPS.read_text())
    for entry in config["nodeGroups"]:  # trace time: divided by the run's speed
        entry["provisioning"] = {"delay": "60s", "readyAfter": "10s"}
    groups = tmp_path / "groups.yaml"
    groups.write_text(yaml.safe_dump(config))
    name = f"karp-seed-{os.getpid()}"
    skctl("env", "up", "--name", name, "--autoscaler", "karpenter", "--node-groups",
          str(groups), "--consolidate-after", "30s")
    try:
        skctl("run", "--env", name, "--name", "dsb", "--trace", str(TRACE), "--speed", "10",
              "--repetitions", "2", "--seed", "11", "--wait", "--timeout", "900",
              timeout=1000)
        status = json.loads(skctl("status", "dsb", "--env", name, "--json").stdout)["status"]
        assert status["state"] == "Finished"
        assert status["holding"].startswith("on:"), status["holding"]
        run = load_run(Path(status["resultsDir"]) / "run-1")
        again = load_run(Path(status["resultsDir"]) / "run-2")
        assert any(row.delta > 0 for row in run.scaling if row.source == "nodes"), run.scaling
        # One seed, one sequence: the groups grow and shrink the same way in both.
        assert node_paths(run.scaling) == node_paths(again.scaling), (run.scaling,
                                                                      again.scaling)
    finally:
        skctl("env", "down", "--name", name, check=False)
