"""The real Cluster Autoscaler at scale: 1,000 nodes in 5 groups, 10,000 pods, a 500-pod burst.

Runs only when a CA binary can be found (``$SIMKUBE_CLUSTER_AUTOSCALER`` or the binary
cache); otherwise it prints one line saying so. One environment (``skctl env up
--autoscaler``) holds five groups of 200 eight-CPU nodes (their baseline, created at once)
and a sixth, ``burst``, that starts empty. Figures:

* ``autoscaler.pods_running_seconds``: a Deployment of 10,000 pods (10m CPU each) until all
  are Running on the 1,000 nodes, with CA scanning every 2 s meanwhile.
* ``autoscaler.main_loop_seconds``: CA's own histogram of its main loop
  (``cluster_autoscaler_function_duration_seconds{function="main"}``) over that window:
  p50/p90/p99 estimated from the buckets, and the count of loops.
* ``autoscaler.cloudprov_rpc_ms``: sk-cloudprov's own latency histogram for the calls CA made
  in that window (NodeGroupForNode, NodeGroupNodes, Refresh): p99 by bucket, at 1,000 nodes.
  The same lookups at 5,000 nodes with a synthetic client are ``benchmarks/cloudprov.py``.
* ``autoscaler.pod_stages``: when each of the 10,000 pods was first seen created, bound and
  Running (``benchmarks/pod_stages.py``): each stage's pace and each step's per-pod wait.
* ``autoscaler.control_plane``: the window's writes by kind and per pod, watches the API
  server closed on slow readers, etcd's mean latency, the scheduler's attempts and bind wait.
* ``autoscaler.process_usage``: CPU of every process of the environment (and this one) over
  the window and the machine's other load; ``autoscaler.memory``: every service's resident
  set at the end, at 1,000+ nodes and 10,500 pods.
* ``autoscaler.burst_running_seconds``: 500 one-CPU pods that fit only on ``burst`` until all
  are Running, and how much of it is provisioning (the group's 10 s delay + 2 s readyAfter);
  the rest is CA, sk-cloudprov, the scheduler and KWOK.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import yaml
from prometheus_client.parser import text_string_to_metric_families

from benchmarks import control_plane_metrics as metrics
from benchmarks.ca_binary import missing_ca
from benchmarks.pod_stages import PodStages, Stage, watch
from benchmarks.process_usage import Usage, read_process
from simkube.env import health, state
from simkube.env.controlplane.components import Layout
from simkube.env.paths import env_dir

GROUPS = 5
BASELINE = 200
PODS = 10_000
BURST = 500
DELAY, READY_AFTER = 10.0, 2.0
TIMEOUT = 1800.0
SKCTL = str(Path(sys.executable).parent / "skctl")
Histogram = dict[float, float]  # upper bound -> cumulative count


def _groups() -> dict[str, Any]:
    groups = [{"id": f"pool-{n}", "minSize": BASELINE, "maxSize": BASELINE * 2,
               "pricePerHour": 0.384, "shape": {"cpu": 8, "memory": "32Gi",
                                                "instanceType": "m5.2xlarge", "zone": "sim-a"}}
              for n in range(GROUPS)]
    groups.append({"id": "burst", "maxSize": 100, "pricePerHour": 0.384,
                   "shape": {"cpu": 8, "memory": "32Gi", "instanceType": "m5.2xlarge",
                             "zone": "sim-a", "labels": {"simkube.dev/pool": "burst"}}})
    return {"provisioning": {"delay": f"{DELAY:g}s", "readyAfter": f"{READY_AFTER:g}s"},
            "nodeGroups": groups}


def _deployment(name: str, replicas: int, cpu: str, selector: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {
                         "containers": [{"name": "c", "image": "registry.example/c:1",
                                         "resources": {"requests": {"cpu": cpu}}}],
                         "nodeSelector": selector,
                         "tolerations": [{"key": "kwok.x-k8s.io/node", "operator": "Exists",
                                          "effect": "NoSchedule"}]}}}}


async def _running(client: httpx.AsyncClient, app: str) -> int | None:
    """How many of ``app``'s pods are Running; None when the API server, busy with the
    pods, did not answer in time (a 5xx or a timeout): ask again later."""
    try:
        response = await client.get(
            "/api/v1/namespaces/default/pods",
            params={"fieldSelector": "status.phase=Running", "labelSelector": f"app={app}"},
            headers={"Accept":
                     "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"})
    except httpx.TimeoutException:
        return None
    if response.status_code >= 500:
        return None
    response.raise_for_status()
    return len(response.json().get("items") or [])


async def _until_running(client: httpx.AsyncClient, body: dict[str, Any], *,
                         interval: float, stages: PodStages | None = None) -> float | None:
    """Seconds from creating the Deployment until all its pods are Running. With ``stages``
    each pod's stages are watched meanwhile, and the watch says when all run (one list
    confirms it): a list of 10,000 pods every few seconds is load of its own. None when
    they were not all Running within ``TIMEOUT``: what was measured is still reported."""
    app = body["metadata"]["name"]
    watching = None
    if stages is not None:
        listed = await client.get("/api/v1/namespaces/default/pods", params={"limit": "1"})
        listed.raise_for_status()
        watching = asyncio.create_task(watch(
            client, namespace="default", selector=f"app={app}",
            resource_version=listed.json()["metadata"]["resourceVersion"], into=stages))
        stages.origin = time.monotonic()
    started = time.monotonic()
    (await client.post("/apis/apps/v1/namespaces/default/deployments",
                       json=body)).raise_for_status()
    wanted = body["spec"]["replicas"]
    try:
        while time.monotonic() - started < TIMEOUT:
            watched = watching is not None and not watching.done()  # else: lists decide
            if not watched or stages is None or stages.count(Stage.RUNNING) >= wanted:
                ended = time.monotonic() - started
                if (await _running(client, app) or 0) >= wanted:
                    return ended
            await asyncio.sleep(interval)
    finally:
        if watching is not None:
            watching.cancel()
    return None


def _histograms(url: str, name: str, key: str) -> dict[str, Histogram]:
    """Every ``name`` histogram at ``url``, by the value of label ``key``."""
    found: dict[str, Histogram] = {}
    for family in text_string_to_metric_families(httpx.get(url, timeout=30).text):
        for sample in family.samples:
            if sample.name == f"{name}_bucket":
                bucket = found.setdefault(sample.labels.get(key, ""), {})
                bucket[float(sample.labels["le"])] = sample.value
    return found


def _quantile(before: Histogram, after: Histogram, fraction: float) -> float | None:
    """The bucket bound under which ``fraction`` of the window's observations fell."""
    bounds = sorted(after)
    counts = [after[b] - before.get(b, 0.0) for b in bounds]
    if not counts or counts[-1] <= 0:
        return None
    for bound, count in zip(bounds, counts, strict=True):
        if count >= fraction * counts[-1]:
            return bound
    return None


