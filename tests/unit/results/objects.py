"""Minimal Kubernetes objects, shaped as the API server sends them, for the results tests."""

from __future__ import annotations

from typing import Any

Object = dict[str, Any]


def node(name: str, *, group: str | None = None, fake: bool = True, infra: bool = False,
         version: str = "1") -> Object:
    labels: dict[str, str] = {}
    if group:
        labels["simkube.dev/node-group"] = group
    if infra:
        labels["simkube.dev/placeholder-infra"] = "true"
    annotations = {"kwok.x-k8s.io/node": "fake"} if fake else {}
    return {"metadata": {"name": name, "uid": f"uid-{name}", "labels": labels,
                         "annotations": annotations, "resourceVersion": version}}


def pod(name: str, *, namespace: str = "virtual-shop", node_name: str | None = None,
        phase: str = "Pending", created: str = "2026-01-01T00:00:00Z",
        scheduled_at: str | None = None, uid: str | None = None, version: str = "1") -> Object:
    conditions = []
    if scheduled_at is not None:
        conditions.append({"type": "PodScheduled", "status": "True",
                           "lastTransitionTime": scheduled_at})
    spec = {"nodeName": node_name} if node_name else {}
    return {"metadata": {"name": name, "namespace": namespace, "uid": uid or f"uid-{name}",
                         "creationTimestamp": created, "resourceVersion": version},
            "spec": spec, "status": {"phase": phase, "conditions": conditions}}


def ca_event(uid: str, *, reason: str, message: str, count: int = 1,
             last: str = "2026-01-01T00:00:10Z", involved: Object | None = None,
             component: str = "cluster-autoscaler") -> Object:
    return {"metadata": {"uid": uid, "name": uid, "namespace": "default",
                         "resourceVersion": "1"},
            "reason": reason, "message": message, "count": count, "lastTimestamp": last,
            "source": {"component": component},
            "involvedObject": involved or {"kind": "Pod", "name": "p"}}
