"""``spec.hpa`` at the driver: a trace's HorizontalPodAutoscaler is replayed (active) or left
out (removed), against the real API server of the session environment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simkube.core.kubeapi import KubeClient
from simkube.driver.names import SIMULATION_LABEL
from simkube.driver.progress import SimulationState
from tests.integration.driver.conftest import assert_nothing_left, start, wait_finished
from tests.support.traces import build_trace, config_map, write_native

pytestmark = pytest.mark.integration
HPAS = "/apis/autoscaling/v2/horizontalpodautoscalers"


def hpa() -> dict[str, Any]:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "app"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": "web"}, "minReplicas": 1, "maxReplicas": 4,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                         "type": "Utilization", "averageUtilization": 50}}}]}}


@pytest.mark.parametrize(("remove", "expected"), [(False, ["web"]), (True, [])])
async def test_the_trace_hpa_is_replayed_unless_removed(driver_kube: KubeClient,
                                                        tmp_path: Path, remove: bool,
                                                        expected: list[str]) -> None:
    trace = write_native(tmp_path / "hpa.trace", build_trace(
        [(0, [config_map("settings"), hpa()]), (500, [config_map("later")])]))
    simulation = await start(driver_kube, trace, speed=10.0, remove_hpas=remove)
    await wait_finished(simulation, timeout=60)
    assert simulation.snapshot().state is SimulationState.SUCCEEDED
    selector = {"labelSelector": f"{SIMULATION_LABEL}={simulation.name}"}
    found = (await driver_kube.request("GET", HPAS, query=selector))["items"]
    assert [item["metadata"]["name"] for item in found] == expected
    maps = (await driver_kube.request("GET", "/api/v1/configmaps", query=selector))["items"]
    assert sorted(item["metadata"]["name"] for item in maps) == ["later", "settings"]
    await simulation.cancel()
    await assert_nothing_left(driver_kube, simulation)
