"""The objects sk-cloudprov creates: group Deployments, the infrastructure node, fake Nodes.

One function per object keeps what a Node looks like in one place: the Node the reconciler
creates and the template Cluster Autoscaler gets for scale-from-zero come from the same code,
so a simulated scale-up produces exactly the node CA planned for.

The placeholder pods are pinned by ``nodeName`` to an infrastructure node that belongs to no
group: they are never pending (CA would try to scale up for them), the scheduler never sees
them, and they request nothing. Their pod template never changes once created, because a
second ReplicaSet would make the Deployment controller split a scale-down between
ReplicaSets by size instead of by pod-deletion-cost.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from simkube.cloudprov.config import NodeGroupConfig
from simkube.cloudprov.naming import (
    GROUP_LABEL,
    IN_SERVICE,
    IN_SERVICE_LABEL,
    INFRA_LABEL,
    INFRA_TAINT_KEY,
    KWOK_ANNOTATION,
    KWOK_VALUE,
    MANAGED_BY_LABEL,
    MANAGER,
    NOT_READY_TAINT_KEY,
    OWNER_LABEL,
    PLACEHOLDER_ANNOTATION,
    READY_AFTER_ANNOTATION,
    READY_HELD,
    TaintEffect,
    WellKnownLabel,
    provider_id,
)
from simkube.core.fake_nodes import NODE_TYPE_LABEL, NODE_TYPE_VALUE

KWOK_TAINT = {"key": KWOK_ANNOTATION, "value": KWOK_VALUE, "effect": TaintEffect.NO_SCHEDULE}
NOT_READY_TAINT = {"key": NOT_READY_TAINT_KEY, "effect": TaintEffect.NO_SCHEDULE}
PLACEHOLDER_IMAGE = "registry.k8s.io/pause:3.10"  # never pulled: KWOK runs no containers
# Large enough for every placeholder pod of every group; tiny cpu/memory so Cluster
# Autoscaler's cluster-wide resource limits barely notice the node.
INFRA_CAPACITY = {"cpu": "1", "memory": "1Gi", "pods": "1000000"}


def infra_node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name,
                     "labels": {WellKnownLabel.HOSTNAME: name, INFRA_LABEL: "true",
                                MANAGED_BY_LABEL: MANAGER},
                     "annotations": {KWOK_ANNOTATION: KWOK_VALUE}},
        "spec": {"providerID": f"kwok://{name}",
                 "taints": [KWOK_TAINT, {"key": INFRA_TAINT_KEY, "value": "true",
                                         "effect": TaintEffect.NO_SCHEDULE}]},
        "status": {"capacity": INFRA_CAPACITY, "allocatable": INFRA_CAPACITY},
    }


def placeholder_deployment(group: NodeGroupConfig, *, namespace: str, infra: str,
                           replicas: int) -> dict[str, Any]:
    selector = {GROUP_LABEL: group.id}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": group.id, "namespace": namespace,
                     "labels": {**selector, MANAGED_BY_LABEL: MANAGER}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": selector},
            "revisionHistoryLimit": 1,
            "template": {
                "metadata": {"labels": {**selector, IN_SERVICE_LABEL: IN_SERVICE}},
                "spec": {
                    "nodeName": infra,
                    "tolerations": [{"operator": "Exists"}],  # never evicted from infra
                    "containers": [{"name": "placeholder", "image": PLACEHOLDER_IMAGE}],
                    "terminationGracePeriodSeconds": 0,
                    "automountServiceAccountToken": False,
                    "enableServiceLinks": False,
                },
            },
        },
    }


def fake_node(group: NodeGroupConfig, *, namespace: str, name: str,
              pod_cidr: str | None, registering: bool = False,
              ready_held: bool = False) -> dict[str, Any]:
    """The KWOK Node of the placeholder pod ``name`` (Node and pod share the name).

    ``registering``: the Node is created as a kubelet registers one, tainted not-ready with
    a Ready=False condition (without the condition the node lifecycle controller would lift
    the taint at once); KWOK's node-ready stage makes it Ready at once, or with
    ``ready_held`` only once sk-cloudprov sets its ready-after annotation to READY_NOW.
    Without either, it is the template CA gets.
    """
    template = group.template
    taints = [*(t.manifest() for t in template.taints), KWOK_TAINT]
    annotations = {KWOK_ANNOTATION: KWOK_VALUE, PLACEHOLDER_ANNOTATION: f"{namespace}/{name}"}
    if registering:
        taints.append(NOT_READY_TAINT)
        if ready_held:
            annotations[READY_AFTER_ANNOTATION] = READY_HELD
    spec: dict[str, Any] = {"providerID": provider_id(name), "taints": taints}
    if pod_cidr:
        spec.update(podCIDR=pod_cidr, podCIDRs=[pod_cidr])
    node: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "name": name,
            # The type label last: replayed pods select it, whatever production called "type".
            "labels": {**template.labels, WellKnownLabel.HOSTNAME: name, GROUP_LABEL: group.id,
                       OWNER_LABEL: namespace, NODE_TYPE_LABEL: NODE_TYPE_VALUE},
            "annotations": annotations,
        },
        "spec": spec,
        "status": {
            "capacity": dict(template.capacity),
            "allocatable": dict(template.allocatable),
            "nodeInfo": {"kubeletVersion": template.kubelet_version,
                         "operatingSystem": template.labels[WellKnownLabel.OS],
                         "architecture": template.labels[WellKnownLabel.ARCH]},
        },
    }
    if registering:
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        node["status"]["conditions"] = [{
            "type": "Ready", "status": "False", "reason": "KubeletNotReady",
            "message": "the instance is starting (simulated provisioning)",
            "lastHeartbeatTime": now, "lastTransitionTime": now}]
    return node


def template_node(group: NodeGroupConfig, *, namespace: str) -> dict[str, Any]:
    """What a new Node of the group will look like once Ready, for CA's scale-from-zero."""
    node = fake_node(group, namespace=namespace, name=f"{group.id}-template", pod_cidr=None)
    node["status"]["conditions"] = [{"type": "Ready", "status": "True",
                                     "reason": "KubeletReady",
                                     "message": "kubelet is posting ready status"}]
    return node
