"""Replay fidelity: the same trace replayed twice gives the same curves within 5%.

Two repetitions of one Simulation replay the DeathStarBench trace through sk-ctrl, sk-driver,
the real scheduler and KWOK; the recorder's timelines of both runs are compared on the trace
time axis. The measured differences are printed (``-s``) and recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simkube.report import curve_difference
from simkube.results import load_run
from tests.conftest import SimEnv, skctl

pytestmark = pytest.mark.e2e
TRACE = Path(__file__).parents[1] / "data" / "simkube" / "dsb-scaling.sktrace"


def test_two_replays_give_the_same_curves(services_env: SimEnv) -> None:
    skctl("run", "--env", services_env.name, "--name", "fidelity", "--trace", str(TRACE),
          "--speed", "20", "--repetitions", "2", "--wait", "--timeout", "500", timeout=600)
    status = json.loads(skctl("status", "fidelity", "--env", services_env.name,
                              "--json").stdout)["status"]
    assert status["state"] == "Finished"
    assert status["completedRuns"] == 2
    results = Path(status["resultsDir"])
    first, second = load_run(results / "run-1"), load_run(results / "run-2")
    assert max(row.pods_running for row in first.timeline) > 0
    for column in ("nodes_total", "pods_running"):
        difference = curve_difference(first, second, column=column)
        print(f"fidelity {difference}")
        assert difference.relative <= 0.05, difference
    skctl("delete", "fidelity", "--env", services_env.name)
    listed = skctl("status", "--env", services_env.name, "--json").stdout
    assert "fidelity" not in listed
