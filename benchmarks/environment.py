"""Benchmarks of the local environment: start time, fake nodes Ready, pods Running at scale.

Each figure is one JSON line. Start time is compared, in the same run and with the same
binaries, against ``kwokctl create cluster --runtime binary`` measured to the same point
(the API server serves the ``default`` ServiceAccount). The environments started here use
their own names and are always torn down, so a benchmark run leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from simkube.env import health, lifecycle
from simkube.env.controlplane import nodes
from simkube.env.controlplane.components import Layout
from simkube.env.paths import env_dir
from simkube.env.toolchain.cache import binary_path
from simkube.env.toolchain.catalog import Binary

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


KWOKCTL_CONFIG = """apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokctlConfiguration
options:
  bindAddress: 127.0.0.1
"""


def _kwokctl_start_times() -> list[float]:
    """The baseline: kwokctl's own binary runtime with our binaries, on loopback."""
    kwokctl = str(binary_path(Binary.KWOKCTL))
    kubectl = str(binary_path(Binary.KUBECTL))
    times = []
    with tempfile.TemporaryDirectory() as workdir:
        config = Path(workdir) / "kwokctl.yaml"
        config.write_text(KWOKCTL_CONFIG)
        env = {**os.environ, "KWOK_WORKDIR": workdir,
               "PATH": f"{Path(kubectl).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        flags = [f"--config={config}", "--runtime=binary",
                 f"--kube-apiserver-binary={binary_path(Binary.KUBE_APISERVER)}",
                 f"--kube-controller-manager-binary={binary_path(Binary.KUBE_CONTROLLER_MANAGER)}",
                 f"--kube-scheduler-binary={binary_path(Binary.KUBE_SCHEDULER)}",
                 f"--kwok-controller-binary={binary_path(Binary.KWOK)}",
                 f"--etcd-binary={binary_path(Binary.ETCD)}"]
        for run in range(START_RUNS):
            name = f"baseline-{run}"
            started = time.monotonic()
            subprocess.run([kwokctl, "create", "cluster", f"--name={name}", *flags], env=env,
                           check=True, capture_output=True, timeout=120)
            kubeconfig = Path(workdir) / "clusters" / name / "kubeconfig.yaml"
            while subprocess.run([kubectl, f"--kubeconfig={kubeconfig}", "get", "sa", "default"],
                                 capture_output=True, check=False, timeout=30).returncode:
                if time.monotonic() - started > 120:
                    raise TimeoutError("kwokctl's cluster never served the default ServiceAccount")
                time.sleep(0.1)
            times.append(time.monotonic() - started)
            subprocess.run([kwokctl, "delete", "cluster", f"--name={name}"], env=env,
                           check=True, capture_output=True, timeout=120)
    return times


async def _running_pods(client: httpx.AsyncClient) -> int:
    """Pods in phase Running, listed as metadata only so polling stays cheap at 10,000 pods
    (the Deployment's readyReplicas lags far behind the pods themselves)."""
    response = await client.get(
        "/api/v1/namespaces/default/pods", params={"fieldSelector": "status.phase=Running"},
        headers={"Accept": "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"})
    response.raise_for_status()
    return len(response.json().get("items") or [])  # null, not [], when none match


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
            if await _running_pods(client) >= POD_COUNT:
                return time.monotonic() - started
            await asyncio.sleep(1.0)
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
    baseline = _kwokctl_start_times()
    median, baseline_median = statistics.median(times), statistics.median(baseline)
    yield {"benchmark": "env.start_seconds", "median": round(median, 2),
           "runs": [round(t, 2) for t in times], "goal_max": 20.0,
           "baseline": "kwokctl --runtime binary", "baseline_median": round(baseline_median, 2),
           "ratio_to_baseline": round(median / baseline_median, 2)}
    nodes_ready, pods_running = _scale_figures()
    yield {"benchmark": "env.nodes_ready_seconds", "nodes": NODE_COUNT,
           "value": round(nodes_ready, 1)}
    yield {"benchmark": "env.pods_running_seconds", "pods": POD_COUNT, "nodes": NODE_COUNT,
           "value": round(pods_running, 1),
           "pods_per_second": round(POD_COUNT / pods_running, 1)}
