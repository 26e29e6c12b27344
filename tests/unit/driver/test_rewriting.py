from __future__ import annotations

import copy
from typing import Any

import pytest

from simkube.driver.names import FAKE_NODE_KEY, LIFECYCLE_OWNER, SIMULATION_LABEL, USAGE_WORKLOAD
from simkube.driver.options import Placement, PodTiming
from simkube.driver.rewriting import Rewriter, RootRef
from simkube.trace import ObjectRef, TraceHeader
from simkube.trace.model.fields import FieldTypeError

pytestmark = pytest.mark.unit
ROOT = RootRef(name="sim", uid="root-uid")


def _rewriter(**overrides: Any) -> Rewriter:
    arguments: dict[str, Any] = {
        "simulation": "sim", "prefix": "virtual", "root": ROOT, "header": TraceHeader(),
        "placement": Placement(), "timing": PodTiming(), **overrides}
    return Rewriter(**arguments)


def _deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "u", "resourceVersion": "9",
                     "generation": 3, "creationTimestamp": "2024-01-01T00:00:00Z",
                     "managedFields": [{}], "finalizers": ["x/y"],
                     "ownerReferences": [{"kind": "Thing", "uid": "prod"}],
                     "annotations": {"deployment.kubernetes.io/revision": "4", "team": "a"}},
        "spec": {"replicas": 2, "template": {"metadata": {"labels": {"app": "web"}},
                                             "spec": {"containers": [{"name": "c"}]}}},
        "status": {"replicas": 2}}


def test_namespaced_objects_move_and_get_owned_by_the_root() -> None:
    original = _deployment()
    kept = copy.deepcopy(original)
    result = _rewriter().rewrite(original, namespaced=True)
    assert original == kept  # the input is never modified
    metadata = result["metadata"]
    assert metadata == {
        "name": "web", "namespace": "virtual-shop",
        "annotations": {"team": "a"}, "labels": {SIMULATION_LABEL: "sim"},
        "ownerReferences": [{"apiVersion": "simkube.dev/v1alpha1", "kind": "SimulationRoot",
                             "name": "sim", "uid": "root-uid", "blockOwnerDeletion": True}]}
    assert "status" not in result
    template = result["spec"]["template"]
    assert template["metadata"]["labels"] == {"app": "web", SIMULATION_LABEL: "sim"}
    assert template["spec"]["nodeSelector"] == {"type": "kwok"}
    assert template["spec"]["tolerations"][0]["key"] == FAKE_NODE_KEY


def test_owners_with_lifecycles_mark_their_templates() -> None:
    rewriter = _rewriter(lifecycle_owners=frozenset({"apps/v1.Deployment shop/web"}))
    result = rewriter.rewrite(_deployment(), namespaced=True)
    annotations = result["spec"]["template"]["metadata"]["annotations"]
    assert annotations == {LIFECYCLE_OWNER: "apps/v1.Deployment shop/web"}
    other = _deployment()
    other["metadata"]["name"] = "api"
    template = rewriter.rewrite(other, namespaced=True)["spec"]["template"]["metadata"]
    assert LIFECYCLE_OWNER not in template.get("annotations", {})


def test_targets() -> None:
    rewriter = _rewriter()
    ref = ObjectRef(api_version="v1", kind="ConfigMap", namespace="", name="c")
    assert rewriter.target(ref, namespaced=True).namespace == "virtual-default"
    namespace = ObjectRef(api_version="v1", kind="Namespace", namespace="", name="shop")
    assert rewriter.target(namespace, namespaced=False).name == "virtual-shop"
    wrong = ObjectRef(api_version="storage.k8s.io/v1", kind="StorageClass", namespace="x",
                      name="fast")
    assert rewriter.target(wrong, namespaced=False).namespace == ""


def test_namespaces_and_cluster_scoped_kinds() -> None:
    rewriter = _rewriter()
    namespace = rewriter.rewrite({"apiVersion": "v1", "kind": "Namespace",
                                  "metadata": {"name": "shop"}}, namespaced=False)
    assert namespace["metadata"]["name"] == "virtual-shop"
    storage = rewriter.rewrite({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                                "metadata": {"name": "fast"}, "provisioner": "x"},
                               namespaced=False)
    assert storage["metadata"]["name"] == "fast"
    assert "namespace" not in storage["metadata"]
    assert storage["metadata"]["ownerReferences"][0]["uid"] == "root-uid"


