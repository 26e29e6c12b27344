"""A pod bound to a node that never starts shows in summary.json, the report and compare.

The stuck state is made for real: a Node without KWOK's annotation is one KWOK does not
manage, so a pod bound to it stays Pending with PodScheduled, exactly as the pods of issue
#18 did. The real recorder watches a run with that pod and one without; then the real
``skctl report`` and ``skctl compare`` read the results.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from kubernetes_asyncio import client

from simkube.core.kubeapi import KubeClient
from simkube.core.simtime import REAL_TIME
from simkube.results import Recorder, load_run, run_dir
from simkube.results.starting import NUDGE_ANNOTATION
from tests.conftest import skctl
from tests.support.kube import FAKE_TOLERATION

pytestmark = pytest.mark.e2e


async def record(kube: KubeClient, results: Path, simulation: str, *, prefix: str,
                 stuck_pod: dict[str, object] | None) -> None:
    started = time.monotonic()  # each run's trace time starts at 0, so compare can align them
    recorder = Recorder(kube=kube, run_dir=run_dir(results, simulation, 1),
                        simulation=simulation, run=1, namespace_prefix=prefix, groups={},
                        trace_clock=lambda: time.monotonic() - started, scale=REAL_TIME,
                        interval=0.25, start_grace_s=1.0)
    await recorder.start()
    if stuck_pod is not None:
        namespace = stuck_pod["metadata"]["namespace"]  # type: ignore[index]
        await kube.request("POST", f"/api/v1/namespaces/{namespace}/pods", body=stuck_pod)
    await asyncio.sleep(3.0)
    await recorder.stop()


async def test_a_pod_kwok_never_starts_is_counted_named_and_compared(
        kube: client.ApiClient, tmp_path: Path) -> None:
    core = client.CoreV1Api(kube)
    prefix = f"stuck{os.getpid()}"
    namespace, node = f"{prefix}-shop", f"{prefix}-unmanaged"
    await core.create_namespace({"metadata": {"name": namespace}})
    await core.create_node({"metadata": {"name": node}, "status": {
        "capacity": {"cpu": "4", "memory": "8Gi", "pods": "10"}}})
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "web-0", "namespace": namespace},
           "spec": {"nodeName": node, "tolerations": [FAKE_TOLERATION],
                    "containers": [{"name": "c", "image": "registry.example/c:1"}]}}
    results = tmp_path / "results"
    api = KubeClient(kube)
    try:
        await record(api, results, "stuck", prefix=prefix, stuck_pod=pod)
        await record(api, results, "calm", prefix=f"calm{os.getpid()}", stuck_pod=None)
        seen = await core.read_namespaced_pod("web-0", namespace)
        assert NUDGE_ANNOTATION in (seen.metadata.annotations or {})
        assert seen.status.phase == "Pending"
    finally:
        await core.delete_namespace(namespace)
        await core.delete_node(node)
    summary = load_run(results / "stuck" / "run-1").summary
    assert summary.pods.bound_never_started == 1
    assert list(summary.pods.bound_never_started_pods) == [f"{namespace}/web-0"]
    assert load_run(results / "calm" / "run-1").summary.pods.bound_never_started == 0
    report = skctl("report", "stuck", "--results", str(results), "--output",
                   str(tmp_path / "report"))
    assert "1 pod(s) bound to a node but never started" in report.stdout + report.stderr
    compared = skctl("compare", "stuck", "calm", "--results", str(results), "--output",
                     str(tmp_path / "compare"))
    line = next(row for row in compared.stdout.splitlines() if "bound but never started" in row)
    assert "1" in line
    assert "0" in line
