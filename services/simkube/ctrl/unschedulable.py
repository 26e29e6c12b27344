"""Pods of a run the scheduler has not placed yet: what the holder waits for.

A pod the replay creates first waits for the scheduler's verdict: bound to a node, or
condition PodScheduled=False, reason Unschedulable — the moment the replay has created work
for Cluster Autoscaler. Both waits are wall time (tenths of a second: seconds of trace time at
speed 20), so the holder holds the run's clock over both: ``on_created`` when a pod without a
verdict appears (``awaiting`` stays true until every such pod has one), ``on_new`` when a pod
is first seen unschedulable, and ``young_until`` from when Cluster Autoscaler sees the pods
that turned unschedulable since the last ``settled`` as old (age_wait.py). Only pending pods
without a node can be in either state, so the list and watch ask the API server for exactly
those (``status.phase=Pending,spec.nodeName=``):
cheap even when a run has 10,000 pods bound and running; a bound pod leaves the selection (a
DELETED event). Pods held back by scheduling gates wait for someone else, not the scheduler,
and are left out. The run's namespaces are ``<prefix>-<namespace>``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from simkube.core.kubeapi import PODS, KubeClient, ListWatch
from simkube.ctrl.age_wait import AGE_BUFFER_S

UNBOUND_PENDING = "status.phase=Pending,spec.nodeName="


def _scheduled_condition(pod: dict[str, Any]) -> dict[str, Any] | None:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled":
            return dict(condition)
    return None


def unschedulable(pod: dict[str, Any]) -> bool:
    condition = _scheduled_condition(pod) or {}
    return bool(condition.get("status") == "False"
                and condition.get("reason") == "Unschedulable")


def created_at(pod: dict[str, Any]) -> float | None:
    """The pod's ``creationTimestamp`` as Unix seconds (whole, as CA reads it); None if absent
    or unreadable."""
    text = str((pod.get("metadata") or {}).get("creationTimestamp") or "")
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def unjudged(pod: dict[str, Any]) -> bool:
    """Waiting for the scheduler's first verdict (and for nothing else)."""
    return (_scheduled_condition(pod) is None
            and not (pod.get("spec") or {}).get("schedulingGates"))


class UnschedulableWatch:
    """Calls ``on_created`` when a pod of the run appears without the scheduler's verdict,
    ``on_new`` when one is first seen unschedulable; ``awaiting`` while any has no verdict."""

    def __init__(self, *, kube: KubeClient, prefix: str, on_new: Callable[[], None],
                 on_created: Callable[[], None] = lambda: None) -> None:
        self._prefix = f"{prefix}-"
        self._on_new = on_new
        self._on_created = on_created
        self._seen: set[str] = set()  # uids now unschedulable
        self._unjudged: set[str] = set()  # uids the scheduler has not ruled on
        self._fresh: dict[str, float] = {}  # newly unschedulable since settled(): created at
        self.watch = ListWatch(kube=kube, path=PODS.path(), what="unschedulable pods",
                               on_list=self._listed, on_event=self._changed,
                               query={"fieldSelector": UNBOUND_PENDING})

    async def run(self) -> None:
        await self.watch.run()

    def awaiting(self) -> bool:
        return bool(self._unjudged)

    def young_until(self) -> float | None:
        """When CA sees every pod newly unschedulable since ``settled`` as old (wall, Unix
        s); None when there is none (bound or gone since)."""
        return min(self._fresh.values()) + AGE_BUFFER_S if self._fresh else None

    def settled(self) -> None:
        """CA has had its loop over the pods so far: the next ones start a new wait."""
        self._fresh.clear()

    def _became_unschedulable(self, uid: str, pod: dict[str, Any]) -> None:
        self._seen.add(uid)
        created = created_at(pod)
        if created is not None:
            self._fresh[uid] = created

    def _uid(self, pod: dict[str, Any]) -> str | None:
        """The pod's uid if it is in the run's namespaces."""
        metadata = pod.get("metadata") or {}
        if not str(metadata.get("namespace") or "").startswith(self._prefix):
            return None
        return str(metadata.get("uid") or "") or None

    def _listed(self, pods: list[dict[str, Any]]) -> None:
        ours = [(uid, pod) for pod in pods if (uid := self._uid(pod))]
        now = {uid for uid, pod in ours if unschedulable(pod)}
        news, self._seen = now - self._seen, now  # a re-list forgets pods gone meanwhile
        self._fresh = {uid: at for uid, at in self._fresh.items() if uid in now}
        for uid, pod in ours:
            if uid in news and (at := created_at(pod)) is not None:
                self._fresh[uid] = at
        waiting = {uid for uid, pod in ours if unjudged(pod)}
        created, self._unjudged = waiting - self._unjudged, waiting
        if created:
            self._on_created()
        if news:
            self._on_new()

    def _changed(self, kind: str, pod: dict[str, Any]) -> None:
        uid = self._uid(pod)
        if uid is None:
            return
        if kind == "DELETED":  # bound (out of the selection) or gone
            self._seen.discard(uid)
            self._unjudged.discard(uid)
            self._fresh.pop(uid, None)
            return
        if unjudged(pod):
            if uid not in self._unjudged:
                self._unjudged.add(uid)
                self._on_created()
            return
        self._unjudged.discard(uid)
        if not unschedulable(pod):
            self._seen.discard(uid)
            self._fresh.pop(uid, None)
        elif uid not in self._seen:
            self._became_unschedulable(uid, pod)
            self._on_new()
