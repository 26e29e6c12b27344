"""Two seeded repetitions of one Simulation with Karpenter scale the same way.

A sweep or a study compares runs that differ in one setting; that only means something if
runs that differ in nothing give the same answer. sk-ctrl restarts Karpenter afresh for every
run (nothing it remembers leaks into the next) and sk-cloudprov's provisioning draws follow
the seed, so the second repetition must launch the same nodes in the same order as the first.
The autoscaler tier checks the same with Cluster Autoscaler (tests/autoscaler/test_simulation.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from simkube.results import load_run
from tests.conftest import SimEnv, running_env, skctl
from tests.support.scaling import node_paths

pytestmark = pytest.mark.e2e
TRACE = Path(__file__).parents[1] / "data" / "recorded" / "fidelity-3min.trace"


@pytest.fixture(scope="module")
def karpenter_env() -> Iterator[SimEnv]:
    with running_env(variable="SIMKUBE_KARPENTER_E2E_ENV", prefix="e2e-karp",
                     up_args=("--services", "--autoscaler", "karpenter")) as env:
        yield env


def test_two_seeded_repetitions_launch_the_same_nodes(karpenter_env: SimEnv) -> None:
    skctl("run", "--env", karpenter_env.name, "--name", "karp-twice", "--trace", str(TRACE),
          "--speed", "10", "--duration", "240s", "--repetitions", "2", "--seed", "11", "--wait",
          "--timeout", "600",
          timeout=700)
    status = json.loads(skctl("status", "karp-twice", "--env", karpenter_env.name,
                              "--json").stdout)["status"]
    assert status["state"] == "Finished", status
    first, second = (load_run(Path(status["resultsDir"]) / f"run-{n}") for n in (1, 2))
    paths = node_paths(first.scaling)
    assert any(len(path) > 1 and max(path) > path[0] for path in paths.values()), (
        f"Karpenter launched nothing: {first.scaling}")
    assert node_paths(second.scaling) == paths, (first.scaling, second.scaling)
    launched = [[row.group for row in run.scaling if row.reason == "Launched"]
                for run in (first, second)]
    assert launched[0] == launched[1]
