"""Lifting CA's scale-up gate from a wave of pods so that no CA loop sees part of the wave.

A lift is one patch per pod while CA's own loops go on (at speed 20 one starts every half
second of wall time), so a loop starting mid-lift would plan for part of the wave (fidelity
run 17a: ``small +1`` where the whole burst made ``large +2``). So a lift does not remove the
``pod-scale-up-delay`` annotation: it sets each pod's delay to end at one wall instant a
little ahead (``LEAD_S``, and ``LEAD_PER_POD_S`` a pod, for the patches to reach CA's
informer). CA judges the delay against its loop's start (``filterOutYoungPods``: creation +
delay against ``currentTime``), so a loop started before that instant sees none of the wave
and one started after it sees all of it. ``ctrl/scale_up_gate.py`` decides when; this module
does the patching.

Once CA's loop has seen a wave, the pods of it still without a node are gated again
(``regate_wave``: the ten-year delay back), so that CA's loops between production's moments
leave them out of scale-up. That cannot be made to happen at one instant (a delay only ever
ends), so it is done right after a loop has finished, when CA's next one is furthest off.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass

from simkube.core.kubeapi import PODS, ApiError, KubeClient, merge_patch
from simkube.core.logs import get_logger
from simkube.core.replay_flags import GATED_DELAY, SCALE_UP_DELAY_ANNOTATION

log = get_logger(__name__)
PATCHES_IN_FLIGHT = 16
LEAD_S = 0.1  # wall seconds from a lift's start to the instant its pods' delays end...
LEAD_PER_POD_S = 0.004  # ...and per pod lifted (a patch is a few ms; 16 are in flight)
PROPAGATION_S = 0.02  # a patch reaches CA's informer within this (loopback, one watch event)


@dataclass
class GatedPod:
    namespace: str
    name: str
    seen_s: float  # trace time the gate first saw the pod
    created_s: float | None  # Unix time of its creationTimestamp
    unschedulable: bool = False
    planned_s: float | None = None  # trace time of its first lift


@dataclass(frozen=True, kw_only=True)
class Patched:
    """Pods whose patch found them gone (404), and pods whose patch failed otherwise."""

    gone: list[str]
    failed: list[str]


@dataclass(frozen=True, kw_only=True)
class Lift(Patched):
    """What became of one wave's lift, and the wall seconds left before the instant when the
    last patch was in."""

    spare_s: float

    @property
    def late(self) -> bool:
        return self.spare_s < PROPAGATION_S


def delay_until(*, created_s: float | None, until_s: float) -> str | None:
    """The ``pod-scale-up-delay`` that ends at Unix time ``until_s`` for a pod created at
    ``created_s`` (whole seconds, as the API server stamps it); ``None`` (no delay) when the
    creation time is unknown."""
    if created_s is None:
        return None
    return f"{max(0, math.ceil((until_s - created_s) * 1000))}ms"


async def _patch_delays(kube: KubeClient, pods: dict[str, GatedPod],
                        delay: Callable[[GatedPod], str | None], *, doing: str) -> Patched:
    """Set each pod's ``pod-scale-up-delay`` to ``delay(pod)``, a few patches in flight."""
    limit = asyncio.Semaphore(PATCHES_IN_FLIGHT)
    gone: list[str] = []
    failed: list[str] = []

    async def patch(uid: str, pod: GatedPod) -> None:
        path = PODS.path(namespace=pod.namespace, name=pod.name)
        async with limit:
            try:
                await merge_patch(kube, path, {
                    "metadata": {"annotations": {SCALE_UP_DELAY_ANNOTATION: delay(pod)}}})
            except ApiError as exc:
                if exc.code == 404:  # gone meanwhile: nothing to plan for
                    gone.append(uid)
                    return
                log.warning(f"scale-up gate not {doing}; tried again at the next moment",
                            pod=f"{pod.namespace}/{pod.name}", error=str(exc))
                failed.append(uid)
    await asyncio.gather(*(patch(uid, pod) for uid, pod in pods.items()))
    return Patched(gone=gone, failed=failed)


async def lift_wave(kube: KubeClient, pods: dict[str, GatedPod], *, wall: Callable[[], float],
                    lead_s: float = LEAD_S, lead_per_pod_s: float = LEAD_PER_POD_S) -> Lift:
    """Set every pod's delay to end at one instant ahead; returns once all patches are in."""
    until_s = wall() + lead_s + lead_per_pod_s * len(pods)
    patched = await _patch_delays(
        kube, pods, lambda pod: delay_until(created_s=pod.created_s, until_s=until_s),
        doing="lifted")
    return Lift(gone=patched.gone, failed=patched.failed, spare_s=until_s - wall())


async def regate_wave(kube: KubeClient, pods: dict[str, GatedPod]) -> Patched:
    """Give every pod the ten-year delay again: CA's loops leave it out of scale-up."""
    return await _patch_delays(kube, pods, lambda _pod: GATED_DELAY, doing="gated again")
