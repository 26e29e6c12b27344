"""Which nodes count, in which group, and how many each group has right now.

Only fake nodes (KWOK's annotation) are simulated capacity; sk-cloudprov's infrastructure
node that hosts placeholder pods is not capacity either. A fake node without a group label is
one of the environment's static nodes (``skctl env up --nodes``) and counts as ``static``.
The tracker keeps one string per node, not the node, and remembers the group of every node
it has seen so a pod can be attributed after its node is gone.

It also remembers what the nodes say about who made them, because the summary names the
autoscaler from what was observed, not from configuration: sk-cloudprov (Cluster
Autoscaler's provider) marks its nodes with its namespace label and ``simkube://`` provider
ids; Karpenter's carry ``karpenter.sh/nodepool``. (``kwok://`` proves nothing: the static
nodes use it too.) A Karpenter node always witnesses Karpenter (it keeps no minimum), but
sk-cloudprov makes its groups' ``minSize`` nodes whether or not an autoscaler runs (``env
up --services`` alone), so only an sk-cloudprov node that *appears* while the run records,
after the first list, witnesses Cluster Autoscaler: nothing else asks sk-cloudprov for one.
Each group's instance type and NodePool label are kept for the per-type and per-pool node
hours.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from simkube.core.kubeapi import INSTANCE_TYPE_LABEL
from simkube.results.model import STATIC_GROUP

GROUP_LABEL = "simkube.dev/node-group"
NODEPOOL_LABEL = "karpenter.sh/nodepool"
INFRA_LABEL = "simkube.dev/placeholder-infra"
FAKE_ANNOTATION = "kwok.x-k8s.io/node"
CLOUDPROV_OWNER_LABEL = "simkube.dev/node-group-namespace"
CLOUDPROV_PROVIDER = "simkube://"
KARPENTER, CLUSTER_AUTOSCALER = "karpenter", "cluster-autoscaler"


def node_group(obj: Mapping[str, Any]) -> str | None:
    """The group a Node object counts in, or None when it is not simulated capacity."""
    metadata = obj.get("metadata") or {}
    labels = metadata.get("labels") or {}
    annotations = metadata.get("annotations") or {}
    if annotations.get(FAKE_ANNOTATION) != "fake" or INFRA_LABEL in labels:
        return None
    return str(labels.get(GROUP_LABEL) or STATIC_GROUP)


def node_maker(obj: Mapping[str, Any]) -> str | None:
    """The autoscaler whose provider made this Node, as its marks say; None for others."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    if labels.get(NODEPOOL_LABEL):
        return KARPENTER
    provider = str((obj.get("spec") or {}).get("providerID") or "")
    if CLOUDPROV_OWNER_LABEL in labels or provider.startswith(CLOUDPROV_PROVIDER):
        return CLUSTER_AUTOSCALER
    return None


class NodeTracker:
    def __init__(self) -> None:
        self._live: dict[str, str] = {}   # node name -> group, nodes that exist now
        # group -> live nodes, kept up to date: the recorder asks after every watch event
        self._counts: Counter[str] = Counter()
        self._known: dict[str, str] = {}  # every node ever seen -> its last group
        self._types: dict[str, str] = {}  # group -> its nodes' instance type
        self._pools: dict[str, str] = {}  # group -> the Karpenter NodePool of its nodes
        self.makers: set[str] = set()     # autoscalers whose nodes were seen

    def observe(self, obj: Mapping[str, Any], *, deleted: bool = False,
                added: bool = False) -> None:
        """One node of a list, or of a watch event (``added``: an ADDED one, a node made
        while the run records; a list only shows what exists)."""
        name = str((obj.get("metadata") or {}).get("name") or "")
        if not name:
            return
        group = node_group(obj)
        was = self._live.pop(name, None)
        if was is not None:
            self._counts[was] -= 1
        if not deleted and group is not None:
            self._live[name] = group
            self._counts[group] += 1
        if group is not None:
            self._known[name] = group
            labels = (obj.get("metadata") or {}).get("labels") or {}
            for labelled, key in ((self._types, INSTANCE_TYPE_LABEL),
                                  (self._pools, NODEPOOL_LABEL)):
                if labels.get(key):
                    labelled[group] = str(labels[key])
            maker = node_maker(obj)
            if maker == KARPENTER or (maker is not None and added):
                self.makers.add(maker)

    def replace(self, objs: Iterable[Mapping[str, Any]]) -> None:
        """A fresh list: exactly these nodes exist now."""
        self._live.clear()
        self._counts.clear()
        for obj in objs:
            self.observe(obj)

    def restore(self, *, instance_types: Mapping[str, str],
                node_pools: Mapping[str, str]) -> None:
        """Labels recorded before a restart, for groups whose nodes may be gone by now."""
        for labelled, restored in ((self._types, instance_types), (self._pools, node_pools)):
            for group, value in restored.items():
                if value:
                    labelled.setdefault(group, value)

    def group_of(self, node: str) -> str | None:
        return self._known.get(node)

    def is_live(self, node: str) -> bool:
        return node in self._live

    def counts(self) -> dict[str, int]:
        return {group: count for group, count in self._counts.items() if count}

    def instance_types(self) -> dict[str, str]:
        """Group -> instance type, for every group whose nodes said."""
        return dict(self._types)

    def node_pools(self) -> dict[str, str]:
        """Group -> Karpenter NodePool (empty unless Karpenter made its nodes)."""
        return dict(self._pools)
