"""What Karpenter announces as Kubernetes Events, as scaling rows like Cluster Autoscaler's.

Karpenter (source ``karpenter``) reports a launch as a status transition on the NodeClaim
(reason ``Launched``: "Status condition transitioned, Type: Launched, Status: Unknown ->
True") and a disruption as ``DisruptionTerminating`` on the Node and on its NodeClaim
("Disrupting Node: Empty", "… Underutilized", "… Drifted"). The launch Event names only the
NodeClaim, whose Node appears a registration delay later, named ``kwok-<nodeclaim>-…`` by the
KWOK provider: so a launch is held (``PendingLaunches``) until that Node is seen, and then
recorded with the launch's own time and the Node's group. A disruption is read from the Node's
Event (the NodeClaim's repeats it), its group from the node, its reason kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from simkube.results.autoscaler_events import ScaleChange

COMPONENT = "karpenter"
LAUNCHED = "Launched"
TERMINATING = "DisruptionTerminating"
_DISRUPTING = re.compile(r"Disrupting\s+Node:\s*([A-Za-z]+)")
NODE_PREFIX = "kwok-"  # the KWOK provider names a NodeClaim's node kwok-<nodeclaim>-<random>


def is_karpenter_event(obj: Mapping[str, Any]) -> bool:
    source = obj.get("source") or {}
    return COMPONENT in (source.get("component"), obj.get("reportingComponent"))


def launched_claim(obj: Mapping[str, Any]) -> str | None:
    """The NodeClaim a ``Launched`` Event announces, or None for any other Event."""
    involved = obj.get("involvedObject") or obj.get("regarding") or {}
    if obj.get("reason") != LAUNCHED or involved.get("kind") != "NodeClaim":
        return None
    message = str(obj.get("message") or obj.get("note") or "")
    if "-> True" not in message:  # a transition into Launched, not out of it
        return None
    return str(involved.get("name") or "") or None


def disruption(obj: Mapping[str, Any], *, group_of: Callable[[str], str | None],
               counts: Mapping[str, int]) -> list[ScaleChange]:
    """The node a ``DisruptionTerminating`` Event on a Node takes away, with why."""
    involved = obj.get("involvedObject") or obj.get("regarding") or {}
    if obj.get("reason") != TERMINATING or involved.get("kind") != "Node":
        return []
    node = str(involved.get("name") or "")
    group = group_of(node) if node else None
    if group is None:
        return []
    found = _DISRUPTING.search(str(obj.get("message") or obj.get("note") or ""))
    return [ScaleChange(reason=found.group(1) if found else "Disrupted", group=group,
                        delta=-1, node=node, nodes_after=max(counts.get(group, 0) - 1, 0))]


@dataclass(frozen=True, kw_only=True)
class Launch:
    claim: str
    wall_s: float
    trace_s: float


class PendingLaunches:
    """Launches waiting for their Node, so that they can be given its group."""

    def __init__(self) -> None:
        self._waiting: dict[str, Launch] = {}

    def add(self, claim: str, *, wall_s: float, trace_s: float) -> None:
        self._waiting.setdefault(claim, Launch(claim=claim, wall_s=wall_s, trace_s=trace_s))

    def arrived(self, node: str) -> Launch | None:
        """The launch whose Node ``node`` is, taken off the list; None when none is."""
        for claim in self._waiting:
            if node.startswith(f"{NODE_PREFIX}{claim}-"):
                return self._waiting.pop(claim)
        return None
