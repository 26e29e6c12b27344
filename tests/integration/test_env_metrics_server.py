"""metrics-server over KWOK's emulated usage, end to end with the real components.

``env up --metrics-server`` must give a cluster where the usage written into a KWOK
ClusterResourceUsage is what ``kubectl top pods`` shows (KWOK serves it as a kubelet, the
project's metrics-server scrapes it, the aggregator serves metrics.k8s.io), and where a real
autoscaling/v2 HPA, run by the real kube-controller-manager, scales a Deployment out when
the usage rises. The environment is retimed to speed 5 first, as a Simulation's run would:
metrics-server restarts with a 3 s resolution (under upstream's 10 s floor) and the HPA
syncs every 3 s, so the test also proves the speed-scaled restart. The PodMetrics windows
are checked as measured (3 s) and, after a retime that sets the wrapper's ``min-window``,
raised to it (docs/hpa.md: why a replay reports the source's window), and a pod gated the way
sk-driver gates a replayed pod reports a window the HPA cannot pass until it is marked
countable; the wrapper's own Go tests run here too.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from simkube.core.durations import parse_duration
from simkube.core.kubeapi import (
    CLUSTER_RESOURCE_USAGES,
    DEPLOYMENTS,
    HORIZONTAL_POD_AUTOSCALERS,
    NAMESPACES,
    PODS,
    ApiError,
    KubeClient,
    apply,
    merge_patch,
    poll,
)
from simkube.core.simtime import TimerSettings, TimeScale
from simkube.driver.names import USAGE_COUNTABLE, USAGE_WORKLOAD
from simkube.env import retiming
from simkube.env.paths import env_dir
from simkube.env.toolchain.cache import binary_path
from simkube.env.toolchain.catalog import METRICS_SERVER, Binary
from tests.conftest import METRICS_ENV_VARIABLE, METRICS_UP_ARGS, running_env, skctl
from tests.support.gotests import assert_go_tests_pass

pytestmark = pytest.mark.integration
NS = "hpa-demo"
MANAGER = "test"
TOLERATION = {"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}
SPEED = 5
MIN_WINDOW_MS = 50_000  # trace time: 10 s of wall time at SPEED, far above the 3 s measured


def test_the_wrappers_go_tests_pass() -> None:
    assert_go_tests_pass(METRICS_SERVER)


def _deployment() -> dict[str, Any]:
    labels = {"app": "web"}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": NS},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {
                         "tolerations": [TOLERATION],
                         "containers": [{"name": "app", "image": "web:1", "resources": {
                             "requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}}


def _hpa() -> dict[str, Any]:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": NS},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": "web"},
                     "minReplicas": 1, "maxReplicas": 4,
                     "metrics": [{"type": "Resource", "resource": {
                         "name": "cpu", "target": {"type": "Utilization",
                                                   "averageUtilization": 50}}}]}}


def _usage(cpu: str) -> dict[str, Any]:
    """Every pod of the namespace uses ``cpu`` (one container each)."""
    return {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "ClusterResourceUsage",
            "metadata": {"name": "hpa-demo"},
            "spec": {"selector": {"matchNamespaces": [NS]},
                     "usages": [{"usage": {"cpu": {"value": cpu},
                                           "memory": {"value": "50Mi"}}}]}}


async def _windows_ms(kube: KubeClient) -> list[float]:
    """The window of every PodMetrics the aggregated metrics API serves in the namespace."""
    listed = await kube.request("GET", f"/apis/metrics.k8s.io/v1beta1/namespaces/{NS}/pods")
    return [parse_duration(item["window"], field="window") for item in listed["items"]]


def _top(kubeconfig: str) -> str:
    result = subprocess.run([str(binary_path(Binary.KUBECTL)), f"--kubeconfig={kubeconfig}",
                             "top", "pods", "-n", NS, "--no-headers"],
                            capture_output=True, text=True, timeout=30, check=False)
    return result.stdout


async def _scenario(kubeconfig: str) -> None:
    kube = await KubeClient.connect(kubeconfig=Path(kubeconfig))
    try:
        await apply(kube, NAMESPACES.path(name=NS), {"apiVersion": "v1", "kind": "Namespace",
                                                     "metadata": {"name": NS}},
                    field_manager=MANAGER)
        await apply(kube, CLUSTER_RESOURCE_USAGES.path(name="hpa-demo"), _usage("30m"),
                    field_manager=MANAGER)
        await apply(kube, DEPLOYMENTS.path(namespace=NS, name="web"), _deployment(),
                    field_manager=MANAGER)

        async def shown() -> bool:  # kubectl top pods shows the usage set (30m of 100m)
            lines = (await asyncio.to_thread(_top, kubeconfig)).split()
            return len(lines) >= 3 and lines[1] == "30m"
        assert await poll(shown, timeout=90, interval=1.0), _top(kubeconfig)
        # As measured: two scrapes 3 s apart (the resolution at speed 5).
        assert all(2_000 <= ms <= 4_500 for ms in await _windows_ms(kube))

        await apply(kube, HORIZONTAL_POD_AUTOSCALERS.path(namespace=NS, name="web"), _hpa(),
                    field_manager=MANAGER)
        # 30 % of the request: under the 50 % target, one replica stays one.
        await asyncio.sleep(8)
        deployment = await kube.request("GET", DEPLOYMENTS.path(namespace=NS, name="web"))
        assert deployment["spec"]["replicas"] == 1
        # 200 % of the request: the HPA wants 1 * 200 / 50 = 4 pods (its maximum).
        await apply(kube, CLUSTER_RESOURCE_USAGES.path(name="hpa-demo"), _usage("200m"),
                    field_manager=MANAGER)

        async def scaled() -> bool:
            found = await kube.request("GET", DEPLOYMENTS.path(namespace=NS, name="web"))
            return bool(found["spec"]["replicas"] == 4)
        assert await poll(scaled, timeout=120, interval=1.0)
        hpa = await kube.request("GET", HORIZONTAL_POD_AUTOSCALERS.path(namespace=NS,
                                                                        name="web"))
        assert hpa["status"]["desiredReplicas"] == 4

        async def four_pods() -> bool:  # the ReplicaSet follows the Deployment
            return len((await kube.request("GET", PODS.path(namespace=NS)))["items"]) == 4
        assert await poll(four_pods, timeout=30, interval=0.5)
    finally:
        await kube.close()


async def _floored_windows(kubeconfig: str) -> None:
    kube = await KubeClient.connect(kubeconfig=Path(kubeconfig))
    try:
        async def floored() -> bool:
            try:
                windows = await _windows_ms(kube)
            except ApiError:  # the restarted metrics-server loads its authentication first
                return False
            return bool(windows) and all(ms == MIN_WINDOW_MS / SPEED for ms in windows)
        assert await poll(floored, timeout=60, interval=1.0), await _windows_ms(kube)
        await _gated_windows(kube)
    finally:
        await kube.close()


async def _gated_windows(kube: KubeClient) -> None:
    """A pod sk-driver gates reports a window the HPA cannot pass until it is marked
    countable, then its windows as measured; the other pods keep the floor."""
    pods = (await kube.request("GET", PODS.path(namespace=NS)))["items"]
    gated = pods[0]["metadata"]["name"]

    async def windows() -> dict[str, float]:
        listed = await kube.request("GET",
                                    f"/apis/metrics.k8s.io/v1beta1/namespaces/{NS}/pods")
        return {item["metadata"]["name"]: parse_duration(item["window"], field="window")
                for item in listed["items"]}

    async def annotate(annotations: dict[str, str]) -> None:
        await merge_patch(kube, PODS.path(namespace=NS, name=gated),
                          {"metadata": {"annotations": annotations}}, field_manager=MANAGER)

    await annotate({USAGE_WORKLOAD: "apps/v1.Deployment hpa-demo/web"})

    async def held() -> bool:
        return (await windows()).get(gated) == 3_600_000
    assert await poll(held, timeout=30, interval=0.5), await windows()
    await annotate({USAGE_COUNTABLE: "true"})

    async def counted() -> bool:
        served = await windows()
        others = [ms for name, ms in served.items() if name != gated]
        return 1_000 <= served.get(gated, 0) <= 4_500 and \
            all(ms == MIN_WINDOW_MS / SPEED for ms in others)
    assert await poll(counted, timeout=30, interval=0.5), await windows()


def test_kubectl_top_and_a_real_hpa_see_kwok_usage() -> None:
    with running_env(variable=METRICS_ENV_VARIABLE, prefix="metrics",
                     up_args=METRICS_UP_ARGS) as env:
        name = env.name
        status = json.loads(skctl("env", "status", "--name", name, "--json").stdout)
        assert "metrics-server" in {c["name"] for c in status["components"]}
        restarted = retiming.retime(name, scale=TimeScale(SPEED))
        assert "metrics-server" in restarted
        state = json.loads((env_dir(name) / "state.json").read_text())
        argv = next(c["argv"] for c in state["components"] if c["name"] == "metrics-server")
        assert "--metric-resolution=3000ms" in argv
        assert "--kubelet-request-timeout=2000ms" in argv
        asyncio.run(_scenario(env.kubeconfig))
        # A replay's floor: the same readings, reported over (at least) the floor's window.
        floored = TimerSettings(values={"metricsServer.min-window": MIN_WINDOW_MS})
        assert "metrics-server" in retiming.retime(name, scale=TimeScale(SPEED),
                                                   settings=floored)
        asyncio.run(_floored_windows(env.kubeconfig))
        assert "metrics-server" in retiming.restore(name)