def _window(before: Histogram, after: Histogram) -> dict[str, Any]:
    total = after.get(float("inf"), 0.0) - before.get(float("inf"), 0.0)
    return {"count": int(total), **{f"p{int(q * 100)}_le": _quantile(before, after, q)
                                    for q in (0.5, 0.9, 0.99)}}


def _skctl(*args: str) -> str:
    return subprocess.run([SKCTL, *args], check=True, capture_output=True, text=True,
                          timeout=600).stdout


def _run(name: str, work: Path) -> Iterator[dict[str, Any]]:
    groups = work / "groups.yaml"
    groups.write_text(yaml.safe_dump(_groups()))
    started = time.monotonic()
    # The environment caps CA at 1,000 nodes; the baseline alone is that many.
    _skctl("env", "up", "--name", name, "--autoscaler", "--node-groups", str(groups),
           "--autoscaler-flag=--max-nodes-total=2000")
    elapsed = time.monotonic() - started
    # A probe that times out on a loaded machine reads as unhealthy (exit 1): say which,
    # and go on; a process that has gone fails the run below.
    checked = subprocess.run([SKCTL, "env", "status", "--name", name, "--json"],
                             check=False, capture_output=True, text=True, timeout=600)
    status = json.loads(checked.stdout)
    yield {"figure": "autoscaler.env_up_seconds", "value": round(elapsed, 1),
           "nodes": GROUPS * BASELINE, "not_healthy": {
               c["name"]: f"{c['health']}: {c['detail']}" for c in status["components"]
               if c["health"] != "running"}}
    recorded = state.load(env_dir(name))
    assert recorded is not None  # noqa: S101  # env up just wrote it
    cloudprov = next(arg.split("=", 1)[1] for c in recorded.components for arg in c.argv
                     if c.name == "sk-cloudprov" and arg.startswith("--metrics-listen="))
    ca_metrics = f"http://{recorded.addresses['autoscaler']}/metrics"
    cloudprov_metrics = f"http://{cloudprov}/metrics"
    pki = Layout(root=env_dir(name)).pki
    tls = health.api_ssl_context(pki)
    scheduler = recorded.component("kube-scheduler")
    assert scheduler is not None  # noqa: S101  # part of every environment
    urls = {"apiserver_url": status["api_server"],
            "scheduler_url": f"https://127.0.0.1:{scheduler.port}",
            "context": metrics.client_context(pki)}
    usage = Usage(pids={**{c.name: c.pid for c in recorded.components},
                        "benchmark": os.getpid()})
    stages = PodStages()

    async def measure() -> tuple[float | None, float | None, dict[str, Histogram],
                                 dict[str, Histogram], dict[str, Histogram],
                                 dict[str, Histogram],
                                 tuple[metrics.Snapshot, metrics.Snapshot]]:
        async with httpx.AsyncClient(base_url=status["api_server"], verify=tls,
                                     timeout=120) as client:
            ca_before = _histograms(ca_metrics, "cluster_autoscaler_function_duration_seconds",
                                    "function")
            rpc_before = _histograms(cloudprov_metrics, "grpc_server_handling_seconds", "method")
            plane_before = metrics.snapshot(**urls)
            usage.start()
            steady = await _until_running(client, _deployment("scale", PODS, "10m", {
                "type": "kwok"}), interval=2.0, stages=stages)
            usage.stop()
            plane_after = metrics.snapshot(**urls)
            ca_after = _histograms(ca_metrics, "cluster_autoscaler_function_duration_seconds",
                                   "function")
            rpc_after = _histograms(cloudprov_metrics, "grpc_server_handling_seconds", "method")
            burst = None if steady is None else await _until_running(
                client, _deployment("burst", BURST, "1", {"simkube.dev/pool": "burst"}),
                interval=0.5)
        return steady, burst, ca_before, ca_after, rpc_before, rpc_after, (
            plane_before, plane_after)
    steady, burst, ca_before, ca_after, rpc_before, rpc_after, plane = asyncio.run(measure())
    yield {"figure": "autoscaler.pods_running_seconds", "pods": PODS, "nodes": GROUPS * BASELINE,
           "value": None if steady is None else round(steady, 1),
           **({} if steady is not None else {"not_all_running_after_seconds": TIMEOUT,
                                             "running": stages.count(Stage.RUNNING)})}
    yield {"figure": "autoscaler.pod_stages", "pods": PODS, **stages.summary(pods=PODS)}
    yield {"figure": "autoscaler.control_plane", "pods": PODS,
           **metrics.window(*plane, pods=PODS)}
    yield {"figure": "autoscaler.process_usage", "pods": PODS, **usage.report()}
    memory = {n: s for n, s in ((n, read_process(pid)) for n, pid in usage.pids.items())
              if s is not None}
    yield {"figure": "autoscaler.memory", "when": "at the end", "pods": PODS + BURST,
           "rss_mb": {n: round(s.rss_mb, 1) for n, s in memory.items()},
           "peak_rss_mb": {n: round(s.peak_rss_mb, 1) for n, s in memory.items()}}
    yield {"figure": "autoscaler.main_loop_seconds", "nodes": GROUPS * BASELINE,
           **_window(ca_before.get("main", {}), ca_after.get("main", {}))}
    for method in ("NodeGroupForNode", "NodeGroupNodes", "Refresh"):
        window = _window(rpc_before.get(method, {}), rpc_after.get(method, {}))
        yield {"figure": "autoscaler.cloudprov_rpc_ms", "method": method,
               "nodes": GROUPS * BASELINE, "calls": window["count"],
               "p99_le_ms": None if window["p99_le"] is None else window["p99_le"] * 1000}
    if burst is not None:
        yield {"figure": "autoscaler.burst_running_seconds", "value": round(burst, 1),
               "pods": BURST, "provisioning_seconds": DELAY + READY_AFTER,
               "other_seconds": round(burst - DELAY - READY_AFTER, 1)}
    else:
        yield {"figure": "autoscaler.burst_running_seconds", "value": None, "pods": BURST,
               "reason": "not run" if steady is None else f"not all Running in {TIMEOUT:g} s"}


def run() -> Iterator[dict[str, Any]]:
    if (missing := missing_ca("autoscaler")) is not None:
        yield missing
        return
    name = f"bench-ca-{os.getpid()}"
    with tempfile.TemporaryDirectory(prefix="bench-ca-") as work:
        try:
            yield from _run(name, Path(work))
        finally:
            subprocess.run([SKCTL, "env", "down", "--name", name], check=False,
                           capture_output=True, timeout=300)
