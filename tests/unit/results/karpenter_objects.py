"""Karpenter-shaped objects (v1.13, KWOK provider) for the results tests.

Shaped as Karpenter records them: its Events (``source.component: karpenter``, the status
controller's transition messages, the disruption controller's), NodeClaims (labels copied
from the Node at launch, ``kwok://`` provider id, conditions), and the Nodes its KWOK
provider creates (``kwok-<nodeclaim>-<random>-<number>``, hostname label = the NodeClaim).
"""

from __future__ import annotations

from typing import Any

Object = dict[str, Any]
POOL = "simkube"


def event(reason: str, message: str, *, kind: str, name: str, uid: str | None = None,
          last: str = "2026-11-25T07:00:10Z") -> Object:
    return {"metadata": {"uid": uid or f"{reason}-{kind}-{name}", "name": f"{name}.1",
                         "namespace": "default", "resourceVersion": "1"},
            "reason": reason, "message": message, "type": "Normal", "count": 1,
            "lastTimestamp": last, "source": {"component": "karpenter"},
            "reportingComponent": "karpenter", "involvedObject": {"kind": kind, "name": name}}


def launched(claim: str, **kwargs: Any) -> Object:
    return event("Launched", "Status condition transitioned, Type: Launched, Status: Unknown "
                 "-> True, Reason: Launched", kind="NodeClaim", name=claim, **kwargs)


def terminating(node: str, why: str, **kwargs: Any) -> Object:
    return event("DisruptionTerminating", f"Disrupting Node: {why}", kind="Node", name=node,
                 **kwargs)


def node_name(claim: str) -> str:
    return f"kwok-{claim}-owl-1-8ogehg93ye-1067793287"


def node(claim: str, *, group: str = "large", instance_type: str = "m5.2xlarge") -> Object:
    return {"metadata": {
                "name": node_name(claim), "uid": f"uid-{claim}", "resourceVersion": "1",
                "labels": {"simkube.dev/node-group": group, "karpenter.sh/nodepool": POOL,
                           "node.kubernetes.io/instance-type": instance_type,
                           "karpenter.sh/capacity-type": "on-demand",
                           "topology.kubernetes.io/zone": "us-east-1a",
                           "kubernetes.io/hostname": claim, "karpenter.sh/registered": "true"},
                "annotations": {"kwok.x-k8s.io/node": "fake"}},
            "spec": {"providerID": f"kwok://{node_name(claim)}"}}


def nodeclaim(claim: str, *, group: str | None = "large", launched_at: str | None = None,
              deleted_at: str | None = None, disruption: str | None = None,
              created: str = "2026-11-25T07:00:00Z", expire_after: str = "Never") -> Object:
    labels = {"karpenter.sh/nodepool": POOL}
    status: Object = {"conditions": []}
    if launched_at is not None:
        if group:
            labels.update({"simkube.dev/node-group": group,
                           "node.kubernetes.io/instance-type": "m5.2xlarge"})
        status["providerID"] = f"kwok://{node_name(claim)}"
        status["conditions"].append({"type": "Launched", "status": "True",
                                     "reason": "Launched", "lastTransitionTime": launched_at})
    if disruption is not None:
        status["conditions"].append({"type": "DisruptionReason", "status": "True",
                                     "reason": disruption, "lastTransitionTime": deleted_at})
    metadata: Object = {"name": claim, "uid": f"claim-{claim}", "labels": labels,
                        "creationTimestamp": created, "resourceVersion": "1"}
    if deleted_at is not None:
        metadata["deletionTimestamp"] = deleted_at
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": metadata,
            "spec": {"expireAfter": expire_after, "nodeClassRef": {"name": POOL}},
            "status": status}
