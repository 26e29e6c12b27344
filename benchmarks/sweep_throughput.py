"""Sweep throughput: simulations per hour at ``--parallel`` 1, 2 and 3 on one sweep.

Runs ``skctl sweep run`` as a user would, on ``benchmarks/sweeps/throughput.yaml`` (six
points of CA on dsb-scaling at 20x), once per level, each into a fresh directory, in one
session, and prints per level the wall time, points done and simulations per hour, and the
speedup over ``--parallel 1`` measured in the same run (the goal at 2 is >= 1.6x). Each point
is a whole environment (etcd, API server, controller manager, scheduler, KWOK, CA, the
services and the replay), so on a small machine the levels compete for CPU; the mean load
average during each level is printed too, because another job on the machine changes the
answer. ``SIMKUBE_SWEEP_BENCH_LEVELS`` (``1,2,3``) and ``SIMKUBE_SWEEP_BENCH_FILE`` replace
the levels and the sweep; ``SIMKUBE_SWEEP_BENCH_OUTPUT`` keeps the sweeps' directories.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SWEEP = Path(__file__).resolve().parent / "sweeps" / "throughput.yaml"
SKCTL = str(Path(sys.executable).parent / "skctl")
LOAD_SAMPLE_S = 5.0


def _mean_load(stop: threading.Event, samples: list[float]) -> None:
    while not stop.wait(LOAD_SAMPLE_S):
        samples.append(os.getloadavg()[0])


def _level(sweep: Path, *, parallel: int, output: Path) -> dict[str, Any]:
    samples: list[float] = []
    stop = threading.Event()
    sampler = threading.Thread(target=_mean_load, args=(stop, samples), daemon=True)
    load_before = os.getloadavg()[0]
    sampler.start()
    started = time.monotonic()
    done = subprocess.run([SKCTL, "sweep", "run", str(sweep), "--output", str(output),
                           "--parallel", str(parallel)],
                          capture_output=True, text=True, check=False, timeout=4 * 3600)
    wall = time.monotonic() - started
    stop.set()
    sampler.join()
    manifest = json.loads((output / "manifest.json").read_text())
    states = [point["state"] for point in manifest["points"].values()]
    runs = sum(len(list((output / "points" / key).glob("run-*")))
               for key, point in manifest["points"].items() if point["state"] == "done")
    return {"benchmark": "sweep_throughput", "parallel": parallel, "exit_code": done.returncode,
            "points": len(states), "points_done": states.count("done"),
            "points_failed": states.count("failed"), "simulations": runs,
            "wall_s": round(wall, 1), "simulations_per_hour": round(runs / wall * 3600, 2),
            "load_before_1m": round(load_before, 2),
            "load_mean_1m": round(sum(samples) / len(samples), 2) if samples else None,
            "cpus": os.cpu_count(),
            "stderr_tail": done.stderr.strip().splitlines()[-1:] if done.returncode else []}


def run() -> Iterator[dict[str, Any]]:
    sweep = Path(os.environ.get("SIMKUBE_SWEEP_BENCH_FILE", SWEEP))
    levels = [int(level) for level in
              os.environ.get("SIMKUBE_SWEEP_BENCH_LEVELS", "1,2,3").split(",")]
    with tempfile.TemporaryDirectory(prefix="skbench-sweep-") as scratch:
        root = Path(os.environ.get("SIMKUBE_SWEEP_BENCH_OUTPUT") or scratch)
        baseline: float | None = None
        for parallel in levels:
            figures = _level(sweep, parallel=parallel, output=root / f"parallel-{parallel}")
            rate = figures["simulations_per_hour"]
            if parallel == 1:
                baseline = rate
            figures["speedup_vs_parallel_1"] = (round(rate / baseline, 3) if baseline
                                                else None)
            yield figures
