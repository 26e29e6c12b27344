"""Which changes to a pending pod start a Cluster Autoscaler loop in production.

CA 1.36's pod observer (``loop/trigger.go``) starts a loop for every add or update of a pod
without a node whose PodScheduled condition is Unschedulable and changed under
``maxPodChangeAge`` (10 s) ago. Besides the verdict itself, which the scale-up gate plays as
it comes, that includes the verdict's message changing (a node came that still does not fit)
and a pending pod's deletion beginning (its deletionTimestamp is an update): a Deployment
scaled down starts a loop in production that plans for the pods still waiting. A replay's CA
does not loop on its pods (``core/replay_flags.py``), so the gate (``scale_up_gate.py``)
plays those loops in trace time from what this module tells it.
"""

from __future__ import annotations

from typing import Any

CHANGE_AGE_S = 10.0  # CA's maxPodChangeAge (loop/trigger.go), played in trace time


def _signature(pod: dict[str, Any]) -> tuple[str, bool]:
    """What production's pod observer reacts to in a pending pod's change: its scheduling
    verdict's words, and whether its deletion has begun. The gate's own annotation patches
    change neither."""
    conditions = (pod.get("status") or {}).get("conditions") or []
    verdict = next((str(c.get("message") or "") for c in conditions
                    if c.get("type") == "PodScheduled"), "")
    return verdict, bool((pod.get("metadata") or {}).get("deletionTimestamp"))


class ChangeWatch:
    """Pods ruled unschedulable lately, and what CA's pod observer would see change in them."""

    def __init__(self) -> None:
        self._since: dict[str, float] = {}  # uid -> trace time ruled unschedulable
        self._last: dict[str, tuple[str, bool]] = {}  # uid -> signature last seen

    def turned_unschedulable(self, uid: str, *, at: float) -> None:
        if uid:
            self._since.setdefault(uid, at)

    def rouses_ca(self, pod: dict[str, Any], *, at: float) -> bool:
        """Whether this change of ``pod``, seen at trace time ``at``, starts production's
        loop: an unschedulable pod's verdict or deletion changed within CHANGE_AGE_S of its
        verdict."""
        uid = str((pod.get("metadata") or {}).get("uid") or "")
        signature = _signature(pod)
        before = self._last.get(uid)
        self._last[uid] = signature
        since = self._since.get(uid)
        return (before is not None and before != signature and since is not None
                and at - since <= CHANGE_AGE_S and bool(signature[0]))

    def gone(self, uid: str) -> None:
        self._since.pop(uid, None)
        self._last.pop(uid, None)
