"""Which instance type a node is: the label cloud providers, sk-cloudprov and Karpenter set.

sk-tracer records the instance type each pod ran on, and sk-driver asks the same of the
replay's pods, so a scale-down can remove pods from the kind of node the recording removed
them from (driver/victims.py). Both see a pod's ``spec.nodeName`` and need the type behind
it; nodes outlive their pods, so one ``GET`` per node name, remembered, is enough, and no
node watch is kept. A node that cannot be read (gone, or the credentials may not read
nodes) has no type: runs are then recorded and replayed as they were before types existed.
"""

from __future__ import annotations

from collections import OrderedDict

from simkube.core.kubeapi.client import KubeClient
from simkube.core.kubeapi.errors import ApiError
from simkube.core.kubeapi.resources import NODES
from simkube.core.logs import get_logger

log = get_logger(__name__)
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
# Names remembered; a cluster's nodes turn over, and a forgotten name only costs a GET.
REMEMBERED_NODES = 10_000


class NodeTypes:
    """Instance types by node name, looked up once per name."""

    def __init__(self, kube: KubeClient, *, remember: int = REMEMBERED_NODES) -> None:
        self._kube = kube
        self._known: OrderedDict[str, str | None] = OrderedDict()
        self._remember = remember
        self._refused = False  # a 403 is logged once, then nodes are no longer asked for

    async def of(self, node: str | None) -> str | None:
        """The instance type of ``node``; ``None`` when unnamed, unreadable or unlabelled."""
        if not node or self._refused:
            return None
        if node in self._known:
            self._known.move_to_end(node)
            return self._known[node]
        try:
            found = await self._kube.request("GET", NODES.path(name=node))
        except ApiError as exc:
            if exc.code == 403:
                self._refused = True
                log.warning("nodes cannot be read: pod runs get no instance type",
                            error=str(exc))
            elif exc.code != 404:
                log.warning("node not read", node=node, error=str(exc))
            return None  # not remembered: a transient failure is asked again
        labels = (found.get("metadata") or {}).get("labels") or {}
        value = labels.get(INSTANCE_TYPE_LABEL)
        kind = value if isinstance(value, str) and value else None
        self._known[node] = kind
        if len(self._known) > self._remember:
            self._known.popitem(last=False)
        return kind
