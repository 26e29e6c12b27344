from __future__ import annotations

from typing import Any

import pytest

from simkube.env.autoscalers.karpenter_instances import _launched_at, node_for

pytestmark = pytest.mark.unit

CLAIM: dict[str, Any] = {
    "metadata": {"name": "simkube-x7k2p",
                 "labels": {"karpenter.sh/nodepool": "simkube",
                            "node.kubernetes.io/instance-type": "m5.large",
                            "simkube.dev/node-group": "small", "type": "kwok"},
                 "annotations": {"simkube.dev/ready-after": "1000ms"}},
    "spec": {"resources": {"requests": {"cpu": "1500m", "pods": "1"}},
             "nodeClassRef": {"name": "simkube"}},
    "status": {"providerID": "kwok://kwok-simkube-x7k2p-owl-1-abc-42",
               "allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"},
               "conditions": [{"type": "Launched", "status": "True",
                               "lastTransitionTime": "2026-11-25T07:00:00Z"}]}}


def test_the_node_is_the_one_the_provider_would_have_created() -> None:
    node = node_for(CLAIM)
    assert node["metadata"]["name"] == "kwok-simkube-x7k2p-owl-1-abc-42"
    assert node["spec"]["providerID"] == CLAIM["status"]["providerID"]
    assert node["metadata"]["labels"]["simkube.dev/node-group"] == "small"
    # KWOK's marker so KWOK runs it, the claim's own annotations (its ready-after) kept.
    assert node["metadata"]["annotations"] == {"simkube.dev/ready-after": "1000ms",
                                               "kwok.x-k8s.io/node": "fake"}
    # Karpenter lifts the unregistered taint when it registers the node, as for its own.
    assert node["spec"]["taints"] == [{"key": "karpenter.sh/unregistered",
                                       "effect": "NoExecute"}]
    assert node["status"]["allocatable"] == {"cpu": "2", "memory": "8Gi", "pods": "110"}


def test_only_a_launched_claim_has_a_launch_time() -> None:
    assert _launched_at(CLAIM) == 1795590000.0
    pending = {**CLAIM, "status": {"conditions": [{"type": "Launched", "status": "Unknown"}]}}
    assert _launched_at(pending) is None
    garbled = {**CLAIM, "status": {"conditions": [{"type": "Launched", "status": "True",
                                                   "lastTransitionTime": "yesterday"}]}}
    assert _launched_at(garbled) is None
