from __future__ import annotations

import pytest

from simkube.results.breakdown import autoscaler_name, disruptions, totals_by
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


def test_the_autoscaler_is_named_from_what_was_observed() -> None:
    assert autoscaler_name(scaling=[], pools={}, karpenter_seen=True) == "karpenter"
    assert autoscaler_name(scaling=[], pools={"small": "simkube"},
                           karpenter_seen=False) == "karpenter"
    assert autoscaler_name(scaling=[row(1, "TriggeredScaleUp")], pools={},
                           karpenter_seen=False) == "cluster-autoscaler"
    assert autoscaler_name(scaling=[row(1, "", source="nodes")], pools={},
                           karpenter_seen=False) == "none"
