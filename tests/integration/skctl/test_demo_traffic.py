"""The demo shop's traffic reaches KWOK and metrics-server as the web pods' usage.

Against a real environment started with ``--metrics-server`` (retimed to speed 5, so
metrics-server scrapes every 3 s): while ``demo_traffic.drive`` runs with a load of 480m, its
ClusterResourceUsage names the Deployment's two pods and gives each 240m, and metrics.k8s.io
comes to serve that; scaled to four pods, each gets 120m; cancelled, the object is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

from simkube.core.kubeapi import (
    CLUSTER_RESOURCE_USAGES,
    DEPLOYMENTS,
    NAMESPACES,
    POD_METRICS,
    KubeClient,
    apply,
    merge_patch,
    poll,
)
from simkube.core.simtime import TimeScale
from simkube.env import retiming
from simkube.skctl import demo_shop
from simkube.skctl.demo_traffic import NAME, drive
from tests.conftest import METRICS_ENV_VARIABLE, METRICS_UP_ARGS, running_env

pytestmark = pytest.mark.integration
NS = "shop"


async def _usage(kube: KubeClient) -> tuple[list[str], str]:
    path = CLUSTER_RESOURCE_USAGES.path(name=NAME)
    if not await kube.exists(path):  # not written yet
        return [], ""
    spec = (await kube.request("GET", path))["spec"]
    return spec["selector"]["matchNames"], spec["usages"][0]["usage"]["cpu"]["value"]


def _millicores(quantity: str) -> int:
    for suffix, divisor in (("n", 1_000_000), ("u", 1000), ("m", 1)):
        if quantity.endswith(suffix):
            return round(int(quantity[:-1]) / divisor)
    return round(float(quantity) * 1000)


async def _scenario(kubeconfig: str) -> None:
    kube = await KubeClient.connect(kubeconfig=Path(kubeconfig))
    try:
        await apply(kube, NAMESPACES.path(name=NS), {"apiVersion": "v1", "kind": "Namespace",
                                                     "metadata": {"name": NS}},
                    field_manager="test")
        await demo_shop.apply_object(kube, demo_shop.deployment(
            demo_shop.WEB, cpu="500m", memory="1Gi", replicas=2))
        traffic = asyncio.create_task(drive(kube=kube, namespace=NS, app=demo_shop.WEB,
                                            load_millicores=lambda: 480))
        try:
            async def shared(pods: int, cpu: str) -> bool:
                names, value = await _usage(kube)
                return len(names) == pods and value == cpu
            assert await poll(lambda: shared(2, "240m"), timeout=60, interval=0.5), \
                await _usage(kube)
            names, _ = await _usage(kube)
            assert all(name.startswith("web-") for name in names)

            seen: list[int] = []

            async def served() -> bool:  # within 20 %: rates over two loaded cores drift
                listing = await kube.request("GET", POD_METRICS.path(namespace=NS))
                seen[:] = [_millicores(container["usage"]["cpu"])
                           for item in listing.get("items") or []
                           for container in item["containers"]]
                return len(seen) == 2 and all(190 <= cpu <= 290 for cpu in seen)
            assert await poll(served, timeout=60, interval=1.0), seen

            await merge_patch(kube, DEPLOYMENTS.path(namespace=NS, name=demo_shop.WEB),
                              {"spec": {"replicas": 4}})
            assert await poll(lambda: shared(4, "120m"), timeout=60, interval=0.5), \
                await _usage(kube)
        finally:
            traffic.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await traffic
        assert not await kube.exists(CLUSTER_RESOURCE_USAGES.path(name=NAME))
    finally:
        await kube.close()


def test_the_traffic_is_web_pods_usage_in_metrics_server() -> None:
    with running_env(variable=METRICS_ENV_VARIABLE, prefix="traffic",
                     up_args=METRICS_UP_ARGS) as env:
        retiming.retime(env.name, scale=TimeScale(5))
        asyncio.run(_scenario(env.kubeconfig))
