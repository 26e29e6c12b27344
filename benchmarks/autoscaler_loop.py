"""Cluster Autoscaler's loop broken down: per loop, each RPC's calls and each function's time.

CA's main loop at 1,000 nodes is the speed limit of a faithful replay (issue #26). Its time
splits into CA's own work and the serial externalgrpc calls it makes to sk-cloudprov, so this
measures both sides over the same window, with CA idle over N steady nodes (no workload: every
node is a scale-down candidate that its group's minimum keeps), and the same with CA's
in-process ``kwok`` cloud provider on N equal nodes as the anchor. Figures, one line per size
and provider:

* ``autoscaler_loop.functions``: loops in the window, ``main`` p50/p90 (bucket bounds) and the
  mean seconds per loop of each function of ``cluster_autoscaler_function_duration_seconds``.
* ``autoscaler_loop.rpcs`` (sk-cloudprov only): calls per loop of each RPC and sk-cloudprov's
  own mean handling time, from its ``grpc_server_*`` metrics.

The sk-cloudprov side is ``skctl env up --autoscaler`` with five groups of N/5 (minimum N/5);
the anchor is ``skctl env up --nodes N`` with nodes the kwok provider owns (providerID
``kwok://``, its group annotations, one group, minimum N) and CA started here with
``--cloud-provider=kwok`` and the environment's flags. The two run one after the other, each
in its own environment. Needs a CA binary with the ``kwok`` tag (the project's is built with
``externalgrpc,kwok``); prints one line saying why not otherwise.
"""

from __future__ import annotations

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

from simkube.core.errors import EnvironmentStateError
from simkube.env import health, ports, state
from simkube.env.autoscalers.cluster_autoscaler import merge_flags, resolve
from simkube.env.controlplane.components import Layout
from simkube.env.paths import env_dir

SIZES = (100, 1_000)
GROUPS = 5
WINDOW = 60.0
WARM_LOOPS = 3
TIMEOUT = 300.0
SKCTL = str(Path(sys.executable).parent / "skctl")
CA_NAMESPACE = "kube-system"
KWOK_GROUP_ANNOTATION = "cluster-autoscaler.kwok.nodegroup/name"
Samples = dict[tuple[str, ...], float]  # (metric name, label values...) -> value


def _scrape(url: str) -> Samples:
    found: Samples = {}
    for family in text_string_to_metric_families(httpx.get(url, timeout=30).text):
        for sample in family.samples:
            labels = sample.labels
            key = (sample.name, labels.get("function") or labels.get("method") or "",
                   labels.get("code") or "", labels.get("le") or "")
            found[key] = sample.value
    return found


def _delta(before: Samples, after: Samples, name: str, label: str, *, code: str = "",
           le: str = "") -> float:
    key = (name, label, code, le)
    return after.get(key, 0.0) - before.get(key, 0.0)


def _loops(url: str) -> float:
    return _scrape(url).get(
        ("cluster_autoscaler_function_duration_seconds_count", "main", "", ""), 0.0)


def _wait(check: Any, what: str, *, process: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"CA exited with {process.returncode} before {what}")
        try:
            if check():
                return
        except httpx.HTTPError:
            pass
        time.sleep(1.0)
    raise TimeoutError(f"{what} within {TIMEOUT:.0f}s")


def _window(ca_url: str, rpc_url: str | None, *, process: subprocess.Popen[bytes] | None = None,
            ) -> tuple[Samples, Samples, Samples, Samples]:
    """Metrics before and after WINDOW seconds, starting once CA has made WARM_LOOPS loops."""
    _wait(lambda: _loops(ca_url) >= WARM_LOOPS, f"{WARM_LOOPS} CA loops", process=process)
    ca_before, rpc_before = _scrape(ca_url), _scrape(rpc_url) if rpc_url else {}
    time.sleep(WINDOW)
    return ca_before, _scrape(ca_url), rpc_before, _scrape(rpc_url) if rpc_url else {}


def _functions(before: Samples, after: Samples, *, nodes: int, provider: str) -> dict[str, Any]:
    name = "cluster_autoscaler_function_duration_seconds"
    loops = _delta(before, after, f"{name}_count", "main")
    functions = sorted({key[1] for key in after if key[0] == f"{name}_sum"})
    per_loop = {f: round(_delta(before, after, f"{name}_sum", f) / loops, 4)
                for f in functions if loops and _delta(before, after, f"{name}_count", f)}
    bounds = sorted({key[3] for key in after if key[0] == f"{name}_bucket" and key[1] == "main"},
                    key=float)

    def quantile(fraction: float) -> float | None:
        for bound in bounds:
            if _delta(before, after, f"{name}_bucket", "main", le=bound) >= fraction * loops:
                return float(bound)
        return None
    return {"figure": "autoscaler_loop.functions", "provider": provider, "nodes": nodes,
            "loops": int(loops), "main_p50_le": quantile(0.5), "main_p90_le": quantile(0.9),
            "seconds_per_loop": per_loop}


def _rpcs(before: Samples, after: Samples, *, loops: int, nodes: int) -> dict[str, Any]:
    calls: dict[str, float] = {}
    for key in after:
        if key[0] == "grpc_server_handled_total":
            calls[key[1]] = calls.get(key[1], 0.0) + _delta(before, after, key[0], key[1],
                                                                  code=key[2])
    total = "grpc_server_handling_seconds"
    return {"figure": "autoscaler_loop.rpcs", "provider": "sk-cloudprov", "nodes": nodes,
            "loops": loops,
            "calls_per_loop": {m: round(c / loops, 1) for m, c in sorted(calls.items()) if c},
            "server_ms_mean": {m: round(1000 * _delta(before, after, f"{total}_sum", m) / c, 3)
                               for m, c in sorted(calls.items()) if c}}


