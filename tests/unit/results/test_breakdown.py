from __future__ import annotations

import pytest

from simkube.results.breakdown import autoscaler_name, disruptions, pools_of, totals_by
from simkube.results.model import GroupSummary, ScalingRow

pytestmark = pytest.mark.unit


def group(hours: float, cost: float) -> GroupSummary:
    return GroupSummary(price_per_hour=0.0, peak_nodes=1, min_nodes=0, final_nodes=0,
                        node_hours=hours, cost_usd=cost, scale_ups=1, scale_downs=1)


def row(delta: int, reason: str, *, source: str = "autoscaler") -> ScalingRow:
    return ScalingRow(wall_s=1.0, trace_s=10.0, group="small", delta=delta, nodes_after=1,
                      source=source, reason=reason)


def test_groups_add_up_under_their_instance_type_and_pool() -> None:
    groups = {"small-a": group(1.0, 0.1), "small-b": group(2.0, 0.2), "large": group(0.5, 0.2),
              "static": group(9.0, 0.0)}
    types = {"small-a": "m5.large", "small-b": "m5.large", "large": "m5.2xlarge"}
    assert totals_by(groups, types) == {
        "m5.2xlarge": {"node_hours": 0.5, "cost_usd": 0.2},
        "m5.large": {"node_hours": 3.0, "cost_usd": 0.3}}
    assert totals_by(groups, {}) == {}


def test_removals_read_the_same_for_both_autoscalers() -> None:
    scaling = [row(-1, "ScaleDownEmpty"), row(-1, "ScaleDown"), row(-1, "Empty"),
               row(-1, "Underutilized"), row(1, "Launched"), row(-1, "", source="nodes")]
    assert disruptions(scaling) == {"Empty": 2, "Underutilized": 2}


def test_a_group_without_a_pool_is_its_own_when_it_had_nodes() -> None:
    groups = {"small": group(1.0, 0.1), "large": group(2.0, 0.8),
              "unused": GroupSummary(price_per_hour=1.0, peak_nodes=0, min_nodes=0,
                                     final_nodes=0, node_hours=0.0, cost_usd=0.0,
                                     scale_ups=0, scale_downs=0)}
    assert pools_of(groups, {}) == {"small": "small", "large": "large", "unused": ""}
    karpenter = pools_of(groups, {"small": "simkube", "large": "simkube"})
    assert totals_by(groups, karpenter) == {"simkube": {"node_hours": 3.0, "cost_usd": 0.9}}


def test_the_autoscaler_is_named_from_what_was_observed() -> None:
    assert autoscaler_name(observed={"karpenter"}) == "karpenter"
    assert autoscaler_name(observed={"cluster-autoscaler", "karpenter"}) == "karpenter"
    assert autoscaler_name(observed=["cluster-autoscaler"]) == "cluster-autoscaler"
    assert autoscaler_name(observed=()) == "none"
