"""Where each gated pod is in the scale-up gate's cycle (``scale_up_gate.py``).

A pod the driver created gated (CA's ``pod-scale-up-delay`` of ten years) is *waiting* until
a plan moment takes it; lifted, it is *in a wave* until the CA loop that saw the wave has
finished; still without a node then, it is *planned*: gated again and lifted again at every
later moment, until it gets a node, goes, or has been planned for CA's
max-node-provision-time (let go: left lifted). The gate decides when; this book only says
which pods, so the two can be read and tested apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from simkube.core.kubeapi import unix_s
from simkube.core.replay_flags import GATED_DELAY, SCALE_UP_DELAY_ANNOTATION
from simkube.ctrl.scale_up_lifts import GatedPod


def gated(pod: dict[str, Any]) -> bool:
    """The pod carries the driver's ten-year delay: CA leaves it out of scale-up."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return annotations.get(SCALE_UP_DELAY_ANNOTATION) == GATED_DELAY


class GatedPods:
    """The gate's pods by state; every method takes its trace times from the caller."""

    def __init__(self) -> None:
        self.waiting: dict[str, GatedPod] = {}  # uid -> never lifted, no node yet
        self.released: set[str] = set()  # uids lifted at least once (older events lag)
        self.in_wave: dict[str, GatedPod] = {}  # lifted, its wave's loop not yet over
        self.planned: dict[str, GatedPod] = {}  # seen by a loop, no node yet: gated again

    def seen(self, pod: dict[str, Any], *, at: float) -> None:
        """A pending pod without a node, listed or changed at trace time ``at``."""
        metadata = pod.get("metadata") or {}
        uid = str(metadata.get("uid") or "")
        if not uid or uid in self.waiting or uid in self.released or not gated(pod):
            return
        self.waiting[uid] = GatedPod(namespace=str(metadata.get("namespace") or ""),
                                     name=str(metadata.get("name") or ""), seen_s=at,
                                     created_s=unix_s(metadata.get("creationTimestamp")))

    def gone(self, uid: str) -> None:
        """Bound to a node, or deleted."""
        self.waiting.pop(uid, None)
        self.in_wave.pop(uid, None)
        self.planned.pop(uid, None)

    def take_due(self, *, at: float, age_s: float) -> dict[str, GatedPod]:
        """The never-lifted unschedulable pods production's loop at ``at`` plans for, taken
        off waiting; none while the oldest of them is younger than ``age_s``."""
        due = {uid: pod for uid, pod in self.waiting.items() if pod.unschedulable}
        # Only pods never lifted count: counting every lifted one still without a node
        # (production counts those its upcoming nodes do not take) made the autoscaler
        # tier's waves plan before their speed-1 replay did (test_speeds: 19.9 % at 10x).
        if not due or min(pod.seen_s for pod in due.values()) > at - age_s:
            return {}  # none waits, or all are "very new": production plans nothing for them
        for uid in due:
            del self.waiting[uid]
        return due

    def take_wave(self, due: dict[str, GatedPod], *, at: float) -> dict[str, GatedPod]:
        """The wave lifted at ``at``: ``due`` (first plan at ``at``) and every planned pod
        (production's loop packs them afresh); all in the wave from now."""
        wave = dict(due)
        for pod in due.values():
            pod.planned_s = at
        self.released.update(due)
        wave.update(self.planned)
        self.planned.clear()
        self.in_wave.update(wave)
        return wave

    def lift_failed(self, uid: str, pod: GatedPod, *, relifted: bool) -> None:
        """Still gated after its lift failed: lifted at the next moment."""
        if self.in_wave.pop(uid, None) is None:
            return
        if relifted:
            self.planned[uid] = pod
        else:
            self.released.discard(uid)
            self.waiting.setdefault(uid, pod)

    def let_go(self, uids: Iterable[str], *, now: float, planned_for_s: float) -> int:
        """Pods of ``uids`` planned for more than ``planned_for_s``: out of the cycle (left
        lifted); how many."""
        going = [uid for uid in uids if uid in self.in_wave
                 and now - (self.in_wave[uid].planned_s or now) > planned_for_s]
        for uid in going:
            del self.in_wave[uid]
        return len(going)

    def planned_again(self, uids: Iterable[str]) -> None:
        """Gated again (or still lifted where the patch failed): lifted at the next moment."""
        for uid in uids:
            pod = self.in_wave.pop(uid, None)
            if pod is not None:
                self.planned[uid] = pod
