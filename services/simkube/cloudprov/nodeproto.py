"""A Node manifest in Kubernetes' protobuf encoding, for NodeGroupTemplateNodeInfo.

Cluster Autoscaler decodes ``nodeBytes`` as a bare ``k8s.io.api.core.v1.Node`` (no ``k8s\\0``
envelope). The subset schema in proto/k8s/api/core/v1/node.proto covers what a template
needs: name, labels, annotations, providerID, unschedulable, taints, capacity, allocatable,
conditions and the node's OS, architecture and kubelet version. Anything else in the
manifest is not encoded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simkube.gen.k8s.api.core.v1 import node_pb2


def encode_node(node: Mapping[str, Any]) -> bytes:
    message = node_pb2.Node()
    metadata = node.get("metadata") or {}
    message.metadata.name = metadata.get("name", "")
    message.metadata.labels.update(metadata.get("labels") or {})
    message.metadata.annotations.update(metadata.get("annotations") or {})
    spec = node.get("spec") or {}
    if spec.get("providerID"):
        message.spec.providerID = spec["providerID"]
    if spec.get("unschedulable"):
        message.spec.unschedulable = True
    for taint in spec.get("taints") or []:
        message.spec.taints.add(key=taint["key"], value=taint.get("value", ""),
                                effect=str(taint["effect"]))
    status = node.get("status") or {}
    for field in ("capacity", "allocatable"):
        resources = getattr(message.status, field)
        for name, quantity in (status.get(field) or {}).items():
            resources[name].string = str(quantity)
    for condition in status.get("conditions") or []:
        message.status.conditions.add(**{k: condition[k] for k in
                                         ("type", "status", "reason", "message")
                                         if k in condition})
    info = status.get("nodeInfo") or {}
    for field in ("kubeletVersion", "operatingSystem", "architecture"):
        if info.get(field):
            setattr(message.status.nodeInfo, field, info[field])
    return message.SerializeToString(deterministic=True)
