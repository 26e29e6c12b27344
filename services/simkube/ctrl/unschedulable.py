"""Pods of a run the scheduler has not placed yet: what the holder waits for.

A pod the replay creates first waits for the scheduler's verdict: bound to a node, or
condition PodScheduled=False, reason Unschedulable — the moment the replay has created work
for Cluster Autoscaler. Both waits are wall time (tenths of a second: seconds of trace time at
speed 20), so the holder holds the run's clock over both: ``on_created`` when a pod without a
verdict appears (``awaiting`` stays true until every such pod has one), ``on_new`` with a pod
first seen unschedulable. ``on_seen`` and ``on_gone`` pass on every pod of the run listed or
changed, and every one that left the selection (``scale_up_gate.py`` keeps its own track).
Only pending pods without a node can be in either state, so the list and watch ask the API
server for exactly those (``status.phase=Pending,spec.nodeName=``): cheap even when a run has
10,000 pods bound and running; a bound pod leaves the selection (a DELETED event). Pods held
back by scheduling gates wait for someone else, not the scheduler, and are left out.
The run's namespaces are ``<prefix>-<namespace>``.

When a node turns schedulable (``readied_nodes.py``), ``rejudge`` makes the pods now
unschedulable awaited again until each is bound or its PodScheduled condition changes (the
scheduler writes it only when its verdict's message does), for at most ``REJUDGE_S``: a
pod the new node does not change anything for may keep its verdict word for word.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from simkube.core.kubeapi import PODS, KubeClient, ListWatch

UNBOUND_PENDING = "status.phase=Pending,spec.nodeName="
Pod = dict[str, Any]
REJUDGE_S = 0.5


def _scheduled_condition(pod: dict[str, Any]) -> dict[str, Any] | None:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled":
            return dict(condition)
    return None


def unschedulable(pod: dict[str, Any]) -> bool:
    condition = _scheduled_condition(pod) or {}
    return bool(condition.get("status") == "False"
                and condition.get("reason") == "Unschedulable")


def unjudged(pod: dict[str, Any]) -> bool:
    """Waiting for the scheduler's first verdict (and for nothing else)."""
    return (_scheduled_condition(pod) is None
            and not (pod.get("spec") or {}).get("schedulingGates"))


class UnschedulableWatch:
    """Calls ``on_created`` when a pod of the run appears without the scheduler's verdict,
    ``on_new`` when one is first seen unschedulable; ``awaiting`` while any has no verdict."""

    def __init__(self, *, kube: KubeClient, prefix: str, on_new: Callable[[Pod], None],
                 on_created: Callable[[], None] = lambda: None,
                 on_seen: Callable[[Pod], None] = lambda _pod: None,
                 on_gone: Callable[[str], None] = lambda _uid: None,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._prefix = f"{prefix}-"
        self._on_new = on_new
        self._on_created = on_created
        self._on_seen, self._on_gone = on_seen, on_gone
        self._monotonic = monotonic
        self._seen: dict[str, dict[str, Any]] = {}  # uids now unschedulable: their verdict
        self._unjudged: set[str] = set()  # uids the scheduler has not ruled on
        self._pending: set[str] = set()  # every uid listed or watched, unbound and pending
        self._rejudged: dict[str, dict[str, Any]] = {}  # uids to be ruled on again: from
        self._rejudge_until = 0.0
        self.watch = ListWatch(kube=kube, path=PODS.path(), what="unschedulable pods",
                               on_list=self._listed, on_event=self._changed,
                               query={"fieldSelector": UNBOUND_PENDING})

    async def run(self) -> None:
        await self.watch.run()

    def awaiting(self) -> bool:
        if self._rejudged and self._monotonic() >= self._rejudge_until:
            self._rejudged.clear()
        return bool(self._unjudged or self._rejudged)

    def rejudge(self) -> None:
        """A node turned schedulable: await a new verdict on every unschedulable pod."""
        self._rejudged = dict(self._seen)
        self._rejudge_until = self._monotonic() + REJUDGE_S

    def _uid(self, pod: dict[str, Any]) -> str | None:
        """The pod's uid if it is in the run's namespaces."""
        metadata = pod.get("metadata") or {}
        if not str(metadata.get("namespace") or "").startswith(self._prefix):
            return None
        return str(metadata.get("uid") or "") or None

    def _listed(self, pods: list[dict[str, Any]]) -> None:
        ours = [(uid, pod) for pod in pods if (uid := self._uid(pod))]
        for _, pod in ours:
            self._on_seen(pod)
        now = {uid: _scheduled_condition(pod) or {} for uid, pod in ours if unschedulable(pod)}
        news = now.keys() - self._seen.keys()
        listed = {uid for uid, _ in ours}
        for uid in self._pending - listed:
            self._on_gone(uid)  # bound or deleted while the watch was away
        self._pending = listed
        self._seen = now  # a re-list forgets pods gone meanwhile
        self._rejudged = {uid: verdict for uid, verdict in self._rejudged.items()
                          if now.get(uid) == verdict}
        waiting = {uid for uid, pod in ours if unjudged(pod)}
        created, self._unjudged = waiting - self._unjudged, waiting
        if created:
            self._on_created()
        for uid, pod in ours:
            if uid in news:
                self._on_new(pod)

    def _changed(self, kind: str, pod: dict[str, Any]) -> None:
        uid = self._uid(pod)
        if uid is None:
            return
        if kind == "DELETED":  # bound (out of the selection) or gone
            self._pending.discard(uid)
            self._on_gone(uid)
            self._seen.pop(uid, None)
            self._unjudged.discard(uid)
            self._rejudged.pop(uid, None)
            return
        self._pending.add(uid)
        self._on_seen(pod)
        if unjudged(pod):
            if uid not in self._unjudged:
                self._unjudged.add(uid)
                self._on_created()
            return
        self._unjudged.discard(uid)
        verdict = _scheduled_condition(pod) or {}
        if uid in self._rejudged and self._rejudged[uid] != verdict:
            del self._rejudged[uid]
        if not unschedulable(pod):
            self._seen.pop(uid, None)
        elif uid not in self._seen:
            self._seen[uid] = verdict
            self._on_new(pod)
        else:
            self._seen[uid] = verdict
