"""The HPA benchmark's ground truth: one Deployment under an HPA whose load rises and falls.

The truth's usage is driven exactly as a replay plays recorded usage (docs/hpa.md): a total
load L(t) for the workload, spread evenly over its running pods, written into one KWOK
``ClusterResourceUsage`` naming the pods. So the truth's HPA reacts to real metrics-server
readings of KWOK's emulated usage, sk-tracer samples those readings into the trace, and a
replay reproduces the same model from them. ``load_at`` is the curve: low, a ramp to the peak,
a hold, a ramp down, low again, in fractions of the run's length.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from benchmarks.fidelity_workload import PLACEMENT
from simkube.core.kubeapi import (
    CLUSTER_RESOURCE_USAGES,
    PODS,
    KubeClient,
    apply,
    delete_namespace,
)

PREFIX = "hpab"  # the results recorder follows namespaces named "<prefix>-…"
NAMESPACE = f"{PREFIX}-shop"
NAME = "web"
FIELD_MANAGER = "simkube-benchmark"
# One CPU a replica: the truth's environment holds all ten on its minimum nodes (2 x 2 + 8
# CPUs), and in the what-if's (two-CPU nodes) every second replica costs a node.
CPU_REQUEST_M = 1000
TARGET_PERCENT = 50
MAX_REPLICAS = 10
LOW_M, PEAK_M = 400, 3200  # total load: 1 replica at the bottom, ceil(3200 / 500) = 7 at the top
MEMORY_PER_POD = 64 * 1024 * 1024
# (fraction of the run, fraction of the way from LOW to PEAK): linear between the points
SHAPE = ((0.0, 0.0), (0.1, 0.0), (0.35, 1.0), (0.55, 1.0), (0.8, 0.0), (1.0, 0.0))
TICK_S = 2.0
END_MARK_S = 5.0  # the end marker's lead on the window's end


def load_at(t_s: float, *, duration_s: float) -> int:
    """Total CPU load of the workload (millicores) at ``t_s`` seconds into the run."""
    x = min(max(t_s / duration_s, 0.0), 1.0)
    for (x0, y0), (x1, y1) in itertools.pairwise(SHAPE):
        if x <= x1:
            y = y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
            return round(LOW_M + (PEAK_M - LOW_M) * y)
    return LOW_M


def manifests() -> list[tuple[str, dict[str, Any]]]:
    """(URL, object) of the Deployment and its autoscaling/v2 HPA, in apply order."""
    labels = {"app": NAME}
    container = {"name": NAME, "image": f"shop/{NAME}:1",
                 "resources": {"requests": {"cpu": f"{CPU_REQUEST_M}m", "memory": "64Mi"}}}
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": labels},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [container], **PLACEMENT}}}}
    hpa = {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": NAME, "namespace": NAMESPACE},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                    "name": NAME},
                 "minReplicas": 1, "maxReplicas": MAX_REPLICAS,
                 "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                     "type": "Utilization", "averageUtilization": TARGET_PERCENT}}}]}}
    return [(f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{NAME}", deployment),
            (f"/apis/autoscaling/v2/namespaces/{NAMESPACE}/horizontalpodautoscalers/{NAME}",
             hpa)]


def usage(*, pods: list[str], per_pod_m: int) -> dict[str, Any]:
    return {"apiVersion": CLUSTER_RESOURCE_USAGES.api_version,
            "kind": CLUSTER_RESOURCE_USAGES.kind, "metadata": {"name": NAMESPACE},
            "spec": {"selector": {"matchNamespaces": [NAMESPACE], "matchNames": sorted(pods)},
                     "usages": [{"usage": {"cpu": {"value": f"{per_pod_m}m"},
                                           "memory": {"value": str(MEMORY_PER_POD)}}}]}}


async def set_up(kube: KubeClient) -> None:
    await kube.request("POST", "/api/v1/namespaces", body={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    for path, manifest in manifests():
        await apply(kube, path, manifest, field_manager=FIELD_MANAGER)


async def drive(kube: KubeClient, *, duration_s: float, started: float,
                on_tick: Callable[[float, int, int], None]) -> None:
    """Every ``TICK_S``: L(t) over the running pods into the ClusterResourceUsage."""
    loop = asyncio.get_running_loop()
    last: tuple[int, int] | None = None
    marked = False
    while (t := loop.time() - started) < duration_s:
        if not marked and t >= duration_s - END_MARK_S:
            await mark_end(kube)
            marked = True
        listed = await kube.request("GET", PODS.path(namespace=NAMESPACE))
        pods = [p for p in listed.get("items", []) if not p["metadata"].get("deletionTimestamp")]
        running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
        load = load_at(t, duration_s=duration_s)
        per_pod = max(1, round(load / max(1, len(running))))
        await apply(kube, CLUSTER_RESOURCE_USAGES.path(name=NAMESPACE),
                    usage(pods=[p["metadata"]["name"] for p in pods], per_pod_m=per_pod),
                    field_manager=FIELD_MANAGER)
        if last != (load, len(running)):
            on_tick(t, load, len(running))
            last = (load, len(running))
        await asyncio.sleep(TICK_S)


async def mark_end(kube: KubeClient) -> None:
    """An event just before the window ends: a trace lasts from its first event to its last,
    and its usage is exported for that span only, so without it the load's fall (when
    nothing else changes) would be cut from the trace."""
    await apply(kube, manifests()[0][0], {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": NAME, "namespace": NAMESPACE,
                     "annotations": {"benchmark.simkube.dev/phase": "end"}}},
        field_manager=f"{FIELD_MANAGER}-end")


async def tear_down(kube: KubeClient) -> None:
    await kube.request("DELETE", CLUSTER_RESOURCE_USAGES.path(name=NAMESPACE))
    await delete_namespace(kube, NAMESPACE, timeout=120.0)
