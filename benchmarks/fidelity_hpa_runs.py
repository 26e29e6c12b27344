"""What the HPA benchmark's steps share: running one replay and reading its HPA figures.

Every replay of the benchmark (the fidelity replays and the what-if pair) is a Simulation with
HPAs active and the same timers as the truth, run as the fidelity benchmark runs its replays
(``fidelity_replay.replay``); the figures come from the run's ``hpas.csv``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks import fidelity_hpa_load as load
from benchmarks import fidelity_replay
from benchmarks.fidelity_replay import ReplayError
from simkube.results import hpas

# A 60 s downscale stabilization (production: 300 s) lets a short truth scale down as well
# as up; the truth and every replay use it (replays divide it by their speed).
TIMERS = ("controllerManager.horizontal-pod-autoscaler-downscale-stabilization=60s",)


def replay(env: str, *, name: str, trace: Path, speed: float, duration_s: float) -> Path:
    """Run ``trace`` once as Simulation ``name`` in ``env``, HPAs active; its results dir."""
    (run_dir,) = fidelity_replay.replay(env=env, trace=trace, speed=speed, repetitions=1,
                                        duration_s=duration_s, timers=TIMERS, name=name,
                                        options=("--hpa", "active"))
    return run_dir


def curve(run_dir: Path) -> tuple[list[float], list[int], list[int]]:
    """The benchmark HPA's (trace seconds, desired, current) rows, once it decided."""
    rows = [r for r in hpas.read(run_dir / hpas.HPAS) if r.hpa.endswith(f"/{load.NAME}")
            and r.desired > 0]
    if not rows:
        raise ReplayError(f"{run_dir}: the HPA {load.NAME} never decided anything "
                          "(no hpas.csv rows)")
    return [r.trace_s for r in rows], [r.desired for r in rows], [r.current for r in rows]


def hpa_summary(run_dir: Path, *, end_s: float) -> dict[str, Any]:
    """The benchmark HPA's figures from the run's hpas.csv, over trace time up to ``end_s``."""
    summaries = hpas.summaries(hpas.read(run_dir / hpas.HPAS), end_trace_s=end_s)
    found = [v for k, v in summaries.items() if k.endswith(f"/{load.NAME}")]
    if not found:
        raise ReplayError(f"no HPA {load.NAME} in the summary ({sorted(summaries)})")
    return dict(found[0])
