"""What Karpenter says about its nodes, read as facts: its Events and its NodeClaims.

Relied on, from sigs.k8s.io/karpenter v1.13.0 and its KWOK provider:

- Events are core/v1 Events with ``source.component: karpenter``.
- A launch is announced by the status controller, which turns every NodeClaim condition
  transition it sees into an Event named after the condition: reason ``Launched`` on the
  NodeClaim, "Status condition transitioned, Type: Launched, Status: Unknown -> True, Reason:
  Launched". Best effort (it reports only transitions it saw both sides of), so the NodeClaim
  itself is a second witness: condition ``Launched`` True.
- A disruption: Karpenter sets the NodeClaim's ``DisruptionReason`` condition (True, reason
  Empty, Underutilized or Drifted), deletes it, then announces ``DisruptionTerminating`` on
  the Node ("Disrupting Node: Underutilized") and on the NodeClaim ("Disrupting NodeClaim:
  …"). Consolidation by replacement also announces ``DisruptionLaunching`` ("Launching
  NodeClaim: Underutilized") on the replacement, whose own ``Launched`` counts it.
- Expiry has no Event: the expiration controller deletes a NodeClaim once ``spec.expireAfter``
  has passed since its creation, so a deleted NodeClaim past that is removed as ``Expired``.
- ``Nominated`` (a pod waits for an in-flight NodeClaim), ``DisruptionBlocked``,
  ``Unconsolidatable``, ``DisruptionWaitingReadiness``, ``ConsolidationCandidate``,
  ``FailedScheduling``, ``NoCompatibleInstanceTypes``, ``InsufficientCapacityError`` and the
  rest change no node count: they only show that Karpenter ran.
- The KWOK provider names a NodeClaim's Node ``kwok-<nodeclaim>-<random>-<number>`` with the
  ``kubernetes.io/hostname`` label set to the NodeClaim's name; once launched, the NodeClaim
  has the Node's labels (its ``simkube.dev/node-group`` among them) and ``status.providerID``
  ``kwok://<node>``, before the Node exists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from simkube.core.durations import parse_duration
from simkube.core.errors import ConfigError
from simkube.results.nodes import GROUP_LABEL
from simkube.results.pods import parse_time

COMPONENT = "karpenter"
LAUNCHED = "Launched"
TERMINATING = "DisruptionTerminating"
DISRUPTION_REASON = "DisruptionReason"  # the NodeClaim condition
EXPIRED = "Expired"
DISRUPTED = "Disrupted"  # a DisruptionTerminating whose message names no reason
NODE_PREFIX = "kwok-"
HOSTNAME_LABEL = "kubernetes.io/hostname"
_DISRUPTING = re.compile(r"Disrupting\s+Node:\s*([A-Za-z]+)")
_CLOCK_SLACK_S = 1.0  # API timestamps have whole seconds


def is_karpenter_event(obj: Mapping[str, Any]) -> bool:
    source = obj.get("source") or {}
    return COMPONENT in (source.get("component"), obj.get("reportingComponent"))


def _involved(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("involvedObject") or obj.get("regarding") or {}


def _message(obj: Mapping[str, Any]) -> str:
    return str(obj.get("message") or obj.get("note") or "")


def launched_claim(obj: Mapping[str, Any]) -> str | None:
    """The NodeClaim a ``Launched`` Event announces, or None for any other Event."""
    involved = _involved(obj)
    if obj.get("reason") != LAUNCHED or involved.get("kind") != "NodeClaim":
        return None
    if "-> True" not in _message(obj):  # a transition into Launched, not out of it
        return None
    return str(involved.get("name") or "") or None


def disrupted_node(obj: Mapping[str, Any]) -> tuple[str, str] | None:
    """(node, why) of a ``DisruptionTerminating`` Event on a Node; None for anything else
    (the NodeClaim's copy of the same disruption included)."""
    involved = _involved(obj)
    if obj.get("reason") != TERMINATING or involved.get("kind") != "Node":
        return None
    node = str(involved.get("name") or "")
    found = _DISRUPTING.search(_message(obj))
    return (node, found.group(1) if found else DISRUPTED) if node else None


@dataclass(frozen=True, kw_only=True)
class Claim:
    """What one NodeClaim object says about its node."""

    name: str
    group: str | None              # simkube.dev/node-group, once launched
    node: str | None               # the Node's name, once launched
    launched: bool
    deleting: bool
    launched_at: datetime | None   # when its Launched condition turned True
    deleted_at: datetime | None    # when its deletion began
    removed_because: str | None    # why it is being deleted, when Karpenter decided it


def claim(obj: Mapping[str, Any]) -> Claim | None:
    metadata = obj.get("metadata") or {}
    name = str(metadata.get("name") or "")
    if not name:
        return None
    status = obj.get("status") or {}
    conditions = {str(c.get("type")): c for c in status.get("conditions") or []
                  if isinstance(c, Mapping)}
    launched = conditions.get(LAUNCHED) or {}
    provider = str(status.get("providerID") or "")
    node = str(status.get("nodeName") or "") or provider.partition("://")[2]
    deleting = bool(metadata.get("deletionTimestamp"))
    reason = conditions.get(DISRUPTION_REASON) or {}
    why = (str(reason.get("reason") or "") or None) if reason.get("status") == "True" else None
    if deleting and why is None and _expired(obj):
        why = EXPIRED
    return Claim(name=name, group=str((metadata.get("labels") or {}).get(GROUP_LABEL) or "")
                 or None, node=node or None, launched=launched.get("status") == "True",
                 deleting=deleting, launched_at=parse_time(launched.get("lastTransitionTime")),
                 deleted_at=parse_time(metadata.get("deletionTimestamp")),
                 removed_because=why if deleting else None)


def _expired(obj: Mapping[str, Any]) -> bool:
    metadata = obj.get("metadata") or {}
    created = parse_time(metadata.get("creationTimestamp"))
    deleted = parse_time(metadata.get("deletionTimestamp"))
    after = str((obj.get("spec") or {}).get("expireAfter") or "Never")
    if created is None or deleted is None or after == "Never":
        return False
    try:
        seconds = parse_duration(after, field="spec.expireAfter") / 1000
    except ConfigError:
        return False
    return (deleted - created).total_seconds() >= seconds - _CLOCK_SLACK_S


def _made_for(name: str, claim: str) -> bool:
    """Whether a Node named ``name`` is the KWOK provider's for NodeClaim ``claim``: upstream's
    ``kwok-<claim>-<random>``, or the project's build's ``kwok-<launch ms>-<claim>`` (its Nodes
    are named in launch order, toolchain/karpenter/naming.go)."""
    if name.startswith(f"{NODE_PREFIX}{claim}-"):
        return True
    launch, _, rest = name.removeprefix(NODE_PREFIX).partition("-")
    return name.startswith(NODE_PREFIX) and launch.isdigit() and rest == claim


def claim_of_node(obj: Mapping[str, Any], *, candidates: Iterable[str] = ()) -> str | None:
    """The NodeClaim a KWOK provider's Node was made for: its hostname label, checked against
    the name, else the candidate the name was made for."""
    metadata = obj.get("metadata") or {}
    name = str(metadata.get("name") or "")
    hostname = str((metadata.get("labels") or {}).get(HOSTNAME_LABEL) or "")
    if hostname and _made_for(name, hostname):
        return hostname
    return next((c for c in candidates if _made_for(name, c)), None)
