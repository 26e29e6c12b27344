"""Pods bound to a fake node that KWOK should have started: how long it may wait, and a nudge.

KWOK plays a pod's ``pod-running`` stage when it sees the pod bound to a node it manages, after
the pod's own startup delay (the annotations below, set by sk-driver; the stage reads them).
Should KWOK miss a pod (docs/kwok.md), nothing else would ever start it: an update of the pod
that changes its resourceVersion makes KWOK look at it again. Two places use this: the results
recorder during a run (``results/starting.py``) and the environment's KWOK watchdog
(``env/kwokwatch.py``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from simkube.core.durations import DurationError, parse_duration
from simkube.core.kubeapi import MERGE_PATCH, KubeClient

# On pods (sk-driver sets them): KWOK's pod-running stage waits this long, plus a random part
# up to the max, before the pod runs (Go durations, wall time).
STARTUP_DELAY = "simkube.dev/startup-delay"
STARTUP_DELAY_MAX = "simkube.dev/startup-delay-max"
# Written by a nudge: the time of it, so that the patch is never a no-op.
NUDGE_ANNOTATION = "simkube.dev/start-nudged-at"


def startup_allowance_s(annotations: Mapping[str, Any] | None) -> float:
    """Wall seconds the pod-running stage may wait at most before the pod runs (both
    annotations summed: more than KWOK ever waits, never less)."""
    total = 0.0
    for key in (STARTUP_DELAY, STARTUP_DELAY_MAX):
        value = (annotations or {}).get(key)
        if value:
            # One KWOK cannot read either makes the pod start at once: nothing to allow.
            with contextlib.suppress(DurationError):
                total += parse_duration(str(value), field=key, allow_zero=True) / 1000
    return total


async def nudge(kube: KubeClient, *, namespace: str, name: str, when: str) -> None:
    """Annotate the pod with ``when`` (a timestamp: each nudge changes it), an update that KWOK
    sees as a new version of the pod. Raises ``ApiError`` when the API server refuses."""
    await kube.request("PATCH", f"/api/v1/namespaces/{namespace}/pods/{name}",
                       body={"metadata": {"annotations": {NUDGE_ANNOTATION: when}}},
                       content_type=MERGE_PATCH)


__all__ = ["NUDGE_ANNOTATION", "STARTUP_DELAY", "STARTUP_DELAY_MAX", "nudge",
           "startup_allowance_s"]
