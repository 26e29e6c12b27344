"""Node groups: read from a file or a ConfigMap, priced, reset to their minimum (sk-cloudprov's
Deployments, or Karpenter's NodeClaims), and the errors that name what went wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from simkube.cloudprov.naming import GROUP_LABEL
from simkube.core.kubeapi import NODE_CLAIMS, NODE_POOLS, KubeClient
from simkube.ctrl import nodegroups
from tests.support.fake_api import FakeApi

pytestmark = pytest.mark.unit
GROUPS_FILE = Path(__file__).resolve().parents[3] / "services/simkube/env/services/node-groups.yaml"
CONFIGMAP = "/api/v1/namespaces/ops/configmaps/groups"
NODES = "/api/v1/nodes"
DEPLOYMENTS = "/apis/apps/v1/namespaces/sk-cloudprov/deployments"
INSTANCES = "/api/v1/namespaces/sk-cloudprov/pods"


def node(name: str, group: str, *, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {GROUP_LABEL: group}}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-25T07:00:00Z"
    return {"metadata": meta}


def kube(api: FakeApi) -> KubeClient:
    return cast(KubeClient, api)


async def test_load_from_a_file_and_a_configmap() -> None:
    from_file = await nodegroups.load(kube(FakeApi()), str(GROUPS_FILE))
    assert nodegroups.prices(from_file) == {"small": 0.096, "large": 0.384}
    api = FakeApi(objects={CONFIGMAP: {"data": {"config.yaml": GROUPS_FILE.read_text()}}})
    from_map = await nodegroups.load(kube(api), "configmap:ops/groups")
    assert set(from_map.groups) == {"small", "large"}
    assert nodegroups.prices(None) == {}


@pytest.mark.parametrize("reference", ["configmap:ops", "configmap:/x", "configmap:a/b/c"])
async def test_a_bad_configmap_reference(reference: str) -> None:
    with pytest.raises(nodegroups.NodeGroupError, match="configmap:NAMESPACE/NAME"):
        await nodegroups.load(kube(FakeApi()), reference)


async def test_a_missing_configmap() -> None:
    with pytest.raises(nodegroups.NodeGroupError, match="cannot read ConfigMap ops/groups"):
        await nodegroups.load(kube(FakeApi(absent=(CONFIGMAP,))), "configmap:ops/groups")


async def test_nodes_being_deleted_do_not_count() -> None:
    api = FakeApi(lists={NODES: [node("s1", "small"), node("s2", "small", deleting=True),
                                 node("l1", "large")]})
    assert await nodegroups.count_nodes(kube(api), "small") == 1


async def test_reset_sets_each_group_to_its_minimum_and_waits_for_the_nodes() -> None:
    config = await nodegroups.load(kube(FakeApi()), str(GROUPS_FILE))
    members = [node("s1", "small"), node("s2", "small"), node("l1", "large")]
    api = FakeApi(lists={NODES: members, INSTANCES: members})
    await nodegroups.reset(kube(api), config, timeout=1)
    assert api.sent("PATCH", f"{DEPLOYMENTS}/small") == [{"spec": {"replicas": 2}}]
    assert api.sent("PATCH", f"{DEPLOYMENTS}/large") == [{"spec": {"replicas": 1}}]


async def test_a_group_that_does_not_settle_is_an_error() -> None:
    config = await nodegroups.load(kube(FakeApi()), str(GROUPS_FILE))
    api = FakeApi(lists={NODES: [node("s1", "small")], INSTANCES: [node("s1", "small")]})
    with pytest.raises(nodegroups.NodeGroupError,
                       match="node group 'small' has 1 Nodes and 1 instances, not its minSize 2"):
        await nodegroups.reset(kube(api), config, timeout=0.05)


async def test_an_instance_still_terminating_keeps_the_reset_waiting() -> None:
    config = await nodegroups.load(kube(FakeApi()), str(GROUPS_FILE))
    members = [node("s1", "small"), node("s2", "small"), node("l1", "large")]
    leaving = [*members, node("l2", "large", deleting=True)]  # its Node is gone already
    api = FakeApi(lists={NODES: members, INSTANCES: leaving})
    with pytest.raises(nodegroups.NodeGroupError,
                       match="'large' has 1 Nodes and 2 instances, not its minSize 1"):
        await nodegroups.reset(kube(api), config, timeout=0.05)
    assert await nodegroups.count_instances(kube(api), namespace="sk-cloudprov",
                                            group="large") == 2


async def test_a_missing_deployment_hints_at_sk_cloudprov() -> None:
    config = await nodegroups.load(kube(FakeApi()), str(GROUPS_FILE))
    api = FakeApi(absent=(f"{DEPLOYMENTS}/small",))
    with pytest.raises(nodegroups.NodeGroupError, match="is sk-cloudprov running"):
        await nodegroups.reset(kube(api), config)


# sk-cloudprov's group Deployments: absent where Karpenter makes the nodes (the groups'
# namespace exists either way: env up makes it for the run's ConfigMap).
CLOUDPROV_GROUPS = (f"{DEPLOYMENTS}/small", f"{DEPLOYMENTS}/large")


async def test_with_karpenter_every_nodeclaim_goes() -> None:
    config = await nodegroups.load(kube(FakeApi()), str(GROUPS_FILE))
    api = FakeApi(lists={NODE_POOLS.path(): [{"metadata": {"name": "default"}}],
                         NODE_CLAIMS.path(): [{"metadata": {"name": "claim-1"}}]},
                  absent=CLOUDPROV_GROUPS)
    assert await nodegroups.karpenter_provides(kube(api), config)
    # The fake keeps listing the claim: Karpenter never removes it here.
    with pytest.raises(nodegroups.NodeGroupError, match="is Karpenter running"):
        await nodegroups.reset(kube(api), config, timeout=0.05)
    assert ("DELETE", f"{NODE_CLAIMS.path()}/claim-1") in api.requests
    assert api.sent("PATCH") == []


async def test_with_karpenter_and_no_claims_the_reset_is_done() -> None:
    config = await nodegroups.load(kube(FakeApi()), str(GROUPS_FILE))
    api = FakeApi(lists={NODE_POOLS.path(): [{"metadata": {"name": "default"}}]},
                  absent=CLOUDPROV_GROUPS)
    await nodegroups.reset(kube(api), config, timeout=1)
    assert [m for m, _ in api.requests if m == "DELETE"] == []


async def test_sk_cloudprovs_groups_or_no_karpenter_means_sk_cloudprov() -> None:
    config = await nodegroups.load(kube(FakeApi()), str(GROUPS_FILE))
    assert not await nodegroups.karpenter_provides(kube(FakeApi()), config)
    no_crds = FakeApi(absent=(*CLOUDPROV_GROUPS, NODE_POOLS.path()))
    assert not await nodegroups.karpenter_provides(kube(no_crds), config)
