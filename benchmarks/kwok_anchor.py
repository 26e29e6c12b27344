"""The anchor of the loop breakdown: CA with its in-process ``kwok`` cloud provider.

CA 1.36.1 built with the ``kwok`` tag answers NodeGroupForNode and the rest in its own
process. On ``skctl env up --nodes N`` with nodes the kwok provider owns (providerID
``kwok://``, its group annotations: one group of N, minimum N), CA is started here with
``--cloud-provider=kwok``, ``readNodesFrom: cluster`` and the environment's CA flags, and its
loop measured as through sk-cloudprov. On SIGTERM the provider's Cleanup deletes every node it
owns, one call at a time, so CA is killed instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import yaml

from benchmarks.loop_metrics import functions, window
from simkube.env import health, ports
from simkube.env.autoscalers.cluster_autoscaler import merge_flags
from simkube.env.controlplane.components import Layout
from simkube.env.paths import env_dir

SKCTL = str(Path(sys.executable).parent / "skctl")
CA_NAMESPACE = "kube-system"
KWOK_GROUP_ANNOTATION = "cluster-autoscaler.kwok.nodegroup/name"


def skctl(*args: str) -> str:
    return subprocess.run([SKCTL, *args], check=True, capture_output=True, text=True,
                          timeout=900).stdout


def kwok_template(nodes: int) -> dict[str, Any]:
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


def kwok_provider(nodes: int, work: Path, binary: Path) -> Iterator[dict[str, Any]]:
    name = f"bench-loop-kwok-{os.getpid()}"
    template = work / "kwok-node.yaml"
    template.write_text(yaml.safe_dump(kwok_template(nodes)))
    ca: subprocess.Popen[bytes] | None = None
    log = (work / "ca-kwok.log").open("wb")
    try:
        skctl("env", "up", "--name", name, "--nodes", str(nodes), "--node-template",
              str(template))
        layout = Layout(root=env_dir(name))
        status = json.loads(skctl("env", "status", "--name", name, "--json"))
        config = {"apiVersion": "v1alpha1", "readNodesFrom": "cluster",
                  "nodegroups": {"fromNodeAnnotationKey": KWOK_GROUP_ANNOTATION},
                  "nodes": {"skipTaint": True}}
        httpx.post(f"{status['api_server']}/api/v1/namespaces/{CA_NAMESPACE}/configmaps",
                   verify=health.api_ssl_context(layout.pki), timeout=30, json={
                       "apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": "kwok-provider-config"},
                       "data": {"config": yaml.safe_dump(config)}}).raise_for_status()
        port = ports.allocate(1)[0]
        ca = subprocess.Popen(
            [str(binary), "--cloud-provider=kwok", f"--kubeconfig={layout.admin_kubeconfig}",
             f"--address=127.0.0.1:{port}", "--leader-elect=false",
             *merge_flags((f"--max-nodes-total={nodes * 2}",))],
            stdout=log, stderr=subprocess.STDOUT,
            env={**os.environ, "KWOK_PROVIDER_MODE": "local", "POD_NAMESPACE": CA_NAMESPACE,
                 "KUBECONFIG": str(layout.admin_kubeconfig)})
        ca_url = f"http://127.0.0.1:{port}/metrics"
        ca_before, ca_after, _, _ = window(ca_url, process=ca)
        yield functions(ca_before, ca_after, nodes=nodes, provider="kwok")
    finally:
        if ca is not None:
            # On SIGTERM the kwok provider's Cleanup deletes every node it owns, one call at
            # a time; the environment goes anyway.
            ca.kill()
            ca.wait(timeout=60)
        log.close()
        subprocess.run([SKCTL, "env", "down", "--name", name], check=False,
                       capture_output=True, timeout=300)
