"""Benchmarks of the local environment: start time, fake nodes Ready, pods Running at scale.

Each figure is one JSON line. The environments started here use their own names and are
always torn down, so a benchmark run leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import Iterator
from typing import Any

import httpx

from simkube.env import health, lifecycle, nodes
from simkube.env.components import Layout
from simkube.env.paths import env_dir

START_RUNS = 5
NODE_COUNT = 1_000
POD_COUNT = 10_000
POD_TIMEOUT = 900.0


def _start_times() -> list[float]:
    times = []
    for run in range(START_RUNS):
        name = f"bench-start-{os.getpid()}-{run}"
        started = time.monotonic()
        lifecycle.up(lifecycle.UpOptions(name=name))
        times.append(time.monotonic() - started)
        lifecycle.down(name)
    return times


async def _pods_running(server: str, tls: Any) -> float:
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "scale"},
        "spec": {"replicas": POD_COUNT, "selector": {"matchLabels": {"app": "scale"}},
                 "template": {"metadata": {"labels": {"app": "scale"}}, "spec": {
                     "containers": [{"name": "c", "image": "registry.example/c:1",
                                     "resources": {"requests": {"cpu": "10m"}}}],
                     "tolerations": [{"key": "kwok.x-k8s.io/node", "operator": "Exists",
                                      "effect": "NoSchedule"}]}}}}
    async with httpx.AsyncClient(base_url=server, verify=tls, timeout=60) as client:
        started = time.monotonic()
        created = await client.post("/apis/apps/v1/namespaces/default/deployments",
                                    json=deployment)
        created.raise_for_status()
        while time.monotonic() - started < POD_TIMEOUT:
            status = (await client.get(
                "/apis/apps/v1/namespaces/default/deployments/scale")).json()["status"]
            if status.get("readyReplicas", 0) >= POD_COUNT:
                return time.monotonic() - started
            await asyncio.sleep(0.5)
    raise TimeoutError(f"{POD_COUNT} pods were not Running within {POD_TIMEOUT}s")


def _scale_figures() -> tuple[float, float]:
    name = f"bench-scale-{os.getpid()}"
    env, _ = lifecycle.up(lifecycle.UpOptions(name=name))
    try:
        tls = health.api_ssl_context(Layout(root=env_dir(name)).pki)
        names = nodes.node_names(NODE_COUNT)
        started = time.monotonic()
        asyncio.run(nodes.create_nodes(server=env.api_server, tls=tls,
                                       template=nodes.load_template(None), names=names))
        asyncio.run(nodes.wait_nodes_ready(server=env.api_server, tls=tls, names=names,
                                           timeout=600))
        nodes_ready = time.monotonic() - started
        pods_running = asyncio.run(_pods_running(env.api_server, tls))
    finally:
        lifecycle.down(name)
    return nodes_ready, pods_running


def run() -> Iterator[dict[str, Any]]:
    times = _start_times()
    yield {"benchmark": "env.start_seconds", "median": round(statistics.median(times), 2),
           "runs": [round(t, 2) for t in times], "goal_max": 20.0}
    nodes_ready, pods_running = _scale_figures()
    yield {"benchmark": "env.nodes_ready_seconds", "nodes": NODE_COUNT,
           "value": round(nodes_ready, 1)}
    yield {"benchmark": "env.pods_running_seconds", "pods": POD_COUNT, "nodes": NODE_COUNT,
           "value": round(pods_running, 1),
           "pods_per_second": round(POD_COUNT / pods_running, 1)}
