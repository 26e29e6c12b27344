"""Objects from a production trace, rewritten to live in the simulated cluster.

What changes and why:
- namespaced objects move to ``<prefix>-<namespace>`` so a simulation never touches real
  namespaces and several can share a cluster; Namespace objects are renamed to match;
- every object gets an owner reference to the SimulationRoot, so deleting the root removes
  everything through garbage collection, and the simulation label;
- what the server or production controllers wrote is dropped: status, uid, resourceVersion,
  timestamps, managed fields, finalizers (no controller here would ever remove them, so
  cleanup would hang), old owner references (their uids do not exist here), generated Job
  selectors, Service cluster IPs, bound PersistentVolume names;
- pod templates are placed on fake nodes (``podspecs``), and those of workloads with recorded
  usage name their workload (``USAGE_WORKLOAD``) so the usage player finds their pods;
- CronJobs are suspended: sk-driver fires them on the trace's clock (``cronjobs``);
- Nodes become fake nodes: KWOK's annotation and taint, keeping their recorded capacity.
Cluster-scoped kinds keep their names. The input is never modified.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from simkube.driver.names import (
    FAKE_NODE_KEY,
    FAKE_NODE_VALUE,
    LIFECYCLE_OWNER,
    ROOT_API_VERSION,
    ROOT_KIND,
    SIMULATION_LABEL,
    USAGE_WORKLOAD,
)
from simkube.driver.options import Placement, PodTiming
from simkube.driver.podspecs import rewrite_template
from simkube.trace import (
    At,
    KubeObject,
    ObjectRef,
    TraceHeader,
    field_list,
    field_map,
    pod_templates,
    template_paths,
)

SERVER_METADATA = ("uid", "resourceVersion", "generation", "creationTimestamp",
                   "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields",
                   "selfLink", "ownerReferences", "finalizers")
CONTROLLER_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",
                          "deployment.kubernetes.io/revision",
                          "deployment.kubernetes.io/desired-replicas",
                          "deployment.kubernetes.io/max-replicas")
JOB_GENERATED_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid", "job-name",
                        "batch.kubernetes.io/job-name")
NODE_STATUS_KEPT = ("capacity", "allocatable", "nodeInfo")
FAKE_TAINT = {"key": FAKE_NODE_KEY, "value": FAKE_NODE_VALUE, "effect": "NoSchedule"}


@dataclass(frozen=True, slots=True, kw_only=True)
class RootRef:
    name: str
    uid: str

    def owner_reference(self) -> dict[str, Any]:
        # blockOwnerDeletion: a foreground delete of the root waits for every dependent.
        return {"apiVersion": ROOT_API_VERSION, "kind": ROOT_KIND, "name": self.name,
                "uid": self.uid, "blockOwnerDeletion": True}


class Rewriter:
    def __init__(self, *, simulation: str, prefix: str, root: RootRef, header: TraceHeader,
                 placement: Placement, timing: PodTiming,
                 lifecycle_owners: frozenset[str] = frozenset(),
                 usage_workloads: frozenset[str] = frozenset()) -> None:
        self.simulation = simulation
        self.prefix = prefix
        self.root = root
        self._header = header
        self._placement = placement
        self._timing = timing
        self._lifecycle_owners = lifecycle_owners
        self._usage_workloads = usage_workloads

    def namespace(self, original: str) -> str:
        return f"{self.prefix}-{original}"

    def target(self, ref: ObjectRef, *, namespaced: bool) -> ObjectRef:
        """Where ``ref`` lives in the simulated cluster."""
        if ref.api_version == "v1" and ref.kind == "Namespace":
            return ObjectRef(api_version="v1", kind="Namespace", namespace="",
                             name=self.namespace(ref.name))
        namespace = self.namespace(ref.namespace or "default") if namespaced else ""
        return ObjectRef(api_version=ref.api_version, kind=ref.kind, namespace=namespace,
                         name=ref.name)

    def rewrite(self, obj: KubeObject, *, namespaced: bool) -> KubeObject:
        """A copy of ``obj`` ready for server-side apply in the simulated cluster."""
        original = ObjectRef.of(obj)
        result = {key: copy.deepcopy(value) for key, value in obj.items() if key != "status"}
        target = self.target(original, namespaced=namespaced)
        metadata = result["metadata"]
        for key in SERVER_METADATA:
            metadata.pop(key, None)
        metadata.pop("generateName", None)
        metadata["name"] = target.name
        if target.namespace:
            metadata["namespace"] = target.namespace
        else:
            metadata.pop("namespace", None)
        at = At(str(original))
        annotations = (at / "metadata" / "annotations").map(metadata.get("annotations")) or {}
        for key in CONTROLLER_ANNOTATIONS:
            annotations.pop(key, None)
        field_map(metadata, "labels", at / "metadata")[SIMULATION_LABEL] = self.simulation
        metadata["ownerReferences"] = [self.root.owner_reference()]
        self._rewrite_kind(result, original, obj.get("status"), at=at)
        owner = f"{original.kind_key} {original.ns_name}"
        marker = (LIFECYCLE_OWNER, owner) if owner in self._lifecycle_owners else None
        templates = list(pod_templates(result, template_paths(self._header, original.kind_key)))
        for place, template in templates:
            rewrite_template(template, at=place, simulation=self.simulation,
                             placement=self._placement, timing=self._timing,
                             lifecycle_owner=marker)
        if owner in self._usage_workloads:  # its pods play the recorded usage (usage.py)
            marked = [result] if original.kind_key == "v1.Pod" else [t for _, t in templates]
            for marked_obj in marked:
                meta = field_map(marked_obj, "metadata", at)
                field_map(meta, "annotations", at / "metadata")[USAGE_WORKLOAD] = owner
        return result

    def _rewrite_kind(self, obj: KubeObject, ref: ObjectRef, status: Any, *, at: At) -> None:
        spec = (at / "spec").map(obj.get("spec")) or {}
        group = ref.api_version.rsplit("/", 1)[0] if "/" in ref.api_version else ""
        if group == "" and ref.kind == "Node":
            _fake_node(obj, spec, status, at=at)
        elif group == "" and ref.kind == "Service":
            if spec.get("clusterIP") != "None":
                spec.pop("clusterIP", None)
                spec.pop("clusterIPs", None)
            spec.pop("healthCheckNodePort", None)
            for port in field_list(spec, "ports", at / "spec"):
                if isinstance(port, dict):
                    port.pop("nodePort", None)
        elif group == "" and ref.kind == "PersistentVolumeClaim":
            spec.pop("volumeName", None)
        elif group == "batch" and ref.kind == "CronJob":
            # sk-driver fires it on the trace's clock (cronjobs.py), not the controller.
            spec["suspend"] = True
        elif group == "batch" and ref.kind == "Job":
            spec.pop("selector", None)  # generated from the production Job's uid
            template = (at / "spec" / "template").map(spec.get("template")) or {}
            metadata = (at / "spec" / "template" / "metadata").map(template.get("metadata"))
            labels = (at / "spec" / "template" / "metadata" / "labels").map(
                (metadata or {}).get("labels")) or {}
            for key in JOB_GENERATED_LABELS:
                labels.pop(key, None)


def _fake_node(obj: KubeObject, spec: dict[str, Any], status: Any, *, at: At) -> None:
    field_map(obj["metadata"], "annotations", at / "metadata")[FAKE_NODE_KEY] = FAKE_NODE_VALUE
    taints: list[Any] = list(field_list(spec, "taints", at / "spec"))
    if not any(isinstance(t, dict) and t.get("key") == FAKE_NODE_KEY for t in taints):
        taints.append(dict(FAKE_TAINT))
    obj["spec"] = {**spec, "taints": taints}
    # The API server keeps a Node's status on create; KWOK's node-ready stage reads capacity.
    if (at / "status").map(status):
        kept = {key: copy.deepcopy(status[key]) for key in NODE_STATUS_KEPT if key in status}
        if kept:
            obj["status"] = kept
