"""A run's Cluster Autoscaler timers reach CA's Deployment in a cluster, and are taken back.

In a cluster sk-ctrl cannot restart processes; it patches CA's Deployment (its container's
args), waits for the rollout, and keeps the original args in an annotation so restoring
needs nothing but the object itself. Here the Deployment's pods run on the environment's
KWOK nodes, so the rollout really completes.
"""

from __future__ import annotations

import json
import uuid

import pytest

from simkube.core.kubeapi import KubeClient
from simkube.core.replay_flags import BYPASSED_SCHEDULER
from simkube.core.simtime import TimerSettings, TimeScale
from simkube.ctrl.timing import (
    BASE_ARGS_ANNOTATION,
    RUN_ANNOTATION,
    AutoscalerDeployment,
    publish,
    withdraw,
)
from simkube.simulation.run_configmap import RUN_CONFIGMAP, RunTiming

pytestmark = pytest.mark.integration
ARGS = ["--cloud-provider=externalgrpc", "--scan-interval=2s", "--v=2"]


def deployment(name: str) -> dict[str, object]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels},
                "spec": {"nodeSelector": {"type": "kwok"},
                         "tolerations": [{"key": "kwok.x-k8s.io/node", "operator": "Exists",
                                          "effect": "NoSchedule"}],
                         "containers": [{"name": "cluster-autoscaler", "image": "ca:fake",
                                         "args": ARGS}]}}}}


async def test_the_deployment_gets_scaled_flags_and_its_own_back(api: KubeClient) -> None:
    namespace = f"t-{uuid.uuid4().hex[:8]}"
    await api.request("POST", "/api/v1/namespaces", body={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    try:
        await api.request("POST", path, body=deployment("cluster-autoscaler"))
        target = AutoscalerDeployment(kube=api, namespace=namespace, name="cluster-autoscaler")
        settings = TimerSettings(values={"clusterAutoscaler.scan-interval": 20_000})
        assert await target.skips_age_wait(scale=TimeScale(10))
        assert not await target.skips_age_wait(scale=TimeScale(1))
        await target.apply(scale=TimeScale(10), settings=settings, run="s-r1")
        assert await target.skips_age_wait(scale=TimeScale(10))  # from the originals
        found = await api.request("GET", f"{path}/cluster-autoscaler")
        args = found["spec"]["template"]["spec"]["containers"][0]["args"]
        assert "--scan-interval=2000ms" in args
        assert "--scale-down-unneeded-time=60000ms" in args
        assert "--scan-interval=2s" not in args
        # Faster than real time: CA's fixed 2 s pod-age buffer is bypassed (core.replay_flags).
        assert f"--bypassed-scheduler-names={BYPASSED_SCHEDULER}" in args
        # The run's value takes its namesake's place (core.flags.with_flags); the rest stay.
        assert args[:3] == ["--cloud-provider=externalgrpc", "--scan-interval=2000ms", "--v=2"]
        assert json.loads(found["metadata"]["annotations"][BASE_ARGS_ANNOTATION]) == ARGS
        assert found["status"]["availableReplicas"] == 1  # the rollout was waited for
        await target.apply(scale=TimeScale(20), settings=settings, run="s-r2")  # from the originals
        again = await api.request("GET", f"{path}/cluster-autoscaler")
        # A new run rolls CA out afresh even with the same args: nothing remembered.
        assert again["spec"]["template"]["metadata"]["annotations"][RUN_ANNOTATION] == "s-r2"
        assert json.loads(again["metadata"]["annotations"][BASE_ARGS_ANNOTATION]) == ARGS
        assert "--scan-interval=1000ms" in again["spec"]["template"]["spec"]["containers"][0][
            "args"]
        # A gated run's CA scans on the gated cadence (core.replay_flags.run_flags).
        await target.apply(scale=TimeScale(20), settings=settings, run="s-r3", gated=True)
        gated = await api.request("GET", f"{path}/cluster-autoscaler")
        assert "--scan-interval=250ms" in gated["spec"]["template"]["spec"]["containers"][0][
            "args"]
        await target.restore()
        restored = await api.request("GET", f"{path}/cluster-autoscaler")
        assert restored["spec"]["template"]["spec"]["containers"][0]["args"] == ARGS
        assert BASE_ARGS_ANNOTATION not in (restored["metadata"].get("annotations") or {})
        assert RUN_ANNOTATION not in (restored["spec"]["template"]["metadata"].get(
            "annotations") or {})

        await publish(api, namespace=namespace,
                      timing=RunTiming(scale=TimeScale(10), seed=3, run="s-r1"))
        await publish(api, namespace=namespace,  # replaced
                      timing=RunTiming(scale=TimeScale(20), seed=3, run="s-r2"))
        config = await api.request(
            "GET", f"/api/v1/namespaces/{namespace}/configmaps/{RUN_CONFIGMAP}")
        assert config["data"] == {"speed": "20.0", "seed": "3", "run": "s-r2"}
        await withdraw(api, namespace=namespace)
        await withdraw(api, namespace=namespace)  # already gone: fine
    finally:
        await api.request("DELETE", f"/api/v1/namespaces/{namespace}")
