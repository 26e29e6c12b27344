import pytest

from benchmarks import fidelity_hpa_load as load

pytestmark = pytest.mark.unit


def test_the_load_rises_holds_and_falls_back() -> None:
    at = [load.load_at(t, duration_s=100.0) for t in (0, 10, 22.5, 35, 45, 55, 67.5, 80, 100)]
    assert at == [400, 400, 1800, 3200, 3200, 3200, 1800, 400, 400]
    assert load.load_at(-5, duration_s=100.0) == load.LOW_M
    assert load.load_at(500, duration_s=100.0) == load.LOW_M


def test_the_peak_needs_seven_replicas_at_the_target() -> None:
    per_replica = load.CPU_REQUEST_M * load.TARGET_PERCENT // 100
    assert -(-load.PEAK_M // per_replica) == 7
    assert per_replica >= load.LOW_M  # one replica at the bottom


def test_the_hpa_targets_the_deployment_and_usage_names_the_pods() -> None:
    (_, deployment), (_, hpa) = load.manifests()
    assert hpa["spec"]["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    target = hpa["spec"]["metrics"][0]["resource"]["target"]
    assert target == {"type": "Utilization", "averageUtilization": load.TARGET_PERCENT}
    usage = load.usage(pods=["b", "a"], per_pod_m=45)
    assert usage["spec"]["selector"]["matchNames"] == ["a", "b"]
    assert usage["spec"]["usages"][0]["usage"]["cpu"] == {"value": "45m"}
