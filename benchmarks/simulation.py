"""Simulation benchmarks: what sk-ctrl and the recorder cost, replay fidelity, the demo's time.

A fresh local environment with the services (``skctl env up --services``) replays the
DeathStarBench trace (1,134 s of trace, 19 events) at speed 20. Figures:

* ``sim.run_seconds``: a one-run Simulation from ``skctl run`` until it is ``Finished``
  (node-group reset, sk-driver run, results recorder, cleanup of the run's namespaces),
  against the baseline of the same trace replayed by ``sk-driver replay --cleanup`` alone,
  interleaved, three rounds each; ``vs_baseline`` is the median ratio. The ideal is the trace
  length divided by the speed (56.7 s).
* ``sim.fidelity``: two repetitions of one Simulation; the mean absolute difference of the
  nodes and running-pods curves on the trace time axis, relative to the mean. Goal: ≤ 5%.
* ``sim.demo_seconds``: ``make demo``'s program at its default settings, end to end
  (environment up, recording, export, replay, report, teardown). Goal: ≤ 300 s.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from simkube.report import curve_difference
from simkube.results import load_run

BIN = Path(sys.executable).parent
TRACE = Path(__file__).resolve().parents[1] / "tests" / "data" / "simkube" / "dsb-scaling.sktrace"
SPEED = 20.0
ROUNDS = 3
ENV = "bench-sim"


def _skctl(*args: str) -> str:
    result = subprocess.run([str(BIN / "skctl"), *args], capture_output=True, text=True,
                            check=False)
    if result.returncode != 0:
        raise RuntimeError(f"skctl {' '.join(args)} failed: {result.stderr[-2000:]}")
    return result.stdout


def _status(name: str) -> dict[str, Any]:
    status: dict[str, Any] = json.loads(_skctl("status", name, "--env", ENV, "--json"))["status"]
    return status


def _simulation_seconds(name: str, *, repetitions: int = 1) -> float:
    started = time.monotonic()
    _skctl("run", "--env", ENV, "--name", name, "--trace", str(TRACE), "--speed", str(SPEED),
           "--repetitions", str(repetitions), "--wait", "--timeout", "900")
    return time.monotonic() - started


def _driver_seconds(kubeconfig: str, name: str) -> float:
    started = time.monotonic()
    subprocess.run([str(BIN / "sk-driver"), "replay", str(TRACE), "--kubeconfig", kubeconfig,
                    "--speed", str(SPEED), "--name", name, "--prefix", name, "--cleanup"],
                   check=True, capture_output=True)
    return time.monotonic() - started


def _run_figures(kubeconfig: str) -> Iterator[dict[str, Any]]:
    ctrl, driver = [], []
    for index in range(ROUNDS):
        driver.append(_driver_seconds(kubeconfig, f"base{index}"))
        ctrl.append(_simulation_seconds(f"bench-{index}"))
        _skctl("delete", f"bench-{index}", "--env", ENV)
    ratio = statistics.median(c / d for c, d in zip(ctrl, driver, strict=True))
    yield {"figure": "sim.run_seconds", "median": round(statistics.median(ctrl), 2),
           "runs": [round(v, 2) for v in ctrl],
           "baseline_driver_replay": [round(v, 2) for v in driver],
           "ideal": round(1134 / SPEED, 1), "vs_baseline": round(ratio, 3)}


def _fidelity_figure() -> dict[str, Any]:
    _simulation_seconds("fidelity", repetitions=2)
    results = Path(_status("fidelity")["resultsDir"])
    first, second = load_run(results / "run-1"), load_run(results / "run-2")
    figure: dict[str, Any] = {"figure": "sim.fidelity", "goal": 0.05}
    for column in ("nodes_total", "pods_running", "pods_pending"):
        difference = curve_difference(first, second, column=column)
        relative = difference.relative  # inf when only run 1's curve is flat zero
        figure[column] = {"relative": round(relative, 5) if math.isfinite(relative) else "inf",
                          "mean_abs": round(difference.mean_abs, 4),
                          "max_abs": difference.max_abs}
    _skctl("delete", "fidelity", "--env", ENV)
    return figure


def _demo_figure() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-demo-") as workdir:
        variables = {**os.environ, "SIMKUBE_HOME": str(Path(workdir) / "home")}
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "simkube.skctl.demo", "--env", "bench-demo",
                        "--workdir", workdir], check=True, capture_output=True, env=variables)
        return {"figure": "sim.demo_seconds", "value": round(time.monotonic() - started, 1),
                "goal": 300}


def run() -> Iterator[dict[str, Any]]:
    yield _demo_figure()
    with tempfile.TemporaryDirectory(prefix="bench-sim-") as home:
        os.environ["SIMKUBE_HOME"] = home
        try:
            _skctl("env", "up", "--name", ENV, "--services")
            kubeconfig = _skctl("env", "kubeconfig", "--name", ENV).strip()
            yield from _run_figures(kubeconfig)
            yield _fidelity_figure()
        finally:
            subprocess.run([str(BIN / "skctl"), "env", "down", "--name", ENV], check=False,
                           capture_output=True)
            del os.environ["SIMKUBE_HOME"]
