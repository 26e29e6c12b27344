"""The demo shop's objects: a web front end under an HPA, a worker, a CronJob.

Kept apart from the day's script (:mod:`demo_workload`) so what the shop *is* — its requests,
its HPA's target and bounds, how much traffic keeps the HPA at a given size — reads in one
place. Every pod tolerates the fake nodes' taint, so it runs on KWOK's nodes in both clusters.
"""

from __future__ import annotations

from typing import Any

from simkube.core.kubeapi import (
    CRON_JOBS,
    DEPLOYMENTS,
    HORIZONTAL_POD_AUTOSCALERS,
    KubeClient,
    Resource,
    apply,
)

NAMESPACE = "shop"
FIELD_MANAGER = "simkube-demo"
TOLERATION = {"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}
WEB, WORKER, INVOICES = "web", "worker", "invoices"
WEB_CPU_REQUEST_M = 500
WEB_TARGET_PERCENT = 50  # the HPA keeps web's pods at 250m each
WEB_MIN, WEB_MAX = 2, 24
# Every object, in the order the shop closes: the HPA before the Deployment it scales.
OBJECTS: tuple[tuple[Resource, str], ...] = (
    (HORIZONTAL_POD_AUTOSCALERS, WEB), (DEPLOYMENTS, WEB), (DEPLOYMENTS, WORKER),
    (CRON_JOBS, INVOICES))
_RESOURCES = {resource.kind: resource for resource, _ in OBJECTS}


def web_load(pods: int) -> int:
    """The CPU (millicores) that settles web's HPA at ``pods``: 96 % of its target each, within
    the HPA's 10 % tolerance, so a scrape that reads a little high does not add a pod."""
    return round(pods * WEB_CPU_REQUEST_M * WEB_TARGET_PERCENT / 100 * 0.96)


def deployment(name: str, *, cpu: str, memory: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {
                         "containers": [{"name": name, "image": f"shop/{name}:1.4",
                                         "resources": {"requests": {"cpu": cpu,
                                                                    "memory": memory}}}],
                         "tolerations": [TOLERATION]}}}}


def web_hpa() -> dict[str, Any]:
    """web's autoscaling/v2 HPA on CPU utilization. No ``behavior``: its periods would be wall
    seconds in every environment, where the controller's own timers follow each one's speed."""
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": WEB, "namespace": NAMESPACE},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": WEB},
                     "minReplicas": WEB_MIN, "maxReplicas": WEB_MAX,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                         "type": "Utilization", "averageUtilization": WEB_TARGET_PERCENT}}}]}}


def cronjob() -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": INVOICES, "namespace": NAMESPACE},
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "Never", "tolerations": [TOLERATION],
                "containers": [{"name": INVOICES, "image": f"shop/{INVOICES}:1.4",
                                "resources": {"requests": {"cpu": "250m"}}}]}}}}}}


def opening() -> list[dict[str, Any]]:
    """What the shop opens with, in apply order: web, then its HPA, an idle worker (the day's
    first step scales it), the CronJob. web opens at one replica, the API's default: its HPA
    raises it to the minimum at its first sync, in production and in the replay alike, and a
    replay under an active HPA that applies a recorded change of web before its HPA has scaled
    it leaves ``spec.replicas`` out, which resets it to that default (docs/hpa.md, "Replicas
    under an active HPA"): from one, no dip."""
    return [deployment(WEB, cpu=f"{WEB_CPU_REQUEST_M}m", memory="1Gi", replicas=1),
            web_hpa(), deployment(WORKER, cpu="1", memory="2Gi", replicas=0), cronjob()]


async def apply_object(kube: KubeClient, manifest: dict[str, Any]) -> None:
    path = _RESOURCES[manifest["kind"]].path(namespace=NAMESPACE,
                                              name=manifest["metadata"]["name"])
    await apply(kube, path, manifest, field_manager=FIELD_MANAGER)
