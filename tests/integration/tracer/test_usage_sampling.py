"""The usage sampler against the real API server of the session environment.

The environment serves no ``metrics.k8s.io`` (metrics-server is not part of it on this
branch), which is the real path of every cluster without a metrics pipeline: discovery says
so, the sampler logs it once and records nothing, and the tracer records objects as before.
The sampler's owner-chain resolution runs against real pods of a real Deployment.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from simkube.core.kubeapi import Discovery, KubeClient
from simkube.trace import ObjectRef
from simkube.tracer.config import UsageSettings, parse_config
from simkube.tracer.owners import OwnerResolver
from simkube.tracer.usage import UsageBook
from simkube.tracer.usage_sampling import UsageSampler
from tests.conftest import SimEnv
from tests.integration.tracer.conftest import TracerProcess, events_of
from tests.support.kube import deployment, eventually

pytestmark = pytest.mark.integration
HPA = "autoscaling/v2.HorizontalPodAutoscaler"
DEPLOYMENT = "apps/v1.Deployment"


async def sampler_for(sim_env: SimEnv, namespace: str,
                      tracked: dict[str, Any]) -> tuple[UsageSampler, KubeClient, UsageBook]:
    api = await KubeClient.connect(kubeconfig=Path(sim_env.kubeconfig))
    discovery = Discovery(api)
    config = parse_config({"trackedObjects": tracked, "namespaces": [namespace]}, source="t")
    book = UsageBook(UsageSettings())
    sampler = UsageSampler(api=api, discovery=discovery, owners=OwnerResolver(api, discovery),
                           config=config, book=book, now_ms=lambda: 0)
    return sampler, api, book


async def test_without_metrics_k8s_io_the_sampler_stops_and_records_nothing(
        sim_env: SimEnv, namespace: str) -> None:
    sampler, api, book = await sampler_for(sim_env, namespace, {"v1.Pod": {}})
    try:
        assert await sampler.served() is None
        await sampler.run()  # returns at once instead of sampling forever
        assert (sampler.rounds, len(book)) == (0, 0)
    finally:
        await api.close()


async def test_pods_resolve_to_their_tracked_workload_root(
        sim_env: SimEnv, kube: client.ApiClient, namespace: str) -> None:
    await client.AppsV1Api(kube).create_namespaced_deployment(namespace,
                                                              deployment("web", replicas=2))

    async def pods() -> list[str] | None:
        found = await client.CoreV1Api(kube).list_namespaced_pod(namespace)
        names = [pod.metadata.name for pod in found.items]
        return names if len(names) == 2 else None
    names = await eventually(pods, timeout=60, what="two pods of web")
    web = ObjectRef(api_version="apps/v1", kind="Deployment", namespace=namespace, name="web")
    sampler, api, _ = await sampler_for(sim_env, namespace,
                                        {DEPLOYMENT: {"podSpecTemplatePaths": ["/spec/template"]},
                                         "v1.Pod": {}})
    untracked, api2, _ = await sampler_for(sim_env, namespace, {"batch/v1.Job": {}})
    try:
        assert [await sampler.root_of(namespace, name) for name in names] == [web, web]
        assert await untracked.root_of(namespace, names[0]) is None
        assert await sampler.root_of(namespace, "no-such-pod") is None
    finally:
        await api.close()
        await api2.close()


async def test_the_tracer_records_hpas_and_says_once_that_it_records_no_usage(
        kube: client.ApiClient, namespace: str,
        tracer: Callable[[dict[str, Any]], TracerProcess], tmp_path: Path) -> None:
    process = tracer({"trackedObjects": {HPA: {}, DEPLOYMENT: {}}, "namespaces": [namespace],
                      "usage": {"period": "1s"}})
    await process.start(watching=2)
    await client.AppsV1Api(kube).create_namespaced_deployment(namespace,
                                                              deployment("web", replicas=1))
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "web"},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                       "name": "web"}, "minReplicas": 1, "maxReplicas": 5,
                    "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                        "type": "Utilization", "averageUtilization": 50}}}]}}
    await client.AutoscalingV2Api(kube).create_namespaced_horizontal_pod_autoscaler(
        namespace, hpa)

    async def both_recorded() -> bool:
        status = await process.status()
        return sum(k.events_stored for k in status.kinds) >= 2
    await eventually(both_recorded, timeout=60, what="the Deployment and the HPA recorded")
    trace = process.export(tmp_path)
    assert ("apply", HPA, f"{namespace}/web") in events_of(trace)
    (recorded,) = [obj for obj in trace.objects() if obj["kind"] == "HorizontalPodAutoscaler"]
    assert recorded["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 50
    assert trace.usage == ()
    lines = [json.loads(line) for line in process.log.read_text().splitlines()
             if line.startswith("{")]
    said = [line for line in lines if "does not serve metrics.k8s.io" in line.get("event", "")]
    assert len(said) == 1
