"""A known run written to disk exactly as the contract's results layout says.

The files are written by hand here (not by the recorder) so report tests pin the format the
report reads and assert exact numbers derived from these rows.
"""

from __future__ import annotations

import copy
import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

TIMELINE_HEADER = ["wall_s", "trace_s", "pods_pending", "pods_running", "pods_succeeded",
                   "pods_failed", "nodes_total", "nodes.general", "nodes.spot", "cost_usd"]
# wall_s, trace_s, pending, running, succeeded, failed, total, general, spot, cost
TIMELINE: list[list[float]] = [
    [0.0, 0.0, 0, 0, 0, 0, 2, 1, 1, 0.0],
    [1.0, 10.0, 4, 0, 0, 0, 2, 1, 1, 0.5],
    [2.0, 20.0, 2, 2, 0, 0, 3, 2, 1, 1.0],
    [3.0, 30.0, 0, 4, 0, 0, 4, 2, 2, 2.0],
    [4.0, 40.0, 0, 4, 1, 0, 4, 2, 2, 3.0],
    [5.0, 50.0, 0, 2, 3, 0, 2, 1, 1, 3.5],
]
PODS_HEADER = ["namespace", "name", "group", "node", "created_trace_s", "scheduled_trace_s",
               "pending_s", "finished_trace_s", "phase"]
PODS = [
    ["virtual-shop", "web-1", "general", "general-a", "5", "5.5", "0.5", "45", "Succeeded"],
    ["virtual-shop", "web-2", "general", "general-b", "5", "6.5", "1.5", "45", "Succeeded"],
    ["virtual-shop", "web-3", "spot", "spot-a", "10", "12", "2", "", "Running"],
    ["virtual-shop", "api-1", "spot", "spot-b", "10", "20", "10", "", "Running"],
    ["virtual-shop", "batch-1", "", "", "12", "", "", "", "Pending"],
]
SCALING_HEADER = ["wall_s", "trace_s", "group", "delta", "nodes_after", "source"]
SCALING = [
    ["2.0", "20.0", "general", "1", "2", "nodes"],
    ["3.0", "30.0", "spot", "1", "2", "nodes"],
    ["5.0", "50.0", "general", "-1", "1", "nodes"],
    ["5.0", "50.0", "spot", "-1", "1", "nodes"],
]
SUMMARY: dict[str, Any] = {
    "schema": 1, "simulation": "shop", "run": 1,
    "started_at": "2026-11-21T10:00:00Z", "finished_at": "2026-11-21T10:00:05Z",
    "wall_seconds": 5.0, "trace_seconds": 50.0, "speed": 10.0,
    "groups": {
        "general": {"price_per_hour": 0.5, "peak_nodes": 2, "min_nodes": 1, "final_nodes": 1,
                    "node_hours": 4.0, "cost_usd": 2.0, "scale_ups": 1, "scale_downs": 1},
        "spot": {"price_per_hour": 0.25, "peak_nodes": 2, "min_nodes": 1, "final_nodes": 1,
                 "node_hours": 6.0, "cost_usd": 1.5, "scale_ups": 1, "scale_downs": 1},
    },
    "pods": {"seen": 5, "scheduled": 4, "never_scheduled": 1, "succeeded": 2, "failed": 0,
             "pending_p50_s": 1.5, "pending_p90_s": 10.0, "pending_p99_s": 10.0,
             "pending_max_s": 10.0, "peak_pending": 4, "peak_running": 4},
    "node_hours": 10.0, "cost_usd": 3.5, "autoscaler_events": 0,
    "driver": {"events_applied": 120, "events_total": 120, "objects_failed": 2,
               "lag_p99_ms": 3.5},
    "state": "Finished",
}


def write_run(root: Path, *, simulation: str = "shop", run: int = 1,
              timeline: Sequence[Sequence[float]] = TIMELINE,
              summary: Mapping[str, Any] | None = None,
              pods: Sequence[Sequence[str]] = PODS) -> Path:
    """Write ``root/simulation/run-N`` and return it; ``summary`` overrides (deep-merged)."""
    run_dir = root / simulation / f"run-{run}"
    run_dir.mkdir(parents=True)
    _write_csv(run_dir / "timeline.csv", TIMELINE_HEADER, timeline)
    _write_csv(run_dir / "pods.csv", PODS_HEADER, pods)
    _write_csv(run_dir / "scaling.csv", SCALING_HEADER, SCALING)
    merged = _merge(copy.deepcopy(SUMMARY), {"simulation": simulation, "run": run,
                                             **(summary or {})})
    (run_dir / "summary.json").write_text(json.dumps(merged, indent=2))
    return run_dir


def scaled_timeline(*, nodes: float = 1.0, cost: float = 1.0) -> list[list[float]]:
    """TIMELINE with node columns and cost multiplied (a run that used more or fewer nodes)."""
    rows = []
    for row in TIMELINE:
        copy_row = list(row)
        for index in (6, 7, 8):
            copy_row[index] = row[index] * nodes
        copy_row[9] = row[9] * cost
        rows.append(copy_row)
    return rows


def _write_csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows([_cell(value) for value in row] for row in rows)


def _cell(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if value == int(value) and abs(value) < 1e15 else str(value)
    return str(value)


def _merge(base: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in overrides.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base
