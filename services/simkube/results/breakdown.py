"""A run's nodes broken down the ways a team compares autoscalers: by instance type, by
Karpenter NodePool, and the nodes the autoscaler took away, by why.

Cluster Autoscaler and Karpenter label their nodes alike (``node.kubernetes.io/instance-type``;
Karpenter adds ``karpenter.sh/nodepool``) and the recorder counts both per node group, so
each group's node hours and cost are summed under its instance type and pool. CA's removals
are named as Karpenter names its disruptions (``ScaleDownEmpty`` → Empty, ``ScaleDown`` →
Underutilized), so the two read the same in a comparison.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from simkube.results.model import GroupSummary, ScalingRow

CA_REMOVALS = {"ScaleDownEmpty": "Empty", "ScaleDown": "Underutilized"}
KARPENTER, CLUSTER_AUTOSCALER, NONE = "karpenter", "cluster-autoscaler", "none"


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


def disruptions(scaling: Iterable[ScalingRow]) -> dict[str, int]:
    counted = Counter(CA_REMOVALS.get(row.reason, row.reason) for row in scaling
                      if row.source == "autoscaler" and row.delta < 0 and row.reason)
    return dict(sorted(counted.items()))


def autoscaler_name(*, scaling: Iterable[ScalingRow], pools: Mapping[str, str],
                    karpenter_seen: bool) -> str:
    """Who made the nodes, as observed: Karpenter's Events or NodePool labels, else CA's."""
    if karpenter_seen or any(pools.values()):
        return KARPENTER
    if any(row.source == "autoscaler" for row in scaling):
        return CLUSTER_AUTOSCALER
    return NONE