def test_nodes_become_fake_and_keep_their_capacity() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]},
            "status": {"capacity": {"cpu": "8"}, "allocatable": {"cpu": "7"},
                       "conditions": [{"type": "Ready"}], "addresses": [{}]}}
    result = _rewriter().rewrite(node, namespaced=False)
    assert result["metadata"]["annotations"] == {FAKE_NODE_KEY: "fake"}
    assert result["spec"]["taints"] == [
        {"key": "dedicated", "value": "db", "effect": "NoSchedule"},
        {"key": FAKE_NODE_KEY, "value": "fake", "effect": "NoSchedule"}]
    assert result["status"] == {"capacity": {"cpu": "8"}, "allocatable": {"cpu": "7"}}
    again = _rewriter().rewrite(result, namespaced=False)
    assert len(again["spec"]["taints"]) == 2  # the fake taint is not added twice


def test_jobs_services_and_claims_lose_generated_fields() -> None:
    rewriter = _rewriter()
    job = rewriter.rewrite({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "a"},
        "spec": {"selector": {"matchLabels": {"controller-uid": "u"}}, "template": {
            "metadata": {"labels": {"controller-uid": "u", "job-name": "j", "app": "x"}},
            "spec": {"containers": []}}}}, namespaced=True)
    assert "selector" not in job["spec"]
    assert job["spec"]["template"]["metadata"]["labels"] == {"app": "x", SIMULATION_LABEL: "sim"}
    service = rewriter.rewrite({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "a"},
        "spec": {"clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"], "healthCheckNodePort": 3,
                 "ports": [{"port": 80, "nodePort": 30080}]}}, namespaced=True)
    assert service["spec"] == {"ports": [{"port": 80}]}
    headless = rewriter.rewrite({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "h", "namespace": "a"},
        "spec": {"clusterIP": "None"}}, namespaced=True)
    assert headless["spec"]["clusterIP"] == "None"
    claim = rewriter.rewrite({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c", "namespace": "a"}, "spec": {"volumeName": "pv-1"}},
        namespaced=True)
    assert claim["spec"] == {}


def test_bare_pods_are_their_own_template() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "t"},
           "spec": {"nodeName": "prod", "containers": [{"name": "c"}]}}
    rewriter = _rewriter(lifecycle_owners=frozenset({"v1.Pod t/p"}))
    result = rewriter.rewrite(pod, namespaced=True)
    assert result["metadata"]["annotations"] == {LIFECYCLE_OWNER: "v1.Pod t/p"}
    assert "nodeName" not in result["spec"]
    assert result["spec"]["nodeSelector"] == {"type": "kwok"}


def test_null_maps_are_filled_and_other_shapes_refused() -> None:
    rewriter = _rewriter()
    nulls = {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": "p", "namespace": "t", "labels": None, "annotations": None},
             "spec": {"containers": []}}
    result = rewriter.rewrite(nulls, namespaced=True)
    assert result["metadata"]["labels"] == {SIMULATION_LABEL: "sim"}
    broken = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "c", "namespace": "t", "labels": ["not", "a", "map"]}}
    with pytest.raises(FieldTypeError, match=r"v1\.ConfigMap t/c: metadata\.labels is a "
                       "list, not a map"):
        rewriter.rewrite(broken, namespaced=True)


@pytest.mark.parametrize("suspend", [None, False, True])
def test_cronjobs_are_applied_suspended_for_the_driver_to_fire(suspend: bool | None) -> None:
    spec: dict[str, Any] = {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {
        "spec": {"containers": [{"name": "c"}]}}}}}
    if suspend is not None:
        spec["suspend"] = suspend
    cronjob = {"apiVersion": "batch/v1", "kind": "CronJob",
               "metadata": {"name": "hello", "namespace": "default"}, "spec": spec}
    result = _rewriter().rewrite(cronjob, namespaced=True)
    assert result["spec"]["suspend"] is True
    assert result["spec"]["schedule"] == "* * * * *"
    assert cronjob["spec"].get("suspend") is suspend  # the firer reads the recorded value


def test_templates_of_workloads_with_usage_name_their_workload() -> None:
    key = "apps/v1.Deployment shop/web"
    rewriter = _rewriter(usage_workloads=frozenset({key}))
    result = rewriter.rewrite(_deployment(), namespaced=True)
    annotations = result["spec"]["template"]["metadata"]["annotations"]
    assert annotations[USAGE_WORKLOAD] == key
    assert USAGE_WORKLOAD not in (result["metadata"].get("annotations") or {})
    plain = _rewriter().rewrite(_deployment(), namespaced=True)
    assert USAGE_WORKLOAD not in (plain["spec"]["template"]["metadata"].get("annotations")
                                  or {})


def test_a_bare_pod_with_usage_is_marked_itself() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "solo",
                                                          "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "i"}]}}
    rewriter = _rewriter(usage_workloads=frozenset({"v1.Pod default/solo"}))
    result = rewriter.rewrite(pod, namespaced=True)
    assert result["metadata"]["annotations"][USAGE_WORKLOAD] == "v1.Pod default/solo"
