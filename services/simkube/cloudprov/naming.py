"""The names, labels and annotations that tie a group's Deployment, pods and Nodes together.

Everything sk-cloudprov knows is read back from the cluster through these marks, which is what
lets it restart without losing state: a Node's name is its placeholder pod's name, its
``spec.providerID`` is ``simkube://<name>`` (Cluster Autoscaler matches instances to Nodes by
that exact string), and labels say which group and which sk-cloudprov namespace own it.
"""

from __future__ import annotations

from enum import StrEnum

GROUP_LABEL = "simkube.dev/node-group"
# Several sk-cloudprov instances may share a cluster (tests do); each watches only its Nodes.
OWNER_LABEL = "simkube.dev/node-group-namespace"
PLACEHOLDER_ANNOTATION = "simkube.dev/placeholder-pod"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGER = "sk-cloudprov"
INFRA_LABEL = "simkube.dev/placeholder-infra"
INFRA_TAINT_KEY = "simkube.dev/placeholders"

KWOK_ANNOTATION = "kwok.x-k8s.io/node"
KWOK_VALUE = "fake"

PROVIDER_PREFIX = "simkube://"

# How long KWOK's node-ready stage waits before a new Node turns Ready (a Go duration).
READY_AFTER_ANNOTATION = "simkube.dev/ready-after"
# sk-cloudprov's new Nodes carry a wait KWOK never reaches, and sk-cloudprov sets it to
# READY_NOW when the instance's readiness deadline has passed on the run's clock: KWOK's own
# delay would run on through the holds of a replay's clock (current_run.py).
READY_HELD = "876000h"
READY_NOW = "0s"
# A kubelet registers its Node with this taint; the node lifecycle controller removes it once
# the Node is Ready, so no pod is bound to a node that is not up yet.
NOT_READY_TAINT_KEY = "node.kubernetes.io/not-ready"

# Cluster Autoscaler's soft taint on a node it found unneeded; its value is the Unix second
# it was put on. CA counts scale-down-unneeded-time from that loop on its own wall clock.
DELETION_CANDIDATE_TAINT_KEY = "DeletionCandidateOfClusterAutoscaler"

DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"
# The annotation is an int32; the ReplicaSet controller removes the lowest-cost pods first.
LOWEST_DELETION_COST = str(-(2**31))
# On every placeholder pod's template (not the selector); a pod chosen for removal loses it
# with the same patch that sets its cost. The ReplicaSet's status.fullyLabeledReplicas
# counts pods that carry all template labels, from the controller's own cache, so once that
# count drops the controller that will rank the pods has seen the costs (removal.py).
IN_SERVICE_LABEL = "simkube.dev/in-service"
IN_SERVICE = "true"


class WellKnownLabel(StrEnum):
    HOSTNAME = "kubernetes.io/hostname"
    OS = "kubernetes.io/os"
    ARCH = "kubernetes.io/arch"
    INSTANCE_TYPE = "node.kubernetes.io/instance-type"
    ZONE = "topology.kubernetes.io/zone"
    BETA_OS = "beta.kubernetes.io/os"
    BETA_ARCH = "beta.kubernetes.io/arch"
    BETA_INSTANCE_TYPE = "beta.kubernetes.io/instance-type"
    BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"


class TaintEffect(StrEnum):
    NO_SCHEDULE = "NoSchedule"
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    NO_EXECUTE = "NoExecute"


def provider_id(name: str) -> str:
    return f"{PROVIDER_PREFIX}{name}"


def instance_name(provider: str) -> str | None:
    """The Node (and pod) name inside one of our provider ids, else None."""
    if provider.startswith(PROVIDER_PREFIX) and len(provider) > len(PROVIDER_PREFIX):
        return provider[len(PROVIDER_PREFIX):]
    return None
