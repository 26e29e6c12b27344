"""Small helpers tests use to build workloads and wait for what a user would see."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from kubernetes_asyncio import client

T = TypeVar("T")
FAKE_TOLERATION = {"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}


def deployment(name: str, *, replicas: int, cpu: str = "100m") -> dict[str, object]:
    """A Deployment whose pods tolerate and select fake nodes."""
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [{"name": "app", "image": "registry.example/app:1",
                                    "resources": {"requests": {"cpu": cpu,
                                                               "memory": "64Mi"}}}],
                    "tolerations": [FAKE_TOLERATION],
                    "nodeSelector": {"type": "kwok"},
                },
            },
        },
    }


async def eventually(probe: Callable[[], Awaitable[T | None]], *, timeout: float,
                     what: str, interval: float = 0.2) -> T:
    """Poll ``probe`` until it returns something truthy; fail naming ``what`` on timeout."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = await probe()
        if last:
            return last
        await asyncio.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


async def pods_of(api: client.ApiClient, namespace: str, app: str) -> list[client.V1Pod]:
    result = await client.CoreV1Api(api).list_namespaced_pod(namespace,
                                                             label_selector=f"app={app}")
    return list(result.items)
