"""The fidelity benchmark's "production": a day of traffic on four services, compressed.

The benchmark compares replays against a ground truth that really ran, at speed 1, in the
same environment with the real autoscaler; this module is what runs. It has what makes
autoscaling hard to simulate faithfully: Deployments whose CPU requests follow a day-like
utilisation curve (scale-ups as the morning comes, a lull, an evening peak), a burst of big
pods that fit only the large node group and so needs new nodes, a CronJob firing every minute
(its Jobs complete at once, through KWOK), and a final scale-down after which the autoscaler
may remove nodes.

The benchmark compares one truth with replays, so the truth's answer must not be a coin toss
of the autoscaler's own. Cluster Autoscaler packs pending pods onto upcoming nodes in Go map
order (its pod lister and its snapshot's node list), so with pods of mixed sizes on shared
nodes near full, which pod is left over, and so which group it buys, varies between runs of
the same inputs: runs 20 and 21 (docs/fidelity.md) lost their 1x rows to that, truth and
replays alike. So each kind of pod has one node group (``GROUP_LABEL``) and, within a
group, one CPU size: any packing order fits the same number of pods on a node, and a scale-up
has one answer. Memory varies but never binds (four of the largest fit a small node).

Removing nodes takes Cluster Autoscaler's production timers (10 min unneeded, 10 min after a
scale-up) plus its scans, so the day gets the duration minus a tail of ``TAIL_S`` (at most
``TAIL_FRACTION`` of it): at the default 20 minutes, 8 minutes of day and 12 of tail. Shorter
runs keep the same story but leave too little tail for scale-downs to show. (Karpenter's
consolidation, at ``consolidateAfter`` 0s, needs far less.) The pods' ``PLACEMENT`` is
sk-driver's default one, which the nodes of sk-cloudprov and of Karpenter's NodePools match.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from simkube.cloudprov.naming import GROUP_LABEL
from simkube.core.kubeapi import APPLY_PATCH, MERGE_PATCH, KubeClient, delete_namespace
from simkube.driver.options import DEFAULT_NODE_SELECTOR, DEFAULT_TOLERATIONS

NAMESPACE = "fidelity-shop"
TRUTH_PREFIX = "fidelity"  # the results recorder follows namespaces named "<prefix>-…"
FIELD_MANAGER = "simkube-fidelity"
PLACEMENT: dict[str, Any] = {  # as sk-driver places replayed pods
    "nodeSelector": dict(DEFAULT_NODE_SELECTOR),
    "tolerations": [dict(toleration) for toleration in DEFAULT_TOLERATIONS],
    "terminationGracePeriodSeconds": 0}
TAIL_S = 720.0
TAIL_FRACTION = 0.6
# Share of each service's range in use, hour by hour: night, morning ramp, lunch lull,
# afternoon peak, evening decline.
HOURLY = (0.15, 0.12, 0.10, 0.10, 0.12, 0.18, 0.30, 0.50, 0.70, 0.85, 0.92, 0.95,
          0.88, 0.86, 0.93, 1.00, 0.97, 0.85, 0.70, 0.55, 0.45, 0.35, 0.25, 0.18)
BURST_HOURS = (9, 17)  # the burst runs from the first hour to the second: longer than provisioning


@dataclass(frozen=True, kw_only=True)
class Service:
    name: str
    cpu: str
    memory: str
    low: int
    high: int
    group: str = "small"  # the node group its pods select (module docstring)
    lag_hours: int = 0  # a back-office service follows the traffic a little later

    def replicas(self, hour: int) -> int:
        load = HOURLY[(hour - self.lag_hours) % len(HOURLY)]
        return round(self.low + (self.high - self.low) * load)


# At the peak the services ask 37 CPU of the 2-CPU "small" group (four pods a node) and the
# burst 36 CPU of the 8-CPU "large" group (two pods a node); the node groups start with 2
# small nodes and 1 large. The counts are twice what they were until run 25 (docs/fidelity.md):
# pending p90 is about the seventh-longest wait of ~65 pods, and pods that waited for one node
# share one wait, so a single node bought one CA loop later moved p90 by 10 %, in the truth as
# in replays. Twice the pods put p90 among twice the nodes.
SERVICES = (Service(name="web", cpu="500m", memory="512Mi", low=4, high=32),
            Service(name="api", cpu="500m", memory="1Gi", low=4, high=20),
            Service(name="search", cpu="500m", memory="1Gi", low=2, high=12, lag_hours=1),
            Service(name="worker", cpu="500m", memory="1536Mi", low=2, high=10, lag_hours=2))
BURST = Service(name="batch", cpu="3", memory="4Gi", low=0, high=12, group="large")
# The report pod fits beside the burst on the large group's minimum node, so it never waits
# for a node: it is the replayed CronJob, not a scale-up.
REPORT_GROUP = "large"


@dataclass(frozen=True, kw_only=True)
class Step:
    at_s: float
    replicas: Mapping[str, int]
    note: str


def day_seconds(duration_s: float) -> float:
    return duration_s - min(TAIL_S, TAIL_FRACTION * duration_s)


def schedule(*, duration_s: float) -> tuple[Step, ...]:
    """Every replica change of the run, in time order; only changed Deployments per step."""
    if duration_s <= 0:
        raise ValueError(f"duration {duration_s!r} must be positive")
    hour_s = day_seconds(duration_s) / len(HOURLY)
    current: dict[str, int] = {}
    steps = []
    for hour in range(len(HOURLY)):
        wanted = {service.name: service.replicas(hour) for service in SERVICES}
        wanted[BURST.name] = BURST.high if BURST_HOURS[0] <= hour < BURST_HOURS[1] else BURST.low
        changed = {name: count for name, count in wanted.items() if current.get(name) != count}
        current.update(changed)
        burst = {BURST_HOURS[0]: "; burst starts", BURST_HOURS[1]: "; burst ends"}
        steps.append(Step(at_s=hour * hour_s, replicas=changed,
                          note=f"{hour:02d}:00 load {HOURLY[hour]:.0%}{burst.get(hour, '')}"))
    steps.append(Step(at_s=len(HOURLY) * hour_s, note="night: final scale-down",
                      replicas={service.name: service.low for service in SERVICES}))
    return tuple(step for step in steps if step.replicas)


def placed_on(group: str) -> dict[str, Any]:
    """sk-driver's placement, narrowed to one node group."""
    return {**PLACEMENT, "nodeSelector": {**PLACEMENT["nodeSelector"], GROUP_LABEL: group}}


