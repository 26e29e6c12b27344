from __future__ import annotations

import pytest

from simkube.driver.names import SIMULATION_LABEL, USAGE_WORKLOAD
from simkube.driver.usage_objects import (
    PodShare,
    object_name,
    share,
    usage_object,
    workload_key,
)
from simkube.trace.model.usage import UsageSample, WorkloadUsage

pytestmark = pytest.mark.unit
SAMPLE = UsageSample(t_ms=0, pods=2, cpu_millicores=1200, memory_bytes=800_000_000)


def test_the_workload_total_is_spread_over_running_pods_and_their_containers() -> None:
    assert share(SAMPLE, running=2, containers=1) == PodShare(cpu_millicores=600,
                                                              memory_bytes=400_000_000)
    # An HPA doubling the pods halves what each uses: the load is the workload's.
    assert share(SAMPLE, running=4, containers=1).cpu_millicores == 300
    assert share(SAMPLE, running=2, containers=2) == PodShare(cpu_millicores=300,
                                                              memory_bytes=200_000_000)


def test_shares_never_reach_zero_so_metrics_server_keeps_the_pod() -> None:
    idle = UsageSample(t_ms=0, pods=1, cpu_millicores=0, memory_bytes=0)
    assert share(idle, running=3, containers=1) == PodShare(cpu_millicores=1, memory_bytes=1)


def test_no_running_pods_is_refused() -> None:
    with pytest.raises(ValueError, match="no pods"):
        share(SAMPLE, running=0, containers=1)


def test_the_object_selects_the_workloads_pods_by_name_in_its_namespace() -> None:
    usage = WorkloadUsage(kind="apps/v1.Deployment", namespace="shop", name="web",
                          period_ms=15_000, samples=(SAMPLE,))
    key = workload_key(usage)
    assert key == "apps/v1.Deployment shop/web"
    name = object_name(simulation="sim-1", key=key)
    assert name.startswith("sim-1-usage-")
    assert name == object_name(simulation="sim-1", key=key)
    assert name != object_name(simulation="sim-1", key="apps/v1.Deployment shop/api")
    owner = {"apiVersion": "simkube.dev/v1alpha1", "kind": "SimulationRoot", "name": "sim-1",
             "uid": "u"}
    obj = usage_object(name=name, simulation="sim-1", key=key, namespace="sim-shop",
                       pods=["web-b", "web-a"], pod_share=PodShare(cpu_millicores=250,
                                                                   memory_bytes=1024),
                       owner=owner)
    assert obj["kind"] == "ClusterResourceUsage"
    assert obj["metadata"]["labels"] == {SIMULATION_LABEL: "sim-1"}
    assert obj["metadata"]["annotations"] == {USAGE_WORKLOAD: key}
    assert obj["metadata"]["ownerReferences"] == [owner]
    assert obj["spec"]["selector"] == {"matchNamespaces": ["sim-shop"],
                                       "matchNames": ["web-a", "web-b"]}
    assert obj["spec"]["usages"] == [{"usage": {"cpu": {"value": "250m"},
                                                "memory": {"value": "1024"}}}]
