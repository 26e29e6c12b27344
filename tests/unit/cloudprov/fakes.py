"""An in-memory stand-in for the API server that echoes every change into a ClusterIndex.

Unit tests of the reconciler, scaler and servicer need the API's answers (201, 404, 409 on a
stale resourceVersion) and the watch's echo, not a cluster. ``FakeCluster.request`` has the
same signature as ``KubeClient.request``; ``fail`` makes the next matching call raise.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
from typing import Any

import yaml

from simkube.cloudprov.config import CloudConfig, parse
from simkube.cloudprov.current_run import CurrentRun
from simkube.cloudprov.index import ClusterIndex, Kind, is_ready
from simkube.cloudprov.manifests import fake_node, placeholder_deployment
from simkube.cloudprov.naming import (
    DELETION_COST_ANNOTATION,
    GROUP_LABEL,
    IN_SERVICE,
    IN_SERVICE_LABEL,
    LOWEST_DELETION_COST,
)
from simkube.cloudprov.scaling import Scaler
from simkube.core.kubeapi import ApiError, KubeClient
from simkube.core.simtime import TimeScale
from simkube.simulation.run_configmap import RunTiming

NAMESPACE = "sk-test"
DEPLOYMENT = f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/small"
PODS = f"/api/v1/namespaces/{NAMESPACE}/pods"
REPLICA_SETS = f"/apis/apps/v1/namespaces/{NAMESPACE}/replicasets"
MARKED = {DELETION_COST_ANNOTATION: LOWEST_DELETION_COST}  # a pod chosen for removal
GROUPS = f"""
namespace: {NAMESPACE}
gpu: {{label: example.com/gpu, types: [t4, a100]}}
provisioning: {{delay: 0s, readyAfter: 0s}}  # instant; test_provisioning.py times it
nodeGroups:
- id: small
  minSize: 1
  maxSize: 5
  pricePerHour: 0.5
  shape: {{cpu: 2, memory: 8Gi, instanceType: s2, zone: z1, taints: ["team=a:NoSchedule"]}}
  options: {{scaleDownUnneededDuration: 2m, scaleDownUtilizationThreshold: 0.3}}
- id: gpu
  maxSize: 3
  pricePerHour: 3.0
  shape: {{cpu: 8, memory: 61Gi, instanceType: p3, zone: z2, gpu: {{type: t4, count: 2}}}}
