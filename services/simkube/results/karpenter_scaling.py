"""Karpenter's launches and removals as scaling rows, each once, in its node group.

Two witnesses feed it (karpenter_events.py): Karpenter's Events, and its NodeClaims when the
recorder may watch them. Either may come first, or not at all, so a decision is keyed by what
it is about, not by a time window as Cluster Autoscaler's are: a launch by its NodeClaim, a
removal by its Node. That is CA's deduplication made exact — CA's Events name only a group
and a size, Karpenter's name the object.

A launch needs a group. A launched NodeClaim has one; without NodeClaims the launch waits for
its Node (``kwok-<nodeclaim>-…``, a registration delay later, or already there when the Event
is late) and is then recorded at the launch's own time. ``nodes_after`` is the group's Nodes
plus its launches whose Node has not appeared: the size it is heading for, as in CA's rows.

A removal is recorded when Karpenter decided it — ``DisruptionTerminating``, or a NodeClaim
deleted with its ``DisruptionReason`` or past its expiry — for a Node that was seen. Other
deletions (sk-ctrl clearing NodeClaims between runs, a person) are not the autoscaler's and
show only in the node counts. NodeClaims already launched or deleted before ``since`` (the
run's start, or a restarted recorder's last row) belong to what came before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from simkube.results import karpenter_events as facts
from simkube.results.model import ScalingRow
from simkube.results.nodes import NodeTracker

Object = dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class At:
    wall_s: float
    trace_s: float


class KarpenterScaling:
    def __init__(self, *, nodes: NodeTracker, since: datetime | None = None) -> None:
        self.seen = False  # any Karpenter Event or NodeClaim: Karpenter ran
        self.since = since
        self._nodes = nodes
        self._groups: dict[str, str] = {}    # claim -> its group
        self._launched: set[str] = set()     # claims whose launch is recorded or came before
        self._pending: dict[str, At] = {}    # launched claims waiting for a group
        self._inflight: dict[str, str] = {}  # claim -> group: launch recorded, Node not seen
        self._arrived: set[str] = set()      # claims whose Node was seen
        self._removed: set[str] = set()      # nodes whose removal is recorded or came before

    # -- Events ----------------------------------------------------------------------------

    def event(self, obj: Object, *, at: At) -> list[ScalingRow]:
        if not facts.is_karpenter_event(obj):
            return []
        self.seen = True
        claim = facts.launched_claim(obj)
        if claim is not None:
            return self._launch(claim, at=at)
        disrupted = facts.disrupted_node(obj)
        return self._remove(*disrupted, at=at) if disrupted else []

    # -- NodeClaims ------------------------------------------------------------------------

    def claims_listed(self, objs: Iterable[Object], *, at: At) -> list[ScalingRow]:
        return [row for obj in objs for row in self.claim_changed(obj, at=at)]

    def claim_changed(self, obj: Object, *, at: At) -> list[ScalingRow]:
        """A NodeClaim as listed or watched: a launch or a removal since ``since`` counts
        (once), one from before does not."""
        claim = facts.claim(obj)
        if claim is None:
            return []
        self.seen = True
        if self.since is not None:
            if claim.launched and _before(claim.launched_at, self.since):
                self._launched.add(claim.name)
            if claim.deleting and _before(claim.deleted_at, self.since):
                self._removed.add(claim.node or "")
        if claim.group:
            self._groups[claim.name] = claim.group
        rows = self._launch(claim.name, at=at) if claim.launched else []
        if claim.deleting:
            self._inflight.pop(claim.name, None)
            if claim.removed_because and claim.node:
                rows += self._remove(claim.node, claim.removed_because, at=at)
        return rows

    # -- Nodes -----------------------------------------------------------------------------

    def node_seen(self, obj: Object) -> list[ScalingRow]:
        """A Node exists (listed, added or changed): the launch it ends, if any is waiting."""
        group = self._nodes.group_of(str((obj.get("metadata") or {}).get("name") or ""))
        claim = facts.claim_of_node(obj, candidates=[*self._pending, *self._inflight])
        if group is None or claim is None:
            return []
        self._groups[claim] = group
        self._arrived.add(claim)
        self._inflight.pop(claim, None)
        waited = self._pending.pop(claim, None)
        return [self._row(group, 1, facts.LAUNCHED, at=waited)] if waited else []

    # -- decisions -------------------------------------------------------------------------

    def _launch(self, claim: str, *, at: At) -> list[ScalingRow]:
        if claim in self._launched and claim not in self._pending:
            return []
        self._launched.add(claim)
        at = self._pending.get(claim, at)
        group = self._groups.get(claim)
        if group is None:
            self._pending[claim] = at
            return []
        self._pending.pop(claim, None)
        if claim not in self._arrived:
            self._inflight[claim] = group
        return [self._row(group, 1, facts.LAUNCHED, at=at)]

    def _remove(self, node: str, why: str, *, at: At) -> list[ScalingRow]:
        group = self._nodes.group_of(node)
        if node in self._removed or group is None:
            return []
        self._removed.add(node)
        return [self._row(group, -1, why, at=at, leaving=node)]

    def _row(self, group: str, delta: int, reason: str, *, at: At,
             leaving: str | None = None) -> ScalingRow:
        nodes = self._nodes.counts().get(group, 0)
        if leaving is not None and self._nodes.is_live(leaving):
            nodes -= 1
        nodes += sum(1 for g in self._inflight.values() if g == group)
        return ScalingRow(wall_s=at.wall_s, trace_s=at.trace_s, group=group, delta=delta,
                          nodes_after=max(nodes, 0), source="autoscaler", reason=reason)


def _before(when: datetime | None, since: datetime) -> bool:
    return when is None or when < since
