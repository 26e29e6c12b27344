from __future__ import annotations

from typing import Any, cast

import pytest

from simkube.core.kubeapi import KubeClient
from simkube.env.autoscalers.karpenter_instances import (
    _launched_at,
    _lift_orphans,
    _recover,
    node_for,
)
from tests.support.fake_api import FakeApi

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


def test_a_claim_launched_with_held_readiness_gets_its_pools() -> None:
    """The build that launched it would have made it Ready on the pace; it is gone, so the
    recovered Node carries its NodePool's ready-after for KWOK."""
    held = {**CLAIM, "metadata": {**CLAIM["metadata"],
                                  "annotations": {"simkube.dev/ready-after": "876000h"}}}
    assert node_for(held, ready_after="10s")["metadata"]["annotations"][
        "simkube.dev/ready-after"] == "10s"
    assert node_for(held)["metadata"]["annotations"]["simkube.dev/ready-after"] == "0s"
    assert node_for(CLAIM, ready_after="10s")["metadata"]["annotations"][
        "simkube.dev/ready-after"] == "1000ms"  # a claim's own value stays


def test_only_a_launched_claim_has_a_launch_time() -> None:
    assert _launched_at(CLAIM) == 1795590000.0
    pending = {**CLAIM, "status": {"conditions": [{"type": "Launched", "status": "Unknown"}]}}
    assert _launched_at(pending) is None
    garbled = {**CLAIM, "status": {"conditions": [{"type": "Launched", "status": "True",
                                                   "lastTransitionTime": "yesterday"}]}}
    assert _launched_at(garbled) is None


async def test_nodes_left_held_by_a_gone_build_get_their_pools_readiness() -> None:
    held = {"metadata": {"name": "kwok-1795860000000-simkube-x7k2p",
                         "labels": {"karpenter.sh/nodepool": "simkube"},
                         "annotations": {"simkube.dev/ready-after": "876000h"}},
            "spec": {"providerID": "kwok://kwok-1795860000000-simkube-x7k2p"}}
    ready = {"metadata": {"name": "kwok-1795860000001-simkube-b", "labels": {},
                          "annotations": {"simkube.dev/ready-after": "0s"}},
             "spec": {"providerID": "kwok://kwok-1795860000001-simkube-b"}}
    cloudprov = {"metadata": {"name": "small-abc", "annotations": {
                     "simkube.dev/ready-after": "876000h"}},  # sk-cloudprov's: not ours
                 "spec": {"providerID": "simkube://small-abc"}}
    api = FakeApi(lists={"/api/v1/nodes": [held, ready, cloudprov]})
    lifted = await _lift_orphans(cast(KubeClient, api), {"simkube": "10s"})
    assert lifted == ["kwok-1795860000000-simkube-x7k2p"]
    assert api.sent("PATCH", "/api/v1/nodes/kwok-1795860000000-simkube-x7k2p") == [
        {"metadata": {"annotations": {"simkube.dev/ready-after": "10s"}}}]


CLAIMS = "/apis/karpenter.sh/v1/nodeclaims"
NODE = "/api/v1/nodes/kwok-simkube-x7k2p-owl-1-abc-42"


@pytest.mark.parametrize(("now", "created"), [
    ({"metadata": {**CLAIM["metadata"], "uid": "u1"}}, True),
    ({"metadata": {**CLAIM["metadata"], "uid": "u1",
                   "deletionTimestamp": "2026-11-29T11:45:42Z"}}, False),
    ({"metadata": {**CLAIM["metadata"], "uid": "u2"}}, False),  # deleted, made again
    (None, False),  # gone
])
async def test_a_claim_deleted_since_the_list_gets_no_node(now: dict[str, Any] | None,
                                                           created: bool) -> None:
    listed = {**CLAIM, "metadata": {**CLAIM["metadata"], "uid": "u1"}}
    path = f"{CLAIMS}/simkube-x7k2p"
    api = FakeApi(lists={CLAIMS: [listed]}, objects={path: {**listed, **now}} if now else {},
                  absent=(NODE,) if now else (NODE, path))
    made = await _recover(cast(KubeClient, api), grace_s=0)
    assert made == (["kwok-simkube-x7k2p-owl-1-abc-42"] if created else [])
    assert bool(api.sent("POST", "/api/v1/nodes")) == created
