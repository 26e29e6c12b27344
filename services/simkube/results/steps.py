"""Scale steps: which observed changes of a group's node count are one step of the autoscaler.

``scaling.csv`` has a ``nodes`` row for every change of a group's count the recorder observes,
at the time it observed it (timeline.py), so three nodes of one scale-up are three +1 rows
a few milliseconds apart: the nodes are created one by one. ``scale_ups`` and ``scale_downs``
in summary.json count *steps*, so the rule is: **consecutive changes of one group in the same
direction less than ``STEP_GAP_S`` wall seconds apart are one step**, with the first change's
times, the summed delta and the last count. A change in the other direction, or after a longer
gap, starts a new step. The gap is in wall time because it is about how the API delivers one
decision's nodes, which does not depend on the replay's speed, so steps count alike at speed 1
and at speed 50. One wall second is the sample interval steps were counted at before the
timeline followed events, when nodes arriving within one sample were one step, so the counts
keep their meaning (a trickle of nodes less than a second apart is one step, as it was then).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from simkube.results.model import ScalingRow

STEP_GAP_S = 1.0


def node_steps(rows: Iterable[ScalingRow], *, gap_s: float = STEP_GAP_S) -> list[ScalingRow]:
    """The ``nodes`` rows among ``rows`` (in the order observed) merged into steps."""
    steps: list[ScalingRow] = []
    last: dict[str, tuple[int, float]] = {}  # group -> its newest step's index, last change
    for row in rows:
        if row.source != "nodes" or not row.delta:
            continue
        index, changed_at = last.get(row.group, (-1, 0.0))
        step = steps[index] if index >= 0 else None
        if (step is not None and (step.delta > 0) == (row.delta > 0)
                and row.wall_s - changed_at < gap_s):
            steps[index] = dataclasses.replace(step, delta=step.delta + row.delta,
                                               nodes_after=row.nodes_after)
        else:
            steps.append(row)
            index = len(steps) - 1
        last[row.group] = (index, row.wall_s)
    return steps
