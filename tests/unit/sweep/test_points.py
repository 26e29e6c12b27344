from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from simkube.core.errors import ConfigError
from simkube.env.autoscalers.kinds import AutoscalerKind
from simkube.sweep.axes import TraceEdit
from simkube.sweep.points import build_points
from simkube.sweep.spec import load_sweep
from tests.unit.sweep.files import BASE, write_sweep

pytestmark = pytest.mark.unit
MIN_SMALL = {"nodeGroups": {"group": "small", "field": "minSize"}, "values": [2, 5]}
MAX_SMALL = {"nodeGroups": {"group": "small", "field": "maxSize"}, "values": [20, 3]}


def _points(tmp_path: Path, axes: list[Any], **top: Any) -> list[Any]:
    return build_points(load_sweep(write_sweep(tmp_path, axes=axes, **top)))


def test_points_carry_their_settings_and_what_differs_from_the_base(tmp_path: Path) -> None:
    points = _points(tmp_path, [
        {"timer": "clusterAutoscaler.scale-down-unneeded-time", "values": ["10m", "2m"]},
        {"caFlag": "--expander", "values": ["least-waste,price", "price"]},
        {"traceEdit": "replicas", "values": [1, 2]}])
    assert [p.index for p in points] == list(range(8))
    assert points[0].label == "base"  # 10m is CA's default, least-waste,price the env's tuning
    assert points[7].differs == ("clusterAutoscaler.scale-down-unneeded-time=2m",
                                 "--expander=price", "replicas x2")
    assert points[7].timers == {"clusterAutoscaler.scale-down-unneeded-time": "2m"}
    assert points[7].ca_flags == ("--expander=price",)
    assert points[7].trace_edits == ((TraceEdit.REPLICAS, 2.0),)
    assert points[7].node_groups is None


def test_a_node_group_point_gets_an_edited_document(tmp_path: Path) -> None:
    points = _points(tmp_path, [{"nodeGroups": {"group": "small", "field": "provisioning.delay"},
                                 "values": ["60s", "1m", "2m"]},
                                {"nodeGroups": {"group": "large", "field": "instanceType"},
                                 "values": ["m5.4xlarge"]}])
    assert [p.differs for p in points] == [
        ("large.instanceType=m5.4xlarge",), ("large.instanceType=m5.4xlarge",),
        ("small.provisioning.delay=2m", "large.instanceType=m5.4xlarge")]
    groups = {g["id"]: g for g in points[2].node_groups["nodeGroups"]}
    assert groups["small"]["provisioning"] == {"delay": "2m"}
    assert groups["large"]["shape"]["instanceType"] == "m5.4xlarge"


def test_a_point_that_cannot_be_built_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        _points(tmp_path, [MIN_SMALL, MAX_SMALL])
    assert caught.value.message == (
        "point 3 (small.minSize=5, small.maxSize=3): node groups from node-groups.yaml: node "
        "group 'small': maxSize: 3 is below minSize 5")


def test_an_unknown_group_names_the_point_and_the_known_groups(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^point 0 \(huge.minSize=1\): there is no node "
                                          r"group 'huge' \(known: small, large\)$"):
        _points(tmp_path, [{"nodeGroups": {"group": "huge", "field": "minSize"},
                            "values": [1]}])


def test_a_ca_flag_on_a_karpenter_point_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^point 1 \(autoscaler=karpenter, --expander=price"
                                          r"\): --expander is a Cluster Autoscaler flag, and "
                                          r"this point runs karpenter$"):
        _points(tmp_path, [{"autoscaler": ["cluster-autoscaler", "karpenter"]},
                           {"caFlag": "--expander", "values": ["price"]}])


def test_a_karpenter_timer_on_a_ca_point_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^point 0 .*: timer karpenter.consolidateAfter is "
                                          r"karpenter's, and this point runs cluster-autoscaler$"):
        _points(tmp_path, [{"timer": "karpenter.consolidateAfter", "values": ["1m"]}])


def test_timers_that_clash_together_name_the_point(tmp_path: Path) -> None:
    base = {**BASE, "timers": {"scheduler.podMaxBackoffSeconds": 5}}
    with pytest.raises(ConfigError, match=r"^point 1 \(scheduler.podInitialBackoffSeconds=8s\): "
                                          r"spec.scheduler.podMaxBackoffSeconds \(5s\) is below"):
        _points(tmp_path, [{"timer": "scheduler.podInitialBackoffSeconds",
                            "values": [1, 8]}], base=base)


def test_the_autoscaler_axis_sets_each_point_s_autoscaler(tmp_path: Path) -> None:
    points = _points(tmp_path, [{"autoscaler": ["cluster-autoscaler", "karpenter"]}])
    assert [p.autoscaler for p in points] == [AutoscalerKind.CLUSTER_AUTOSCALER,
                                              AutoscalerKind.KARPENTER]
    assert [p.label for p in points] == ["base", "autoscaler=karpenter"]


def test_a_base_node_groups_file_is_edited_from_the_sweep_s(tmp_path: Path) -> None:
    groups = {"nodeGroups": [{"id": "only", "minSize": 0, "maxSize": 4, "pricePerHour": 1,
                              "shape": {"cpu": 2, "memory": "4Gi", "instanceType": "m5.large",
                                        "zone": "z"}}]}
    (tmp_path / "groups.yaml").write_text(yaml.safe_dump(groups))
    points = _points(tmp_path, [{"nodeGroups": {"group": "only", "field": "pricePerHour"},
                                 "values": [1, 0.5]}],
                     base={**BASE, "nodeGroups": "groups.yaml"})
    assert [p.label for p in points] == ["base", "only.pricePerHour=0.5"]
