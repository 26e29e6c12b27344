"""Cluster Autoscaler's call sequences against a real cluster: scale up, schedule, scale down.

The client makes the calls CA makes (TargetSize, IncreaseSize, NodeGroupNodes,
NodeGroupForNode for every node, DeleteNodes, DecreaseTargetSize) and checks what a user of
the simulated cluster would see: Nodes, their labels, taints and capacity, where the real
scheduler puts pods, which Nodes a scale-down removes.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from simkube.core.kubeapi import ApiError
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import externalgrpc_pb2 as pb
from simkube.gen.k8s.api.core.v1 import node_pb2
from tests.integration.cloudprov.conftest import WAIT, Harness
from tests.support.kube import FAKE_TOLERATION, eventually

pytestmark = pytest.mark.integration
RUNNING = pb.InstanceStatus.instanceRunning


def shape_group(group: str, *, max_size: int = 10, min_size: int = 0) -> dict[str, Any]:
    return {"id": group, "minSize": min_size, "maxSize": max_size, "pricePerHour": 0.1,
            "shape": {"cpu": 4, "memory": "16Gi", "instanceType": "sim.large", "zone": "sim-a"}}


async def test_scale_from_zero_then_the_scheduler_uses_the_nodes(harness: Harness) -> None:
    group = f"m5-{harness.suffix}"
    await harness.start([{"id": group, "maxSize": 5, "pricePerHour": 0.384,
                          "nodeFile": "m5.yaml"}])
    stub = harness.stub
    assert await harness.target(group) == 0
    template = node_pb2.Node.FromString((await stub.NodeGroupTemplateNodeInfo(
        pb.NodeGroupTemplateNodeInfoRequest(id=group))).nodeBytes)

    await stub.NodeGroupIncreaseSize(pb.NodeGroupIncreaseSizeRequest(id=group, delta=3))
    assert await harness.target(group) == 3  # visible as soon as IncreaseSize returns
    states = await harness.running(group, 3)

    nodes = await harness.nodes()
    assert {n["spec"]["providerID"] for n in nodes.values()} == set(states)
    for name, node in nodes.items():
        labels = node["metadata"]["labels"]
        assert labels["node.kubernetes.io/instance-type"] == "m5.2xlarge"
        assert labels["topology.kubernetes.io/zone"] == "us-east-1b"
        assert labels["team"] == "payments"
        assert labels["kubernetes.io/hostname"] == name
        assert {k: v for k, v in labels.items() if k != "kubernetes.io/hostname"} == \
            {k: v for k, v in template.metadata.labels.items() if k != "kubernetes.io/hostname"}
        taints = {(t["key"], t.get("value"), t["effect"]) for t in node["spec"]["taints"]}
        assert {("dedicated", "payments", "NoSchedule"),
                ("kwok.x-k8s.io/node", "fake", "NoSchedule")} <= taints
        assert node["status"]["capacity"]["memory"] == "32408488Ki"
        assert node["status"]["allocatable"]["cpu"] == "7910m"
        assert node["spec"]["podCIDR"].startswith("10.")
        # Every node CA lists resolves to the group, as does the name-only form.
        reply = await stub.NodeGroupForNode(pb.NodeGroupForNodeRequest(node=pb.ExternalGrpcNode(
            providerID=node["spec"]["providerID"], name=name, labels=labels)))
        assert reply.nodeGroup.id == group
    assert len({n["spec"]["podCIDR"] for n in nodes.values()}) == 3

    # Pods that need most of a node's CPU, tolerating the group's taint: one per node.
    workload = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "payments"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "payments"}},
                 "template": {"metadata": {"labels": {"app": "payments"}}, "spec": {
                     "containers": [{"name": "app", "image": "registry.example/app:1",
                                     "resources": {"requests": {"cpu": "5"}}}],
                     "tolerations": [FAKE_TOLERATION, {"key": "dedicated", "value": "payments",
                                                        "effect": "NoSchedule"}],
                     "nodeSelector": {"simkube.dev/node-group": group}}}}}
    await harness.api.request("POST",
                              f"/apis/apps/v1/namespaces/{harness.namespace}/deployments",
                              body=workload)

    async def placed() -> set[str] | None:
        pods = [p for p in (await harness.pods()).values()
                if p["metadata"].get("labels", {}).get("app") == "payments"
                and p.get("status", {}).get("phase") == "Running"]
        hosts = {p["spec"].get("nodeName") for p in pods}
        return hosts if len(pods) == 3 else None
    assert await eventually(placed, timeout=WAIT, what="3 payments pods running") == set(nodes)


async def test_delete_nodes_removes_exactly_the_chosen_nodes(harness: Harness) -> None:
    group = f"web-{harness.suffix}"
    await harness.start([shape_group(group, min_size=1)])
    await harness.running(group, 1)  # a new group starts at its minSize
    await harness.stub.NodeGroupIncreaseSize(pb.NodeGroupIncreaseSizeRequest(id=group, delta=3))
    await harness.running(group, 4)
    nodes = await harness.nodes()
    names = sorted(nodes)
    chosen, kept = [names[0], names[2]], [names[1], names[3]]
    kept_pods = {n: (await harness.pods())[n]["metadata"]["uid"] for n in kept}

    await harness.stub.NodeGroupDeleteNodes(pb.NodeGroupDeleteNodesRequest(id=group, nodes=[
        pb.ExternalGrpcNode(providerID=nodes[n]["spec"]["providerID"], name=n,
                            labels=nodes[n]["metadata"]["labels"]) for n in chosen]))
    assert await harness.target(group) == 2

    async def settled() -> bool:
        return set(await harness.nodes()) == set(kept) and set(await harness.pods()) == set(kept)
    await eventually(settled, timeout=WAIT, what=f"only {kept} left")
    pods = await harness.pods()
    assert {n: pods[n]["metadata"]["uid"] for n in kept} == kept_pods  # untouched
    assert set(await harness.instances(group)) == {f"simkube://{n}" for n in kept}

    refused = grpc.StatusCode.OUT_OF_RANGE
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await harness.stub.NodeGroupDeleteNodes(pb.NodeGroupDeleteNodesRequest(
            id=group, nodes=[pb.ExternalGrpcNode(name=n) for n in kept]))
    assert caught.value.code() == refused
    assert "below its minSize 1" in str(caught.value.details())


async def test_a_batch_of_deletions_removes_the_oldest_nodes_it_names(harness: Harness) -> None:
    # Cluster Autoscaler deletes a batch of empty nodes as one DeleteNodes call per node, all
    # at once. Here they name the oldest instances: a ReplicaSet controller that ranked the
    # pods without seeing the marks would remove the newest instead.
    group = f"batch-{harness.suffix}"
    await harness.start([shape_group(group, min_size=2)])
    await harness.running(group, 2)
    oldest = sorted(await harness.nodes())
    await asyncio.sleep(2)  # ready for twice as long as the next ones, in the controller's rank
    await harness.stub.NodeGroupIncreaseSize(pb.NodeGroupIncreaseSizeRequest(id=group, delta=4))
    await harness.running(group, 6)
    newest = sorted(set(await harness.nodes()) - set(oldest))
    chosen = [*oldest, newest[0]]
    kept_pods = {n: p["metadata"]["uid"] for n, p in (await harness.pods()).items()
                 if n not in chosen}
    nodes = await harness.nodes()
    await asyncio.gather(*(harness.stub.NodeGroupDeleteNodes(pb.NodeGroupDeleteNodesRequest(
        id=group, nodes=[pb.ExternalGrpcNode(providerID=nodes[n]["spec"]["providerID"],
                                             name=n)])) for n in chosen))
    assert await harness.target(group) == 3

    async def settled() -> bool:
        return set(await harness.nodes()) == set(kept_pods) == set(await harness.pods())
    await eventually(settled, timeout=WAIT, what=f"only {sorted(kept_pods)} left")
    pods = await harness.pods()
    assert {n: pods[n]["metadata"]["uid"] for n in kept_pods} == kept_pods  # none replaced


async def block_node_creation(harness: Harness, group: str) -> None:
    """Make the API server refuse this group's Nodes: its instances never register."""
    name = f"block-{harness.namespace}"
    admission = "/apis/admissionregistration.k8s.io/v1"
    await harness.api.request("POST", f"{admission}/validatingadmissionpolicies", body={
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {"failurePolicy": "Fail",
                 "matchConstraints": {"resourceRules": [{
                     "apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                     "resources": ["nodes"]}]},
                 "validations": [{
                     "expression": "object.metadata.?labels[?'simkube.dev/node-group']"
                                   f".orValue('') != '{group}'",
                     "message": "this test keeps the group's instances unregistered"}]}})
    await harness.api.request("POST", f"{admission}/validatingadmissionpolicybindings", body={
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name},
        "spec": {"policyName": name, "validationActions": ["Deny"]}})
    probe_node = {"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": f"probe-{harness.namespace}", "labels": {"simkube.dev/node-group": group}}}

    async def enforced() -> bool:
        try:
            await harness.api.request("POST", "/api/v1/nodes", body=probe_node,
                                      query={"dryRun": "All"})
        except ApiError as exc:
            return exc.code in (403, 422)
        return False
    await eventually(enforced, timeout=WAIT, what="the admission policy in force")


async def remove_block(harness: Harness) -> None:
    admission = "/apis/admissionregistration.k8s.io/v1"
    name = f"block-{harness.namespace}"
    await harness.api.request("DELETE", f"{admission}/validatingadmissionpolicybindings/{name}")
    await harness.api.request("DELETE", f"{admission}/validatingadmissionpolicies/{name}")


async def test_decrease_target_size_only_cancels_unregistered_instances(
        harness: Harness) -> None:
    ready, blocked = f"ready-{harness.suffix}", f"blocked-{harness.suffix}"
    await block_node_creation(harness, blocked)
    try:
        await harness.start([shape_group(ready), shape_group(blocked)])
        stub = harness.stub
        await stub.NodeGroupIncreaseSize(pb.NodeGroupIncreaseSizeRequest(id=ready, delta=2))
        await harness.running(ready, 2)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.NodeGroupDecreaseTargetSize(
                pb.NodeGroupDecreaseTargetSizeRequest(id=ready, delta=-1))
        assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "would remove registered nodes" in str(caught.value.details())
        assert await harness.target(ready) == 2

        await stub.NodeGroupIncreaseSize(pb.NodeGroupIncreaseSizeRequest(id=blocked, delta=3))

        async def three_creating() -> dict[str, int] | None:
            states = await harness.instances(blocked)
            creating = [s for s in states.values() if s == pb.InstanceStatus.instanceCreating]
            return states if len(creating) == 3 else None
        await eventually(three_creating, timeout=WAIT, what="3 unregistered instances")
        await stub.NodeGroupDecreaseTargetSize(
            pb.NodeGroupDecreaseTargetSizeRequest(id=blocked, delta=-1))
        assert await harness.target(blocked) == 2

        # CA deletes an instance that never registered by the node it invents for it,
        # choosing among those still being created (the cancelled one is deleting).
        states = await harness.instances(blocked)
        creating = sorted(i for i, s in states.items() if s == pb.InstanceStatus.instanceCreating)
        assert len(creating) == 2, states
        victim = creating[0]
        await stub.NodeGroupDeleteNodes(pb.NodeGroupDeleteNodesRequest(id=blocked, nodes=[
            pb.ExternalGrpcNode(providerID=victim, name=victim, annotations={
                "k8s.io/cluster-autoscaler/fake-node-reason": "unregistered"})]))
        assert await harness.target(blocked) == 1

        async def one_left() -> bool:
            left = {n for n in await harness.pods() if n.startswith(blocked)}
            return len(left) == 1 and victim.removeprefix("simkube://") not in left
        await eventually(one_left, timeout=WAIT, what="one unregistered instance left")
    finally:
        await remove_block(harness)


async def test_concurrent_increases_never_pass_max(harness: Harness) -> None:
    group = f"burst-{harness.suffix}"
    await harness.start([shape_group(group, max_size=6)])
    calls = [harness.stub.NodeGroupIncreaseSize(pb.NodeGroupIncreaseSizeRequest(id=group,
                                                                                delta=1))
             for _ in range(8)]
    results = await asyncio.gather(*calls, return_exceptions=True)
    refused = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
    assert len(refused) == 2
    assert all(r.code() == grpc.StatusCode.OUT_OF_RANGE for r in refused)
    assert await harness.target(group) == 6
    await harness.running(group, 6)
    assert len(await harness.nodes()) == 6


async def test_a_restart_loses_nothing(harness: Harness) -> None:
    group = f"keep-{harness.suffix}"
    await harness.start([shape_group(group)])
    await harness.stub.NodeGroupIncreaseSize(pb.NodeGroupIncreaseSizeRequest(id=group, delta=2))
    before = await harness.running(group, 2)
    uids = {n: node["metadata"]["uid"] for n, node in (await harness.nodes()).items()}
    # Stop right after a scale-up returns, likely before its Nodes exist.
    await harness.stub.NodeGroupIncreaseSize(pb.NodeGroupIncreaseSizeRequest(id=group, delta=2))
    await harness.stop()

    await harness.start()
    assert await harness.target(group) == 4
    after = await harness.running(group, 4)
    assert set(before) < set(after)
    nodes = await harness.nodes()
    assert {n: nodes[n]["metadata"]["uid"] for n in uids} == uids  # the same Nodes, not new ones
    await harness.stub.NodeGroupDeleteNodes(pb.NodeGroupDeleteNodesRequest(
        id=group, nodes=[pb.ExternalGrpcNode(providerID=i) for i in sorted(before)]))
    assert await harness.target(group) == 2
    await harness.running(group, 2)
    assert set(await harness.instances(group)) == set(after) - set(before)