"""

# A run at speed 2: held, its clock keeps half its pace (real time), so each held second
# slips the schedule by half a second; at speed 1 holds would change nothing.
HELD_AT_HALF = RunTiming(scale=TimeScale(2.0), run="shop-r1")


def make_config(text: str = GROUPS) -> CloudConfig:
    def no_files(ref: str, what: str) -> dict[str, Any]:
        raise AssertionError(f"unexpected read of {ref}")
    return parse(yaml.safe_load(text), source="test.yaml", read=no_files)


def merge(target: dict[str, Any], patch: dict[str, Any]) -> None:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


def json_patch(target: dict[str, Any], operations: list[dict[str, Any]]) -> None:
    """The ``test`` and ``replace`` operations of RFC 6902, as the scaler uses them."""
    for operation in operations:
        *parents, leaf = operation["path"].strip("/").split("/")
        holder = target
        for part in parents:
            holder = holder[part]
        if operation["op"] == "test" and holder.get(leaf) != operation["value"]:
            raise ApiError(code=422, reason="Invalid", message="test operation failed")
        if operation["op"] == "replace":
            holder[leaf] = operation["value"]


def kind_of(path: str) -> Kind:
    for part, kind in (("/deployments", Kind.DEPLOYMENT), ("/pods", Kind.POD),
                       ("/nodes", Kind.NODE)):
        if part in path:
            return kind
    raise AssertionError(f"unexpected path {path}")


class FakeCluster(KubeClient):
    """``KubeClient`` with ``request`` answered from memory (core's patch and delete
    helpers build on it)."""

    def __init__(self, index: ClusterIndex) -> None:  # no ApiClient: nothing goes out

        self.index = index
        self.objects: dict[str, dict[str, Any]] = {}
        self.calls: list[tuple[str, str, Any]] = []
        self.failures: list[tuple[str, str, ApiError]] = []
        self.echo = True
        # The ReplicaSet controller's status as of its last look at the pods, per group;
        # absent: it is up to date with every pod (see ``replica_sets``).
        self.replica_set_cache: dict[str, dict[str, int]] = {}
        self._versions = itertools.count(100)

    def fail(self, method: str, path_part: str, *, code: int = 500) -> None:
        self.failures.append((method, path_part, ApiError(code=code, reason="Injected",
                                                           message="injected failure")))

    def put(self, path: str, obj: dict[str, Any], *, event: str = "ADDED") -> None:
        obj.setdefault("metadata", {})["resourceVersion"] = str(next(self._versions))
        self.objects[path] = obj
        if self.echo:
            self.index.observed(kind_of(path), event, copy.deepcopy(obj))

    def remove(self, path: str) -> None:
        obj = self.objects.pop(path)
        if self.echo:
            self.index.observed(kind_of(path), "DELETED", obj)

    async def request(self, method: str, path: str, *, body: Any = None,
                      query: Any = None, content_type: Any = None) -> dict[str, Any]:
        self.calls.append((method, path, copy.deepcopy(body)))
        for index, (failing, part, error) in enumerate(self.failures):
            if failing == method and part in path:
                del self.failures[index]
                raise error
        if method == "GET" and path == REPLICA_SETS:
            return self.replica_sets(str(query["labelSelector"]))
        if method == "POST":
            target = f"{path}/{body['metadata']['name']}"
            if target in self.objects:
                raise ApiError(code=409, reason="AlreadyExists", message=target)
            self.put(target, copy.deepcopy(body))
            return body  # type: ignore[no-any-return]
        if path not in self.objects:
            raise ApiError(code=404, reason="NotFound", message=path)
        current = self.objects[path]
        if method == "GET":
            return current
        if method == "DELETE":
            self.remove(path)
            return {}
        updated = copy.deepcopy(current)
        if isinstance(body, list):
            json_patch(updated, body)
        else:
            merge(updated, body)
        self.put(path, updated, event="MODIFIED")
        return updated

    def replica_sets(self, selector: str) -> dict[str, Any]:
        """The group's ReplicaSet, its status counted from the pods as its controller does."""
        group = selector.removeprefix(f"{GROUP_LABEL}=")
        status = self.replica_set_cache.get(group) or self.replica_set_status(group)
        return {"items": [{"metadata": {"name": f"{group}-5d9f", "labels": {GROUP_LABEL: group}},
                           "status": status}]}

    def replica_set_status(self, group: str) -> dict[str, int]:
        active = [pod["metadata"] for pod in self.pods_of(group)]
        return {"replicas": len(active),
                "fullyLabeledReplicas": sum(1 for meta in active
                                            if meta["labels"].get(IN_SERVICE_LABEL) == IN_SERVICE),
                "readyReplicas": sum(1 for pod in self.pods_of(group) if is_ready(pod))}

    def pods_of(self, group: str) -> list[dict[str, Any]]:
        return [pod for path, pod in self.objects.items()
                if path.startswith(PODS) and pod["metadata"]["labels"].get(GROUP_LABEL) == group
                and not pod["metadata"].get("deletionTimestamp")]

    # Building a cluster state.

    def deployment(self, config: CloudConfig, group: str, replicas: int) -> None:
        body = placeholder_deployment(config.groups[group], namespace=NAMESPACE,
                                      infra=config.infra_node, replicas=replicas)
        self.put(f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{group}", body)

    def pod(self, group: str, name: str, *, ready: bool = True, **annotations: str) -> None:
        """A placeholder pod, Running and Ready as KWOK leaves it unless ``ready`` is False
        (then Pending, as just created); one given MARKED is out of service, as the scaler
        leaves it."""
        labels = {GROUP_LABEL: group}
        if annotations.get(DELETION_COST_ANNOTATION) != LOWEST_DELETION_COST:
            labels[IN_SERVICE_LABEL] = IN_SERVICE
        status: dict[str, Any] = {"phase": "Pending"}
        if ready:
            status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
        self.put(f"/api/v1/namespaces/{NAMESPACE}/pods/{name}", {
            "metadata": {"name": name, "labels": labels, "annotations": dict(annotations)},
            "status": status})

    def node(self, config: CloudConfig, group: str, name: str, *, ready: bool = True) -> None:
        body = fake_node(config.groups[group], namespace=NAMESPACE, name=name, pod_cidr=None)
        body["status"]["conditions"] = [{"type": "Ready", "status": str(ready)}]
        self.put(f"/api/v1/nodes/{name}", body)

    def soft_taint(self, name: str, *, value: str) -> None:
        """Node ``name`` gets Cluster Autoscaler's unneeded mark (its value: a Unix second)."""
        path = f"/api/v1/nodes/{name}"
        node = self.objects[path]
        node["spec"]["taints"].append({"key": "DeletionCandidateOfClusterAutoscaler",
                                       "value": value, "effect": "PreferNoSchedule"})
        self.put(path, node, event="MODIFIED")

    def paths(self, kind: Kind) -> list[str]:
        return sorted(p for p in self.objects if kind_of(p) is kind)


class ScalingSetup:
    """A Scaler on a FakeCluster: group ``small`` at 3 replicas with Nodes a, b, c (min 1,
    max 5) and group ``gpu`` with Node g."""

    def __init__(self) -> None:
        config = self.config = make_config()
        self.cluster = cluster = FakeCluster(ClusterIndex(groups=config.groups))
        self.current = CurrentRun(timing=HELD_AT_HALF)
        self.scaler = Scaler(api=cluster, index=cluster.index, config=config, settle=0.5,
                             current=self.current)
        cluster.deployment(config, "small", 3)
        cluster.deployment(config, "gpu", 1)
        for name in "abc":
            cluster.pod("small", name)
            cluster.node(config, "small", name)
        cluster.pod("gpu", "g")
        cluster.node(config, "gpu", "g")
        cluster.calls.clear()

    def deadline(self) -> float:
        return asyncio.get_running_loop().time() + 5

    def replicas(self) -> int:
        return self.scaler.replicas("small")

    def marked(self) -> set[str]:
        return {name for name, pod in self.cluster.index.groups["small"].pods.items()
                if pod.marked}

    def writes(self) -> list[tuple[str, str]]:
        return [(m, p) for m, p, _ in self.cluster.calls if m != "GET"]

    def replica_set_removes_marked(self) -> None:
        """What the ReplicaSet controller does with pods cheaper than the rest."""
        for name in sorted(self.marked()):
            self.cluster.remove(f"{PODS}/{name}")
