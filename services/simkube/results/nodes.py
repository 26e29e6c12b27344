"""Which nodes count, in which group, and how many each group has right now.

Only fake nodes (KWOK's annotation) are simulated capacity; sk-cloudprov's infrastructure
node that hosts placeholder pods is not capacity either. A fake node without a group label is
one of the environment's static nodes (``skctl env up --nodes``) and counts as ``static``.
The tracker keeps one string per node, not the node, and remembers the group of every node
it has seen so a pod can be attributed after its node is gone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from simkube.results.model import STATIC_GROUP

GROUP_LABEL = "simkube.dev/node-group"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
NODEPOOL_LABEL = "karpenter.sh/nodepool"
INFRA_LABEL = "simkube.dev/placeholder-infra"
FAKE_ANNOTATION = "kwok.x-k8s.io/node"


def node_group(obj: Mapping[str, Any]) -> str | None:
    """The group a Node object counts in, or None when it is not simulated capacity."""
    metadata = obj.get("metadata") or {}
    labels = metadata.get("labels") or {}
    annotations = metadata.get("annotations") or {}
    if annotations.get(FAKE_ANNOTATION) != "fake" or INFRA_LABEL in labels:
        return None
    return str(labels.get(GROUP_LABEL) or STATIC_GROUP)


class NodeTracker:
    def __init__(self) -> None:
        self._live: dict[str, str] = {}   # node name -> group, nodes that exist now
        self._known: dict[str, str] = {}  # every node ever seen -> its last group
        self._types: dict[str, str] = {}  # group -> its nodes' instance type
        self._pools: dict[str, str] = {}  # group -> the Karpenter NodePool of its nodes

    def observe(self, obj: Mapping[str, Any], *, deleted: bool = False) -> None:
        name = str((obj.get("metadata") or {}).get("name") or "")
        if not name:
            return
        group = node_group(obj)
        if deleted or group is None:
            self._live.pop(name, None)
        else:
            self._live[name] = group
        if group is not None:
            self._known[name] = group
            labels = (obj.get("metadata") or {}).get("labels") or {}
            for labelled, key in ((self._types, INSTANCE_TYPE_LABEL),
                                  (self._pools, NODEPOOL_LABEL)):
                if labels.get(key):
                    labelled[group] = str(labels[key])

    def replace(self, objs: Iterable[Mapping[str, Any]]) -> None:
        """A fresh list: exactly these nodes exist now."""
        self._live.clear()
        for obj in objs:
            self.observe(obj)

    def group_of(self, node: str) -> str | None:
        return self._known.get(node)

    def counts(self) -> dict[str, int]:
        return dict(Counter(self._live.values()))

    def instance_types(self) -> dict[str, str]:
        """Group -> instance type, for every group whose nodes said."""
        return dict(self._types)

    def node_pools(self) -> dict[str, str]:
        """Group -> Karpenter NodePool (empty unless Karpenter made its nodes)."""
        return dict(self._pools)
