"""Scale-up sequences read from a run's scaling rows, for determinism checks."""

from __future__ import annotations

from collections.abc import Sequence

from simkube.results.model import ScalingRow


def node_paths(rows: Sequence[ScalingRow]) -> dict[str, list[int]]:
    """Each group's observed node counts in order, one node at a time (two nodes that arrive
    together are one row of +2, which must not count as a different sequence)."""
    paths: dict[str, list[int]] = {}
    for row in rows:
        if row.source != "nodes":
            continue
        path = paths.setdefault(row.group, [row.nodes_after - row.delta])
        step = 1 if row.delta > 0 else -1
        path.extend(range(path[-1] + step, row.nodes_after + step, step))
    return paths
