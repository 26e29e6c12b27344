import pytest

from simkube.driver.hpa_targets import HpaTargets

pytestmark = pytest.mark.unit


def _deployment(replicas: int, *, name: str = "web") -> dict[str, object]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "shop"},
            "spec": {"replicas": replicas, "template": {"spec": {}}}}


HPA = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
       "metadata": {"name": "web", "namespace": "shop"},
       "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                   "name": "web"}, "maxReplicas": 5}}


def test_a_target_keeps_its_replicas_on_creation_and_loses_them_after() -> None:
    targets = HpaTargets()
    targets.note([HPA, _deployment(2)])
    assert targets.strip(_deployment(2))["spec"]["replicas"] == 2
    later = _deployment(4)
    stripped = targets.strip(later)
    assert "replicas" not in stripped["spec"]
    assert stripped["spec"]["template"] == {"spec": {}}
    assert later["spec"]["replicas"] == 4  # the input is not modified


def test_workloads_no_hpa_targets_keep_their_replicas() -> None:
    targets = HpaTargets()
    targets.note([HPA])
    for replicas in (1, 3):
        assert targets.strip(_deployment(replicas, name="api"))["spec"]["replicas"] == replicas


def test_an_hpa_in_another_namespace_does_not_target_the_workload() -> None:
    targets = HpaTargets()
    targets.note([{**HPA, "metadata": {"name": "web", "namespace": "other"}}])
    targets.strip(_deployment(1))
    assert targets.strip(_deployment(3))["spec"]["replicas"] == 3


def test_an_hpa_without_a_usable_target_is_ignored() -> None:
    targets = HpaTargets()
    targets.note([{**HPA, "spec": {"scaleTargetRef": {"kind": "Deployment"}}},
                  {**HPA, "spec": "broken"}])
    targets.strip(_deployment(1))
    assert targets.strip(_deployment(3))["spec"]["replicas"] == 3
