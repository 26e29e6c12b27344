"""A run's nodes broken down the ways a team compares autoscalers: by instance type, by
NodePool, the nodes the autoscaler took away by why, and which autoscaler it was.

Cluster Autoscaler and Karpenter label their nodes alike (``node.kubernetes.io/instance-type``;
Karpenter adds ``karpenter.sh/nodepool``) and the recorder counts both per node group, so
each group's node hours and cost are summed under its instance type and pool. Cluster
Autoscaler has no pools: each of its node groups is one, so a group that had nodes without a
pool label stands for itself and a CA run has per-pool figures too. CA's removals are named as
Karpenter names its disruptions (``ScaleDownEmpty`` → Empty, ``ScaleDown`` → Underutilized),
so the two read the same in a comparison.

The autoscaler is named from what was observed, never from configuration (a run's summary
must say what happened): Karpenter's Events, NodeClaims or NodePool labels make it
``karpenter``; Cluster Autoscaler's Events or an sk-cloudprov node added during the run
``cluster-autoscaler`` (sk-cloudprov's minimum nodes are there with no autoscaler at all);
neither ``none``. Karpenter wins when both were seen: its nodes are what the run paid for.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping

from simkube.results.model import GroupSummary, ScalingRow
from simkube.results.nodes import CLUSTER_AUTOSCALER, KARPENTER

CA_REMOVALS = {"ScaleDownEmpty": "Empty", "ScaleDown": "Underutilized"}
NONE = "none"
AUTOSCALERS = (KARPENTER, CLUSTER_AUTOSCALER)  # in the order they win


def totals_by(groups: Mapping[str, GroupSummary],
              key: Mapping[str, str]) -> dict[str, dict[str, float]]:
    """Node hours and cost summed per ``key[group]`` (groups without a key left out)."""
    result: dict[str, dict[str, float]] = {}
    for group, summary in groups.items():
        name = key.get(group)
        if not name:
            continue
        entry = result.setdefault(name, {"node_hours": 0.0, "cost_usd": 0.0})
        entry["node_hours"] = round(entry["node_hours"] + summary.node_hours, 6)
        entry["cost_usd"] = round(entry["cost_usd"] + summary.cost_usd, 6)
    return dict(sorted(result.items()))


def pools_of(groups: Mapping[str, GroupSummary], pools: Mapping[str, str]) -> dict[str, str]:
    """Each group's NodePool; a group that had nodes but no pool (CA's, the static nodes) is
    its own. A group that never had a node has none: it cost nothing under any name."""
    return {group: pools.get(group) or (group if summary.peak_nodes > 0 else "")
            for group, summary in groups.items()}


def disruptions(scaling: Iterable[ScalingRow]) -> dict[str, int]:
    counted = Counter(CA_REMOVALS.get(row.reason, row.reason) for row in scaling
                      if row.source == "autoscaler" and row.delta < 0 and row.reason)
    return dict(sorted(counted.items()))


def autoscaler_name(*, observed: Collection[str]) -> str:
    """``karpenter``, ``cluster-autoscaler`` or ``none``, from the autoscalers observed."""
    return next((name for name in AUTOSCALERS if name in observed), NONE)
