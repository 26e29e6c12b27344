"""The demo's "production" workload: a small shop whose traffic rises past capacity and falls.

It is a script of timed steps applied to a real (local) cluster while sk-tracer records it, so
the trace the demo replays is a genuine recording rather than a hand-made file. The steps tell
a shop's day in 54 seconds: two Deployments scale up to a peak that needs more nodes than the
quiet hours, hold it, and fall back, while a CronJob keeps firing. Every step's time is
multiplied by ``stretch`` (below 1: shrunk): the demo records at 0.5 (27 s), the end-to-end
test faster still; the story is the same, since what a production cluster does with it does
not matter here, only the recording. (Not a replay speed, which runs the other way:
``core.simtime``.)

A recorded second stands for ``DAY_STRETCH / stretch`` seconds of the shop's day: the demo
stretches the trace by that much (``skctl trace edit --time-stretch``) before replaying it, so
the autoscaler's production timers fit the day. Nodes take 70 s to boot (the shipped node
groups: 60 s to register, 10 s to turn Ready), and each step's pods reach their nodes some
seconds after those are Ready (the node's taint goes, the scheduler retries: waits partly on
the wall clock, so longer in trace time the faster the replay), so the peak holds for 168 s
of trace time (21 recorded seconds; with 104 s, a trial on a busy machine left 12 of 30 pods
never scheduled when the sale ended before their nodes were used); Karpenter removes a node
roughly a minute after it empties (its ``consolidateAfter`` of 30 s, then its own checks), so
the evening lasts 104 s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from simkube.core.kubeapi import CRON_JOBS, DEPLOYMENTS, NAMESPACES, KubeClient

NAMESPACE = "shop"
TOLERATION = {"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}


@dataclass(frozen=True, kw_only=True)
class Step:
    at_seconds: float
    replicas: dict[str, int]
    note: str


# web asks 500m CPU per pod, worker 1 CPU. The quiet hours need 2 CPU; the peak (24 web +
# 5 worker = 17 CPU) more than the shipped node groups' minimum (12 CPU: what Cluster
# Autoscaler starts from) and many times what Karpenter starts from (no node at all).
STEPS = (
    Step(at_seconds=0, replicas={"web": 2, "worker": 1}, note="quiet morning"),
    Step(at_seconds=5, replicas={"web": 6}, note="traffic picks up"),
    Step(at_seconds=10, replicas={"web": 14, "worker": 3}, note="a sale starts"),
    Step(at_seconds=15, replicas={"web": 24, "worker": 5}, note="peak: more pods than nodes"),
    Step(at_seconds=36, replicas={"web": 6, "worker": 2}, note="the sale ends"),
    Step(at_seconds=41, replicas={"web": 2, "worker": 1}, note="evening"),
)
END_SECONDS = 54.0
# Trace seconds per recorded second at stretch 1 (module docstring).
DAY_STRETCH = 8.0


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


async def close_shop(*, kube: KubeClient) -> None:
    """Delete the shop's Deployments and CronJob: the recorded deletions end the trace, so the
    evening (from the last step until ``END_SECONDS``) is replayed too. Not the namespace,
    whose deletion waits for every pod to go: production's cluster is torn down next anyway,
    and its seconds would be stretched into minutes of replayed trace."""
    for resource, name in ((DEPLOYMENTS, "web"), (DEPLOYMENTS, "worker"),
                           (CRON_JOBS, "invoices")):
        await kube.request("DELETE", resource.path(namespace=NAMESPACE, name=name))
