from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from simkube.cloudprov.naming import TaintEffect
from simkube.cloudprov.templates import Taint, from_node, from_shape
from simkube.core.errors import ConfigError

pytestmark = pytest.mark.unit

PRODUCTION_NODE = Path(__file__).parent / "data" / "m5-node.yaml"


def production_node() -> dict[str, Any]:
    node: dict[str, Any] = yaml.safe_load(PRODUCTION_NODE.read_text())
    return node


def test_a_production_node_keeps_what_makes_nodes_alike() -> None:
    template = from_node(production_node(), owner="g", field="node")
    assert template.labels["node.kubernetes.io/instance-type"] == "m5.2xlarge"
    assert template.labels["topology.kubernetes.io/zone"] == "us-east-1b"
    assert template.labels["team"] == "payments"
    assert template.labels["eks.amazonaws.com/nodegroup"] == "general-m5"
    assert template.capacity["memory"] == "32408488Ki"
    assert template.allocatable == {"cpu": "7910m", "ephemeral-storage": "76224326324",
                                    "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                                    "memory": "31482280Ki", "pods": "58"}
    assert template.kubelet_version == "v1.33.4-eks-1234567"
    assert template.taints == (Taint(key="dedicated", value="payments",
                                     effect=TaintEffect.NO_SCHEDULE),)


def test_a_production_node_drops_what_belongs_to_one_machine() -> None:
    template = from_node(production_node(), owner="g", field="node")
    assert "kubernetes.io/hostname" not in template.labels
    # Cordon, the autoscaler's own marks and every other transient taint are gone.
    assert {t.key for t in template.taints} == {"dedicated"}
    assert not hasattr(template, "annotations")


def test_beta_labels_stand_in_for_missing_ga_labels() -> None:
    node = production_node()
    labels = node["metadata"]["labels"]
    del labels["node.kubernetes.io/instance-type"], labels["topology.kubernetes.io/zone"]
    del labels["kubernetes.io/os"], labels["kubernetes.io/arch"]
    template = from_node(node, owner="g", field="node")
    assert template.labels["node.kubernetes.io/instance-type"] == "m5.2xlarge"
    assert template.labels["topology.kubernetes.io/zone"] == "us-east-1b"
    assert template.labels["kubernetes.io/os"] == "linux"


def test_allocatable_defaults_to_capacity() -> None:
    node = production_node()
    del node["status"]["allocatable"]
    template = from_node(node, owner="g", field="node")
    assert template.allocatable == template.capacity


@pytest.mark.parametrize(("change", "message"), [
    (lambda n: n.update(kind="Pod"), r"g: node\.kind: must be Node, not 'Pod'"),
    (lambda n: n["status"]["capacity"].update(cpu="eight"),
     r"g: node\.status\.capacity\.cpu: 'eight' is not a quantity"),
    (lambda n: n["status"]["allocatable"].pop("pods"), r"node\.status\.allocatable: lacks 'pods'"),
    (lambda n: [n["metadata"]["labels"].pop(k) for k in ("topology.kubernetes.io/zone",
                                                          "failure-domain.beta.kubernetes.io/zone")],
     r"node\.metadata\.labels: lacks topology\.kubernetes\.io/zone"),
    (lambda n: n.pop("status"), r"node\.status: is required"),
    (lambda n: n["spec"]["taints"].append({"key": "x", "effect": "Sometimes"}),
     r"node\.spec\.taints\[3\]\.effect: 'Sometimes' is not one of NoSchedule"),
])
def test_bad_production_nodes_are_named(change: Any, message: str) -> None:
    node = production_node()
    change(node)
    with pytest.raises(ConfigError, match=message):
        from_node(node, owner="g", field="node")


def test_short_form() -> None:
    template = from_shape({"cpu": 4, "memory": "16Gi", "instanceType": "c4", "zone": "z",
                           "labels": {"tier": "web", "spot": True},
                           "taints": ["dedicated=web:NoSchedule", "solo:NoExecute"],
                           "gpu": {"type": "t4", "count": 2}},
                          owner="g", field="shape", gpu_label="gpu/type",
                          gpu_resource="nvidia.com/gpu")
    assert template.capacity == {"cpu": "4", "memory": "16Gi", "pods": "110",
                                 "ephemeral-storage": "100Gi", "nvidia.com/gpu": "2"}
    assert template.allocatable == template.capacity
    assert template.labels == {"tier": "web", "spot": "true", "gpu/type": "t4",
                               "node.kubernetes.io/instance-type": "c4",
                               "topology.kubernetes.io/zone": "z",
                               "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
    assert [t.manifest() for t in template.taints] == [
        {"key": "dedicated", "value": "web", "effect": "NoSchedule"},
        {"key": "solo", "effect": "NoExecute"}]


@pytest.mark.parametrize(("shape", "message"), [
    ({"memory": "1Gi", "instanceType": "t", "zone": "z"}, r"g: shape\.cpu: is required"),
    ({"cpu": "1", "memory": "-1Gi", "instanceType": "t", "zone": "z"},
     r"shape\.memory: '-1Gi' is not a quantity"),
    ({"cpu": True, "memory": "1Gi", "instanceType": "t", "zone": "z"},
     r"shape\.cpu: must be a quantity .*, not a boolean"),
    ({"cpu": 1, "memory": "1Gi", "zone": "z"}, r"shape\.instanceType: is required"),
    ({"cpu": 1, "memory": "1Gi", "instanceType": "t", "zone": "z", "memroy": "1"},
     r"shape\.memroy: unknown field \(did you mean 'memory'\?\)"),
    ({"cpu": 1, "memory": "1Gi", "instanceType": "t", "zone": "z",
      "labels": {"kubernetes.io/hostname": "x"}},
     r"shape\.labels\.kubernetes\.io/hostname: is set per node"),
    ({"cpu": 1, "memory": "1Gi", "instanceType": "t", "zone": "z", "gpu": {"type": "t4",
                                                                         "count": 0}},
     r"shape\.gpu\.count: must be between 1"),
])
def test_bad_short_forms_are_named(shape: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        from_shape(shape, owner="g", field="shape", gpu_label="gpu", gpu_resource="gpu")
