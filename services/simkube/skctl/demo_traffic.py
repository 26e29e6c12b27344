"""The shop's traffic as the CPU its web pods use: what production's HPA reads.

KWOK's fake pods use nothing by themselves, so the shop says what they use: one KWOK
``ClusterResourceUsage`` names the web Deployment's pods and gives every running one an equal
share of the shop's current load (pending ones are named too, so a pod has its share the
moment it runs). That is the model sk-driver replays recorded usage with (docs/hpa.md): when
the HPA adds pods each uses less, as a real scale-out relieves its pods, and the HPA settles
at the load divided by its per-pod target. metrics-server serves it, the HPA acts on it and
sk-tracer samples it into the trace: the usage the replay plays back was measured, never
written into the trace by hand.

The object is written when the pods or the share change, checked every ``TICK_S`` of wall
time: finer than sk-tracer's samples (one a second), so the recording sees each change of
load or pods at its next sample.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from simkube.core.kubeapi import CLUSTER_RESOURCE_USAGES, PODS, KubeClient, apply, delete

NAME = "shop-web-traffic"
FIELD_MANAGER = "simkube-demo"
TICK_S = 0.25
MEMORY_PER_POD = 256 * 1024 * 1024  # constant: the HPA scales on CPU only


@dataclass(frozen=True, slots=True, kw_only=True)
class Share:
    """Who uses the load and how much each running pod uses (millicores)."""

    pods: tuple[str, ...]  # every live pod of the workload, sorted
    cpu_millicores: int


def share(*, load_millicores: int, pods: list[dict[str, Any]]) -> Share:
    """The load spread over the running ones of ``pods`` (a pod list's items); pods being
    deleted are left out. At least 1m each: metrics-server drops a pod reporting zero."""
    live = [pod for pod in pods if not pod["metadata"].get("deletionTimestamp")]
    running = sum(1 for pod in live if (pod.get("status") or {}).get("phase") == "Running")
    return Share(pods=tuple(sorted(pod["metadata"]["name"] for pod in live)),
                 cpu_millicores=max(1, round(load_millicores / max(1, running))))


def usage_object(*, namespace: str, given: Share) -> dict[str, Any]:
    """The ClusterResourceUsage giving each of ``given.pods`` its share."""
    return {"apiVersion": CLUSTER_RESOURCE_USAGES.api_version,
            "kind": CLUSTER_RESOURCE_USAGES.kind, "metadata": {"name": NAME},
            "spec": {"selector": {"matchNamespaces": [namespace],
                                  "matchNames": list(given.pods)},
                     "usages": [{"usage": {"cpu": {"value": f"{given.cpu_millicores}m"},
                                           "memory": {"value": str(MEMORY_PER_POD)}}}]}}


async def drive(*, kube: KubeClient, namespace: str, app: str,
                load_millicores: Callable[[], int],
                seen: Callable[[Share], None] = lambda share: None) -> None:
    """Keep the usage of the pods labelled ``app=APP`` at the current load until cancelled,
    telling ``seen`` each share it computes; the object is deleted on the way out."""
    path = CLUSTER_RESOURCE_USAGES.path(name=NAME)
    written: Share | None = None
    try:
        while True:
            listed = await kube.request("GET", PODS.path(namespace=namespace),
                                        query={"labelSelector": f"app={app}"})
            now = share(load_millicores=load_millicores(), pods=listed.get("items", []))
            seen(now)
            if now != written and now.pods:
                await apply(kube, path, usage_object(namespace=namespace, given=now),
                            field_manager=FIELD_MANAGER)
                written = now
            await asyncio.sleep(TICK_S)
    finally:
        await asyncio.shield(delete(kube, path))
