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
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass

from simkube.core.kubeapi import PODS, ApiError, KubeClient, merge_patch
from simkube.core.logs import get_logger
from simkube.core.replay_flags import SCALE_UP_DELAY_ANNOTATION

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


@dataclass(frozen=True, kw_only=True)
class Lift:
    """What became of one wave: pods gone meanwhile, pods whose patch failed (still gated),
    and the wall seconds left before the instant when the last patch was in."""

    gone: list[str]
    failed: list[str]
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


async def lift_wave(kube: KubeClient, pods: dict[str, GatedPod], *, wall: Callable[[], float],
                    lead_s: float = LEAD_S, lead_per_pod_s: float = LEAD_PER_POD_S) -> Lift:
    """Set every pod's delay to end at one instant ahead; returns once all patches are in."""
    limit = asyncio.Semaphore(PATCHES_IN_FLIGHT)
    until_s = wall() + lead_s + lead_per_pod_s * len(pods)
    gone: list[str] = []
    failed: list[str] = []

    async def lift(uid: str, pod: GatedPod) -> None:
        path = PODS.path(namespace=pod.namespace, name=pod.name)
        delay = delay_until(created_s=pod.created_s, until_s=until_s)
        async with limit:
            try:
                await merge_patch(kube, path, {
                    "metadata": {"annotations": {SCALE_UP_DELAY_ANNOTATION: delay}}})
            except ApiError as exc:
                if exc.code == 404:  # gone meanwhile: nothing to plan for
                    gone.append(uid)
                    return
                log.warning("scale-up gate not lifted; lifted at the next moment",
                            pod=f"{pod.namespace}/{pod.name}", error=str(exc))
                failed.append(uid)
    await asyncio.gather(*(lift(uid, pod) for uid, pod in pods.items()))
    return Lift(gone=gone, failed=failed, spare_s=until_s - wall())
