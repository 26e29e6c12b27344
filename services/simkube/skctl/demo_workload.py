"""The demo's "production" workload: a small shop whose traffic rises past capacity and falls.

It is a script of timed steps applied to a real (local) cluster while sk-tracer records it, so
the trace the demo replays is a genuine recording rather than a hand-made file. The steps are
chosen to tell a story in under a minute: two Deployments scale up until the node groups'
capacity runs out (pods wait to be scheduled), then back down, while a CronJob keeps firing.
Every step's time can be multiplied by ``stretch`` (below 1: shrunk) so the end-to-end test runs
the same story faster. (Not a replay speed, which runs the other way: ``core.simtime``.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from simkube.core.kubeapi import CRON_JOBS, DEPLOYMENTS, NAMESPACES, KubeClient, delete_namespace

NAMESPACE = "shop"
TOLERATION = {"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}


@dataclass(frozen=True, kw_only=True)
class Step:
    at_seconds: float
    replicas: dict[str, int]
    note: str


# web asks 500m CPU per pod, worker 1 CPU: at the peak (20 web + 5 worker = 15 CPU) they
# need more than the two node groups' minimum sizes offer, so some pods wait.
STEPS = (
    Step(at_seconds=0, replicas={"web": 2, "worker": 1}, note="quiet morning"),
    Step(at_seconds=8, replicas={"web": 8}, note="traffic picks up"),
    Step(at_seconds=16, replicas={"web": 14, "worker": 5}, note="a sale starts"),
    Step(at_seconds=26, replicas={"web": 20}, note="peak: more pods than capacity"),
    Step(at_seconds=38, replicas={"web": 6, "worker": 2}, note="the sale ends"),
    Step(at_seconds=46, replicas={"web": 3}, note="evening"),
)
END_SECONDS = 54.0


def _deployment(name: str, *, cpu: str, memory: str) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
            "spec": {"replicas": 0, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {
                         "containers": [{"name": name, "image": f"shop/{name}:1.4",
                                         "resources": {"requests": {"cpu": cpu,
                                                                    "memory": memory}}}],
                         "tolerations": [TOLERATION]}}}}


def _cronjob() -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "invoices", "namespace": NAMESPACE},
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "Never", "tolerations": [TOLERATION],
                "containers": [{"name": "invoices", "image": "shop/invoices:1.4",
                                "resources": {"requests": {"cpu": "250m"}}}]}}}}}}


async def _apply(kube: KubeClient, manifest: dict[str, Any]) -> None:
    resource = DEPLOYMENTS if manifest["kind"] == "Deployment" else CRON_JOBS
    path = resource.path(namespace=NAMESPACE, name=manifest["metadata"]["name"])
    await kube.request("PATCH", path,
                       body=manifest, query={"fieldManager": "simkube-demo", "force": "true"},
                       content_type="application/apply-patch+yaml")


async def _scale(kube: KubeClient, name: str, replicas: int) -> None:
    await kube.request("PATCH", DEPLOYMENTS.path(namespace=NAMESPACE, name=name),
                       body={"spec": {"replicas": replicas}},
                       content_type="application/merge-patch+json")


async def run_workload(*, kube: KubeClient, stretch: float = 1.0,
                       on_step: Callable[[Step], None] = lambda step: None) -> None:
    """Create the shop, play every step at its (scaled) time, return at the end."""
    await kube.request("POST", NAMESPACES.path(),
                       body={"apiVersion": "v1", "kind": "Namespace",
                             "metadata": {"name": NAMESPACE}})
    await _apply(kube, _deployment("web", cpu="500m", memory="1Gi"))
    await _apply(kube, _deployment("worker", cpu="1", memory="2Gi"))
    await _apply(kube, _cronjob())
    loop = asyncio.get_running_loop()
    started = loop.time()
    for step in STEPS:
        await asyncio.sleep(max(0.0, started + step.at_seconds * stretch - loop.time()))
        for name, replicas in step.replicas.items():
            await _scale(kube, name, replicas)
        on_step(step)
    await asyncio.sleep(max(0.0, started + END_SECONDS * stretch - loop.time()))


async def delete_workload(*, kube: KubeClient, timeout: float = 60.0) -> None:
    """Remove the production namespace so its pods do not share the replay's capacity."""
    await delete_namespace(kube, NAMESPACE, timeout=timeout)
