"""Pod lifecycles: when each pod of a lifecycle-tracked owner started and ended.

A replay needs to end a Job's pods when the recorded ones ended, so for owners whose kind has
``trackLifecycle`` the tracer remembers each pod's run: its start (``status.startTime``), its
end (the last container's ``finishedAt`` when it succeeds or fails, or the moment it is
deleted while running) and its owner, found through the owner chain (a CronJob's Job's pod
belongs to the CronJob when the CronJob is tracked). Runs are keyed by pod uid, so seeing a
pod again after a restart never makes a second run; launch order is start order. A run
also keeps the instance type of the node the pod started on (``NodeTypes``), so a replayed
scale-down can take its pods from the kind of node the recording took them from.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from simkube.tracer.segments import Ancestors, RunFact
from simkube.tracer.units import rfc3339_ms

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


class LifecycleTracker:
    def __init__(self, *, lifecycle_kinds: frozenset[str], running: dict[str, RunFact],
                 remember: int = 100_000) -> None:
        self.lifecycle_kinds = lifecycle_kinds
        self._running = running  # the store's: recovered after a restart, updated by it
        self._finished: OrderedDict[str, None] = OrderedDict()
        self._remember = remember

    def owner_of(self, ancestors: Ancestors) -> tuple[str, str] | None:
        """The outermost lifecycle-tracked owner (kind key, ``ns/name``): the one a replay
        recreates, whose pods its controllers launch in order."""
        for ancestor in reversed(ancestors):
            if ancestor.kind_key in self.lifecycle_kinds:
                return ancestor.kind_key, ancestor.ns_name
        return None

    def observe(self, pod: dict[str, Any], ancestors: Ancestors, *, now_ms: int,
                deleted: bool, node_type: str | None = None) -> RunFact | None:
        """The run fact this observation of ``pod`` adds, if any; ``node_type`` is the
        instance type of the node it is bound to, kept from the run's first fact."""
        metadata = pod.get("metadata") or {}
        uid = metadata.get("uid")
        if not isinstance(uid, str) or uid in self._finished:
            return None
        known = self._running.get(uid)
        owner = (known.owner_kind, known.owner) if known else self.owner_of(ancestors)
        if owner is None:
            return None
        status = pod.get("status") or {}
        started = rfc3339_ms(status.get("startTime"))
        name = f"{metadata.get('namespace', '')}/{metadata.get('name', '')}"

        def run(start_ms: int, end_ms: int | None) -> RunFact:
            if end_ms is not None:
                self._finish(uid)
            return RunFact(uid=uid, owner_kind=owner[0], owner=owner[1], pod=name,
                           start_ms=start_ms, end_ms=end_ms,
                           node_type=known.node_type if known else node_type)

        if status.get("phase") in TERMINAL_PHASES:
            end = _finished_at(status) or now_ms
            start = known.start_ms if known else (started or end)
            return run(start, max(end, start))
        if deleted:
            return run(known.start_ms, now_ms) if known else None
        if known is None and (started is not None or status.get("phase") == "Running"):
            return run(started or now_ms, None)
        return None

    def _finish(self, uid: str) -> None:
        self._finished[uid] = None
        if len(self._finished) > self._remember:
            self._finished.popitem(last=False)


def _finished_at(status: dict[str, Any]) -> int | None:
    ends = []
    for container in status.get("containerStatuses") or []:
        terminated = ((container or {}).get("state") or {}).get("terminated") or {}
        end = rfc3339_ms(terminated.get("finishedAt"))
        if end is not None:
            ends.append(end)
    return max(ends) if ends else None
