"""What of an object is recorded: the user's intent, nothing the cluster wrote, no secrets.

A change is recorded only when this sanitised form changes, so everything the API server or a
controller writes by itself (uid, resourceVersion, managedFields, generation, timestamps,
status, controller annotations, finalizers, a Pod's node binding) is dropped here; otherwise
every status heartbeat would be a "change" and a replay would try to apply server-owned
fields. Secrets never leave this function with their values: either the keys with empty
values (redacted, the default) or not at all. The last-applied annotation goes too — it
would carry a Secret's values in clear text.
"""

from __future__ import annotations

from typing import Any

from simkube.trace import KubeObject
from simkube.tracer.config import SecretPolicy

DROPPED_METADATA = ("uid", "resourceVersion", "managedFields", "creationTimestamp",
                    "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "selfLink",
                    "finalizers")
CONTROLLER_ANNOTATIONS = frozenset({
    "kubectl.kubernetes.io/last-applied-configuration",
    "deployment.kubernetes.io/revision",
    "deployment.kubernetes.io/revision-history",
    "deployment.kubernetes.io/desired-replicas",
    "deployment.kubernetes.io/max-replicas",
    "control-plane.alpha.kubernetes.io/leader",
    "endpoints.kubernetes.io/last-change-trigger-time",
    "pv.kubernetes.io/bind-completed",
    "pv.kubernetes.io/bound-by-controller",
    "volume.kubernetes.io/selected-node",
    "volume.kubernetes.io/storage-provisioner",
    "volume.beta.kubernetes.io/storage-provisioner",
})
SECRET_VALUE_FIELDS = ("data", "stringData")
# Copied from the node onto a Pod when it is bound (PodTopologyLabels admission): placement,
# like spec.nodeName, which the simulated scheduler decides anew.
POD_BINDING_LABELS = frozenset({"topology.kubernetes.io/zone", "topology.kubernetes.io/region"})


def is_secret(obj: KubeObject) -> bool:
    return obj.get("kind") == "Secret" and obj.get("apiVersion") == "v1"


def sanitise(obj: KubeObject, *, secrets: SecretPolicy) -> KubeObject | None:
    """A sanitised copy of ``obj``, or ``None`` when the object must not be recorded.

    The copy is shallow below the fields it edits (a deep copy would cost more than the rest
    of recording); the store encodes it at once, so sharing with ``obj`` is harmless.
    """
    if is_secret(obj) and secrets is SecretPolicy.SKIP:
        return None
    clean: dict[str, Any] = {key: value for key, value in obj.items() if key != "status"}
    metadata = dict(obj.get("metadata") or {})
    for key in DROPPED_METADATA:
        metadata.pop(key, None)
    annotations = metadata.get("annotations")
    if isinstance(annotations, dict):
        kept = {key: value for key, value in annotations.items()
                if key not in CONTROLLER_ANNOTATIONS}
        if kept:
            metadata["annotations"] = kept
        else:
            del metadata["annotations"]
    clean["metadata"] = metadata
    if is_secret(obj):
        for key in SECRET_VALUE_FIELDS:
            values = obj.get(key)
            if isinstance(values, dict):
                clean[key] = dict.fromkeys(values, "")
            elif key in clean:
                clean[key] = {}
    if obj.get("kind") == "Pod" and obj.get("apiVersion") == "v1":
        _drop_binding(clean, metadata)
    return clean


def _drop_binding(clean: dict[str, Any], metadata: dict[str, Any]) -> None:
    """Remove what binding a Pod to a node writes: the scheduler's choice, not the user's."""
    spec = clean.get("spec")
    if isinstance(spec, dict) and "nodeName" in spec:
        clean["spec"] = {key: value for key, value in spec.items() if key != "nodeName"}
    labels = metadata.get("labels")
    if isinstance(labels, dict) and POD_BINDING_LABELS & set(labels):
        kept = {key: value for key, value in labels.items() if key not in POD_BINDING_LABELS}
        if kept:
            metadata["labels"] = kept
        else:
            del metadata["labels"]
