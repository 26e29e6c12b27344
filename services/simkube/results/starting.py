"""Pods bound to a fake node that never start: flagged, logged and nudged (issue #18).

For the scheduler and Cluster Autoscaler a pod bound to a node is placed: nothing pending
asks for capacity. If KWOK then never plays its pod-running stage, the pod sits in Pending
(PodScheduled, no IP) for the rest of the run, pending-time figures skip it, and a
comparison shows no difference: a wrong answer that hides. So on every heartbeat (once a
wall second) the recorder asks its pod tracker for pods bound longer than the grace (trace
seconds, default 30, plus the pod's own startup delay) that have not run. Each is counted (pods.csv
``bound_unstarted``, summary.json ``bound_never_started``), logged, and nudged once: an
annotation patch is an update event, and KWOK looks at an updated pod again. The count
keeps the pod even when the nudge works, because the run was disturbed all the same.
"""

from __future__ import annotations

from simkube.core.kubeapi import MERGE_PATCH, PODS, ApiError, KubeClient
from simkube.core.logs import get_logger
from simkube.results.pods import PodState

log = get_logger(__name__)

DEFAULT_GRACE_S = 30.0
NUDGE_ANNOTATION = "simkube.dev/start-nudged-at"


async def nudge(kube: KubeClient, pod: PodState, *, when: str, grace_s: float) -> None:
    """Log the pod as bound but not started, and poke KWOK with an update of it."""
    where: dict[str, object] = {"pod": f"{pod.namespace}/{pod.name}", "node": pod.node,
                                "grace_trace_s": grace_s}
    path = PODS.path(namespace=pod.namespace, name=pod.name)
    body = {"metadata": {"annotations": {NUDGE_ANNOTATION: when}}}
    try:
        await kube.request("PATCH", path, body=body, content_type=MERGE_PATCH)
    except ApiError as exc:
        log.warning("pod bound to a node but not started; nudging it failed", **where,
                    error=str(exc))
        return
    log.warning("pod bound to a node but not started; nudged KWOK with an update of it",
                **where)
