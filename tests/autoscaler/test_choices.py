"""Which group CA grows, and what it does when a group cannot grow: expanders, stockouts, max.

Pods select ``simkube.dev/pool: shared``, a label every group here carries, so CA must choose.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from kubernetes_asyncio import client

from tests.autoscaler.conftest import Sampler, connect, group, workload
from tests.support.kube import eventually, pods_of

pytestmark = pytest.mark.autoscaler
SHARED = {"simkube.dev/pool": "shared"}


async def phases(api: client.ApiClient, app: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for pod in await pods_of(api, "default", app):
        counts[pod.status.phase] = counts.get(pod.status.phase, 0) + 1
    return counts


async def all_running(api: client.ApiClient, app: str, wanted: int) -> bool:
    return (await phases(api, app)).get("Running") == wanted


async def run_until_running(api: client.ApiClient, app: str, pods: int) -> None:
    await client.AppsV1Api(api).create_namespaced_deployment(
        "default", workload(app, replicas=pods, selector=SHARED))
    await eventually(lambda: all_running(api, app, pods), timeout=240,
                     what=f"{pods} pods of {app} Running")


# For least-waste the tight group is the dearer one, so a price-driven choice would pick the
# other: each expander must pick a different group than the other one would.
@pytest.mark.parametrize(("expander", "groups", "chosen"), [
    ("price", [("cheap", 4, 0.10), ("dear", 4, 0.40)], "cheap"),
    ("least-waste", [("tight", 4, 0.40), ("loose", 16, 0.20)], "tight"),
])
async def test_each_expander_picks_its_group(make_env: Any, expander: str,
                                             groups: list[tuple[str, int, float]],
                                             chosen: str) -> None:
    env = make_env([group(name, cpu=cpu, price=price, **SHARED) for name, cpu, price in groups],
                   f"--autoscaler-flag=--expander={expander}")
    async with await connect(env) as api:
        await run_until_running(api, f"by-{expander}", 4)
        assert await Sampler(api).counts() == {chosen: 1}


async def test_a_stockout_backs_the_group_off_and_ca_falls_back(make_env: Any) -> None:
    env = make_env([group("scarce", cpu=4, price=0.10, provisioning={"capacity": 1}, **SHARED),
                    group("plenty", cpu=4, price=0.40, **SHARED)],
                   "--autoscaler-flag=--expander=price")
    async with await connect(env) as api:
        env.mark()
        await run_until_running(api, "stocked", 8)
        plans = env.plans()
        # CA drops its scale-up request when an instance fails, so the scarce group's
        # surviving new node no longer counts as upcoming: the fallback may plan 1 or 2.
        assert len(plans) == 2, plans
        assert "scarce 0->2" in plans[0], plans
        assert re.search(r"plenty 0->[12]\b", plans[1]), plans
        log = env.log_since_mark("cluster-autoscaler")
        assert "InsufficientInstanceCapacity" in log, "CA saw the stockout's error code"
        counts = await Sampler(api).counts()
        assert counts["scarce"] == 1, counts
        assert 1 <= counts["plenty"] <= 2, counts
        # The failed instance was deleted by CA, not left behind.
        deployment = await client.AppsV1Api(api).read_namespaced_deployment(
            "scarce", "sk-cloudprov")
        assert deployment.spec.replicas == 1


async def test_max_size_leaves_pods_pending_without_an_error_loop(make_env: Any) -> None:
    env = make_env([group("capped", cpu=4, price=0.10, max_size=2, **SHARED)])
    async with await connect(env) as api:
        env.mark()
        await client.AppsV1Api(api).create_namespaced_deployment(
            "default", workload("overflow", replicas=12, selector=SHARED))
        await eventually(lambda: all_running(api, "overflow", 8), timeout=180,
                         what="8 of 12 pods Running on the two nodes max allows")
        await asyncio.sleep(20)  # ten more CA loops
        assert await phases(api, "overflow") == {"Running": 8, "Pending": 4}
        assert await Sampler(api).counts() == {"capped": 2}
        cloudprov = env.log_since_mark("sk-cloudprov")
        assert "OUT_OF_RANGE" not in cloudprov, "CA asked past maxSize"
        assert len(env.plans()) == 1, env.plans()
