"""What the recorder's watches say, kept in trackers and turned into scaling rows.

Each list+watch loop (core's ``ListWatch``) calls one pair of methods here: Nodes update the node
tracker (and end Karpenter launches waiting for their Node), Pods the pod tracker; Cluster
Autoscaler's and Karpenter's Events and Karpenter's NodeClaims become ``autoscaler`` scaling
rows, handed to ``emit`` as they happen. After each Node and Pod event or list, ``changed``
is told when it was observed: the counts may have changed, and the timeline follows them.
Lists of Events and of NodeClaims count only what happened since ``since`` (the run's start,
or a restarted recorder's last row): older ones belong to an earlier run; watches bring only
new ones. The NodeClaim watch is optional (a
cluster without Karpenter has no such kind, and an sk-ctrl whose role predates it may not
read it: a 404 or 403 leaves it out) and nothing else depends on it.

It also gathers which autoscalers were observed, for the summary (breakdown.py): nodes made
by either (sk-cloudprov's only when added during the run: its minimum exists without an
autoscaler, nodes.py), any Event of either, any NodeClaim; and what a restarted recorder's
summary said.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from simkube.core.kubeapi import EVENTS, NODE_CLAIMS, NODES, PODS, KubeClient, ListWatch
from simkube.results import autoscaler_events as ca
from simkube.results import karpenter_events
from simkube.results.breakdown import AUTOSCALERS
from simkube.results.clock import RunClock
from simkube.results.karpenter_scaling import At, KarpenterScaling
from simkube.results.model import RunSummary, ScalingRow
from simkube.results.nodes import CLUSTER_AUTOSCALER, KARPENTER, NodeTracker
from simkube.results.pods import PodTracker

Object = dict[str, Any]


class Observer:
    def __init__(self, *, prefix: str, clock: Callable[[], RunClock],
                 emit: Callable[[list[ScalingRow]], None],
                 changed: Callable[[At], None]) -> None:
        self.nodes = NodeTracker()
        self.pods = PodTracker(prefix=prefix, group_of=self.nodes.group_of)
        self.karpenter = KarpenterScaling(nodes=self.nodes)
        self._ca = ca.AutoscalerEvents()
        self._ca_seen = False
        self._restored: set[str] = set()
        self._clock = clock
        self._emit = emit
        self._changed = changed
        self._since: datetime | None = None

    def watches(self, kube: KubeClient, *, since: datetime) -> list[ListWatch]:
        """The list+watch loops, in the order their first lists must run: nodes first (the
        others look up their nodes' groups), NodeClaims before the Events that name them."""
        self._since = self.karpenter.since = since
        return [
            ListWatch(kube=kube, path=NODES.path(), what="nodes",
                      on_list=self._node_list, on_event=self._node_event),
            ListWatch(kube=kube, path=NODE_CLAIMS.path(), what="nodeclaims", optional=True,
                      on_list=self._claim_list, on_event=self._claim_event),
            ListWatch(kube=kube, path=PODS.path(), what="pods",
                      on_list=self._pod_list, on_event=self._pod_event),
            *(ListWatch(kube=kube, path=EVENTS.path(), what=f"{source} events",
                        query={"fieldSelector": f"source={source}"},
                        on_list=self._event_list, on_event=self._event_event)
              for source in (ca.COMPONENT, karpenter_events.COMPONENT))]

    def restore(self, summary: RunSummary) -> None:
        """What the summary of this run's earlier recorder knew and the cluster may not."""
        self.nodes.restore(
            instance_types={g: s.instance_type for g, s in summary.groups.items()},
            node_pools={g: s.node_pool for g, s in summary.groups.items()})
        if summary.autoscaler in AUTOSCALERS:
            self._restored.add(summary.autoscaler)

    def autoscalers(self) -> set[str]:
        seen = self.nodes.makers | self._restored
        if self._ca_seen:
            seen.add(CLUSTER_AUTOSCALER)
        if self.karpenter.seen:
            seen.add(KARPENTER)
        return seen

    def _at(self) -> At:
        clock = self._clock()
        return At(wall_s=clock.wall_s(), trace_s=clock.trace_s())

    # -- watch callbacks -------------------------------------------------------------------

    def _node_list(self, items: list[Object]) -> None:
        at = self._at()
        self.nodes.replace(items)
        for obj in items:
            self._emit(self.karpenter.node_seen(obj))
        self._changed(at)

    def _node_event(self, kind: str, obj: Object) -> None:
        at = self._at()
        self.nodes.observe(obj, deleted=kind == "DELETED", added=kind == "ADDED")
        if kind != "DELETED":
            self._emit(self.karpenter.node_seen(obj))
        self._changed(at)

    def _claim_list(self, items: list[Object]) -> None:
        self._emit(self.karpenter.claims_listed(items, at=self._at()))

    def _claim_event(self, _kind: str, obj: Object) -> None:
        self._emit(self.karpenter.claim_changed(obj, at=self._at()))

    def _pod_list(self, items: list[Object]) -> None:
        at = self._at()
        self.pods.replace(items, trace_s=at.trace_s, trace_at=self._clock().trace_at)
        self._changed(at)

    def _pod_event(self, kind: str, obj: Object) -> None:
        at = self._at()  # one stamp for the pod's times and the timeline's row
        self.pods.observe(obj, trace_s=at.trace_s, deleted=kind == "DELETED")
        self._changed(at)

    def _event_list(self, items: list[Object]) -> None:
        for obj in items:
            if self._ca.is_new(obj):
                when = ca.event_time(obj)
                if self._since is None or (when is not None and when >= self._since):
                    self._event(obj)

    def _event_event(self, kind: str, obj: Object) -> None:
        if kind != "DELETED" and self._ca.is_new(obj):
            self._event(obj)

    def _event(self, obj: Object) -> None:
        at = self._at()
        if not ca.is_autoscaler_event(obj):
            self._emit(self.karpenter.event(obj, at=at))
            return
        self._ca_seen = True
        changes = ca.parse_changes(obj, group_of=self.nodes.group_of,
                                   counts=self.nodes.counts())
        self._emit([ScalingRow(wall_s=at.wall_s, trace_s=at.trace_s, group=c.group,
                               delta=c.delta, nodes_after=c.nodes_after, source="autoscaler",
                               reason=c.reason)
                    for c in self._ca.fresh(changes, wall_s=at.wall_s)])
