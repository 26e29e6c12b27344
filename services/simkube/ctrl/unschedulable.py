"""Pods of a run newly seen unschedulable: what the autoscaler has to react to.

The scheduler marks a pod it cannot place with condition PodScheduled=False, reason
Unschedulable; that is the moment the replay has created work for Cluster Autoscaler. Only
pending pods without a node can be in that state, so the list and watch ask the API server
for exactly those (``status.phase=Pending,spec.nodeName=``): cheap even when a run has
10,000 pods bound and running. Each pod counts once, when first seen unschedulable; the
run's namespaces are ``<prefix>-<namespace>``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from simkube.core.kubeapi import PODS, KubeClient, ListWatch

UNBOUND_PENDING = "status.phase=Pending,spec.nodeName="


def unschedulable(pod: dict[str, Any]) -> bool:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled":
            return bool(condition.get("status") == "False"
                        and condition.get("reason") == "Unschedulable")
    return False


class UnschedulableWatch:
    """Calls ``on_new`` when a pod of the run is first seen unschedulable."""

    def __init__(self, *, kube: KubeClient, prefix: str, on_new: Callable[[], None]) -> None:
        self._prefix = f"{prefix}-"
        self._on_new = on_new
        self._seen: set[str] = set()  # uids now unschedulable
        self.watch = ListWatch(kube=kube, path=PODS.path(), what="unschedulable pods",
                               on_list=self._listed, on_event=self._changed,
                               query={"fieldSelector": UNBOUND_PENDING})

    async def run(self) -> None:
        await self.watch.run()

    def _ours(self, pod: dict[str, Any]) -> str | None:
        """The pod's uid if it is in the run's namespaces and unschedulable."""
        metadata = pod.get("metadata") or {}
        if not str(metadata.get("namespace") or "").startswith(self._prefix):
            return None
        return str(metadata.get("uid") or "") or None if unschedulable(pod) else None

    def _listed(self, pods: list[dict[str, Any]]) -> None:
        now = {uid for uid in map(self._ours, pods) if uid}
        news, self._seen = now - self._seen, now  # a re-list forgets pods gone meanwhile
        if news:
            self._on_new()

    def _changed(self, kind: str, pod: dict[str, Any]) -> None:
        uid = self._ours(pod)
        if kind == "DELETED" or uid is None:
            self._seen.discard(str((pod.get("metadata") or {}).get("uid") or ""))
        elif uid not in self._seen:
            self._seen.add(uid)
            self._on_new()