def deployment(service: Service) -> dict[str, Any]:
    labels = {"app": service.name}
    container = {"name": service.name, "image": f"shop/{service.name}:2.1",
                 "resources": {"requests": {"cpu": service.cpu, "memory": service.memory}}}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": service.name, "namespace": NAMESPACE, "labels": labels},
            "spec": {"replicas": 0, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [container],
                                           **placed_on(service.group)}}}}


def cronjob() -> dict[str, Any]:
    container = {"name": "report", "image": "shop/report:2.1",
                 "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}}}
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "report", "namespace": NAMESPACE},
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "Never", "containers": [container],
                **placed_on(REPORT_GROUP)}}}}}}


async def _apply(kube: KubeClient, manifest: dict[str, Any]) -> None:
    group = "apps/v1" if manifest["kind"] == "Deployment" else "batch/v1"
    path = (f"/apis/{group}/namespaces/{NAMESPACE}/{manifest['kind'].lower()}s/"
            f"{manifest['metadata']['name']}")
    await kube.request("PATCH", path, body=manifest, content_type=APPLY_PATCH,
                       query={"fieldManager": FIELD_MANAGER, "force": "true"})


async def set_up(*, kube: KubeClient) -> None:
    """The namespace, every Deployment at zero replicas and the CronJob."""
    await kube.request("POST", "/api/v1/namespaces", body={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    for service in (*SERVICES, BURST):
        await _apply(kube, deployment(service))
    await _apply(kube, cronjob())


async def play(*, kube: KubeClient, steps: tuple[Step, ...], started: float,
               on_step: Callable[[Step], None]) -> None:
    """Apply each step at ``started`` (the event loop's clock) plus its time."""
    loop = asyncio.get_running_loop()
    for step in steps:
        await asyncio.sleep(max(0.0, started + step.at_s - loop.time()))
        for name, replicas in step.replicas.items():
            await kube.request("PATCH", f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{name}",
                               body={"spec": {"replicas": replicas}}, content_type=MERGE_PATCH)
        on_step(step)


async def tear_down(*, kube: KubeClient, timeout: float = 120.0) -> None:
    """Delete the namespace and wait until it is gone, so replays get the capacity back."""
    await delete_namespace(kube, NAMESPACE, timeout=timeout)
