"""Cluster Autoscaler against Karpenter on SimKube's dsb-scaling trace, at 10x.

Runs ``skctl study autoscalers`` as a user would (fresh environment per autoscaler, the
shipped node groups, seed 1, the trace's 1,134 s and a 15-minute tail) and prints, per
autoscaler, the figures a team choosing between them looks at first: cost, node hours, peak
nodes, pending p50/p90, scaling events and the study's wall time; then Karpenter against CA
as relative differences (CA is the baseline, measured in the same run). Without a CA binary
(``$SIMKUBE_CLUSTER_AUTOSCALER`` or the cache) only Karpenter's line is printed, and a line
says why. ``SIMKUBE_STUDY_TRACE`` and ``SIMKUBE_STUDY_SPEED`` replace the trace and speed;
``SIMKUBE_STUDY_OUTPUT`` keeps the study's results and comparison page in that directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from simkube.results import load_run

TRACE = Path(__file__).resolve().parents[1] / "tests" / "data" / "simkube" / "dsb-scaling.sktrace"
SKCTL = str(Path(sys.executable).parent / "skctl")
KINDS = ("cluster-autoscaler", "karpenter")


def _figures(kind: str, run_dir: Path) -> dict[str, Any]:
    results = load_run(run_dir)
    summary = results.summary
    return {"autoscaler": kind, "cost_usd": round(summary.cost_usd, 4),
            "node_hours": round(summary.node_hours, 3),
            "peak_nodes": max(row.nodes_total for row in results.timeline),
            "pending_p50_s": summary.pods.pending_p50_s,
            "pending_p90_s": summary.pods.pending_p90_s,
            "pods_never_scheduled": summary.pods.never_scheduled,
            "scaling_events": summary.autoscaler_events,
            "nodes_removed": dict(summary.disruptions),
            "instance_types": {name: values["node_hours"]
                               for name, values in summary.instance_types.items()}}


def _relative(new: float | None, base: float | None) -> float | None:
    if new is None or not base:
        return None
    return round(new / base - 1, 4)


def run() -> Iterator[dict[str, Any]]:
    trace = Path(os.environ.get("SIMKUBE_STUDY_TRACE", TRACE))
    speed = os.environ.get("SIMKUBE_STUDY_SPEED", "10")
    with tempfile.TemporaryDirectory(prefix="skbench-study-") as scratch:
        output = Path(os.environ.get("SIMKUBE_STUDY_OUTPUT") or Path(scratch) / "study")
        started = time.monotonic()
        done = subprocess.run([SKCTL, "study", "autoscalers", "--trace", str(trace),
                               "--speed", speed, "--output", str(output)],
                              capture_output=True, text=True, check=False, timeout=3600)
        wall = round(time.monotonic() - started, 1)
        if done.returncode != 0:
            yield {"benchmark": "autoscaler_study", "error": done.stderr[-2000:]}
            return
        if "Cluster Autoscaler is not available" in done.stderr:
            yield {"benchmark": "autoscaler_study", "note": "no Cluster Autoscaler binary: "
                   "Karpenter only (set SIMKUBE_CLUSTER_AUTOSCALER for both)"}
        figures = {kind: _figures(kind, output / kind) for kind in KINDS
                   if (output / kind).is_dir()}
        for values in figures.values():
            yield {"benchmark": "autoscaler_study", "trace": trace.name, "speed": float(speed),
                   **values}
        if len(figures) == len(KINDS):
            base, other = figures["cluster-autoscaler"], figures["karpenter"]
            yield {"benchmark": "autoscaler_study.karpenter_vs_ca",
                   "baseline": "cluster-autoscaler",
                   **{key: _relative(other[key], base[key])
                      for key in ("cost_usd", "node_hours", "peak_nodes", "pending_p50_s",
                                  "pending_p90_s")}}
        yield {"benchmark": "autoscaler_study.wall_seconds", "seconds": wall}