def _skctl(*args: str) -> str:
    return subprocess.run([SKCTL, *args], check=True, capture_output=True, text=True,
                          timeout=900).stdout


def _cloudprov(nodes: int, work: Path) -> Iterator[dict[str, Any]]:
    name = f"bench-loop-{os.getpid()}"
    per_group = nodes // GROUPS
    groups = work / "groups.yaml"
    groups.write_text(yaml.safe_dump({"nodeGroups": [
        {"id": f"pool-{n}", "minSize": per_group, "maxSize": per_group * 2,
         "pricePerHour": 0.384, "shape": {"cpu": 8, "memory": "32Gi",
                                          "instanceType": "m5.2xlarge", "zone": "sim-a"}}
        for n in range(GROUPS)]}))
    try:
        _skctl("env", "up", "--name", name, "--autoscaler", "--node-groups", str(groups),
               f"--autoscaler-flag=--max-nodes-total={nodes * 2}")
        recorded = state.load(env_dir(name))
        assert recorded is not None  # noqa: S101  # env up just wrote it
        metrics = next(arg.split("=", 1)[1] for c in recorded.components for arg in c.argv
                       if c.name == "sk-cloudprov" and arg.startswith("--metrics-listen="))
        ca_url = f"http://{recorded.addresses['autoscaler']}/metrics"
        ca_before, ca_after, rpc_before, rpc_after = _window(ca_url, f"http://{metrics}/metrics")
        functions = _functions(ca_before, ca_after, nodes=nodes, provider="sk-cloudprov")
        yield functions
        yield _rpcs(rpc_before, rpc_after, loops=functions["loops"] or 1, nodes=nodes)
    finally:
        subprocess.run([SKCTL, "env", "down", "--name", name], check=False,
                       capture_output=True, timeout=300)


def _kwok_template(nodes: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": "{name}",
        "annotations": {KWOK_GROUP_ANNOTATION: "pool",
                        "cluster-autoscaler.kwok.nodegroup/min-count": str(nodes),
                        "cluster-autoscaler.kwok.nodegroup/max-count": str(nodes * 2),
                        "cluster-autoscaler.kwok.nodegroup/desired-count": str(nodes)},
        "labels": {"kubernetes.io/hostname": "{name}", "kubernetes.io/os": "linux",
                   "kubernetes.io/arch": "amd64",
                   "node.kubernetes.io/instance-type": "m5.2xlarge",
                   "topology.kubernetes.io/zone": "sim-a"}},
        "spec": {"providerID": "kwok://{name}"},
        "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                   "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}


def _kwok_provider(nodes: int, work: Path, binary: Path) -> Iterator[dict[str, Any]]:
    name = f"bench-loop-kwok-{os.getpid()}"
    template = work / "kwok-node.yaml"
    template.write_text(yaml.safe_dump(_kwok_template(nodes)))
    ca: subprocess.Popen[bytes] | None = None
    try:
        _skctl("env", "up", "--name", name, "--nodes", str(nodes), "--node-template",
               str(template))
        layout = Layout(root=env_dir(name))
        status = json.loads(_skctl("env", "status", "--name", name, "--json"))
        config = {"apiVersion": "v1alpha1", "readNodesFrom": "cluster",
                  "nodegroups": {"fromNodeAnnotationKey": KWOK_GROUP_ANNOTATION},
                  "nodes": {"skipTaint": True}}
        httpx.post(f"{status['api_server']}/api/v1/namespaces/{CA_NAMESPACE}/configmaps",
                   verify=health.api_ssl_context(layout.pki), timeout=30, json={
                       "apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": "kwok-provider-config"},
                       "data": {"config": yaml.safe_dump(config)}}).raise_for_status()
        port = ports.allocate(1)[0]
        log = (work / "ca-kwok.log").open("wb")
        ca = subprocess.Popen(
            [str(binary), "--cloud-provider=kwok", f"--kubeconfig={layout.admin_kubeconfig}",
             f"--address=127.0.0.1:{port}", "--leader-elect=false",
             *merge_flags((f"--max-nodes-total={nodes * 2}",))],
            stdout=log, stderr=subprocess.STDOUT,
            env={**os.environ, "KWOK_PROVIDER_MODE": "local", "POD_NAMESPACE": CA_NAMESPACE,
                 "KUBECONFIG": str(layout.admin_kubeconfig)})
        ca_url = f"http://127.0.0.1:{port}/metrics"
        ca_before, ca_after, _, _ = _window(ca_url, None, process=ca)
        yield _functions(ca_before, ca_after, nodes=nodes, provider="kwok")
    finally:
        if ca is not None:
            # On SIGTERM the kwok provider's Cleanup deletes every node it owns, one call at
            # a time; the environment goes anyway.
            ca.kill()
            ca.wait(timeout=60)
        subprocess.run([SKCTL, "env", "down", "--name", name], check=False,
                       capture_output=True, timeout=300)


def run() -> Iterator[dict[str, Any]]:
    try:
        binary = resolve(None)
    except EnvironmentStateError as exc:
        yield {"figure": "autoscaler_loop", "ran": False,
               "reason": f"no Cluster Autoscaler binary: {exc}"}
        return
    os.environ.setdefault("SIMKUBE_CLUSTER_AUTOSCALER", str(binary.path))
    sizes = tuple(int(s) for s in os.environ.get("SIMKUBE_BENCH_LOOP_SIZES", "").split(",")
                  if s) or SIZES
    for nodes in sizes:
        with tempfile.TemporaryDirectory(prefix="bench-loop-") as work:
            yield from _cloudprov(nodes, Path(work))
            yield from _kwok_provider(nodes, Path(work), binary.path)
