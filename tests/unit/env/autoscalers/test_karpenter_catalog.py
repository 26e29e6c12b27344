from __future__ import annotations

from pathlib import Path

import pytest

from simkube.cloudprov.config import CloudConfig, load_file
from simkube.core.errors import ConfigError
from simkube.core.simtime import TimeScale
from simkube.env.autoscalers.karpenter_catalog import (
    ConsolidationPolicy,
    Disruption,
    instance_types,
    manifests,
    pool_of_group,
    pool_plans,
)

pytestmark = pytest.mark.unit

TWO_GROUPS = """\
provisioning: {delay: 60s, readyAfter: 10s}
nodeGroups:
- id: small
  maxSize: 20
  pricePerHour: 0.096
  shape: {cpu: 2, memory: 8Gi, instanceType: m5.large, zone: us-east-1a,
          labels: {simkube.dev/size: small}}
- id: large
  maxSize: 10
  pricePerHour: 0.384
  shape: {cpu: 8, memory: 32Gi, instanceType: m5.2xlarge, zone: us-east-1b}
"""


def config(tmp_path: Path, text: str = TWO_GROUPS) -> CloudConfig:
    path = tmp_path / "groups.yaml"
    path.write_text(text)
    return load_file(path)


def test_each_group_is_an_offering_of_its_instance_type_with_its_price(tmp_path: Path) -> None:
    types = {t["name"]: t for t in instance_types(config(tmp_path))}
    small = types["m5.large"]
    # Karpenter's KWOK provider subtracts 100m/10Mi kube-reserved: nodes get the allocatable.
    assert small["resources"] == {"cpu": "2100m", "memory": "8202Mi", "pods": "110",
                                  "ephemeral-storage": "100Gi"}
    [offering] = small["offerings"]
    assert offering["Price"] == 0.096
    requirements = {r["key"]: r["values"] for r in offering["Requirements"]}
    assert requirements == {"karpenter.sh/capacity-type": ["on-demand"],
                            "topology.kubernetes.io/zone": ["us-east-1a"],
                            "simkube.dev/node-group": ["small"],
                            "simkube.dev/size": ["small"]}
    assert types["m5.2xlarge"]["offerings"][0]["Requirements"][1]["values"] == ["us-east-1b"]


def test_groups_of_one_instance_type_must_share_its_shape(tmp_path: Path) -> None:
    clash = TWO_GROUPS.replace("m5.2xlarge", "m5.large")
    with pytest.raises(ConfigError, match="'small' and 'large' are both instance type"):
        instance_types(config(tmp_path, clash))
    same = clash.replace("cpu: 8, memory: 32Gi", "cpu: 2, memory: 8Gi")
    [shared] = instance_types(config(tmp_path, same))
    assert [o["Price"] for o in shared["offerings"]] == [0.096, 0.384]


def test_one_pool_limited_to_the_groups_and_their_max_sizes(tmp_path: Path) -> None:
    cloud = config(tmp_path)
    node_class, pool = manifests(cloud, disruption=Disruption(), scale=TimeScale(10))
    # Faster than real time the build waits the delay in trace time (ms), holds included.
    assert node_class["spec"] == {"nodeRegistrationDelay": "0s"}
    assert node_class["metadata"]["annotations"] == {
        "simkube.dev/registration-delay": "60000ms"}
    truth_class = manifests(cloud, disruption=Disruption())[0]
    assert truth_class["spec"] == {"nodeRegistrationDelay": "60s"}  # Karpenter's own sleep
    assert "annotations" not in truth_class["metadata"]
    spec = pool["spec"]
    assert spec["limits"] == {"nodes": "30", "cpu": "120", "memory": "480Gi"}
    assert spec["disruption"] == {"consolidationPolicy": "WhenEmptyOrUnderutilized",
                                  "consolidateAfter": "0s", "budgets": [{"nodes": "10%"}]}
    template = spec["template"]
    assert template["metadata"]["annotations"] == {"simkube.dev/ready-after": "1000ms"}
    assert template["metadata"]["labels"] == {"type": "kwok"}  # what replayed pods select
    requirements = {r["key"]: r["values"] for r in template["spec"]["requirements"]}
    assert requirements["node.kubernetes.io/instance-type"] == ["m5.2xlarge", "m5.large"]
    assert requirements["simkube.dev/node-group"] == ["small", "large"]
    assert template["spec"]["startupTaints"] == [{"key": "node.kubernetes.io/not-ready",
                                                  "effect": "NoSchedule"}]
    assert pool_of_group(cloud) == {"small": "simkube", "large": "simkube"}


def test_tainted_or_differently_timed_groups_get_their_own_pool(tmp_path: Path) -> None:
    text = TWO_GROUPS.replace(
        "instanceType: m5.2xlarge, zone: us-east-1b}",
        "instanceType: m5.2xlarge, zone: us-east-1b,\n"
        "          taints: [{key: gpu, value: 'yes', effect: NoSchedule}]}")
    plans = pool_plans(config(tmp_path, text))
    assert [(p.name, [g.id for g in p.groups]) for p in plans] == [
        ("simkube-small", ["small"]), ("simkube-large", ["large"])]
    pools = [m for m in manifests(config(tmp_path, text), disruption=Disruption())
             if m["kind"] == "NodePool"]
    assert pools[1]["spec"]["template"]["spec"]["taints"][1] == {
        "key": "gpu", "value": "yes", "effect": "NoSchedule"}


def test_disruption_settings_and_their_state_round_trip() -> None:
    chosen = Disruption(policy=ConsolidationPolicy.WHEN_EMPTY, consolidate_after_ms=None)
    assert Disruption.from_state(chosen.to_state()) == chosen
    assert Disruption.from_state({}) == Disruption()

