from __future__ import annotations

import pytest

from simkube.tracer.config import SecretPolicy
from simkube.tracer.sanitising import sanitise
from tests.unit.tracer.conftest import obj

pytestmark = pytest.mark.unit


def test_server_and_controller_fields_are_dropped() -> None:
    live = obj("apps/v1.Deployment", "web", metadata={
        "uid": "u", "resourceVersion": "9", "generation": 3, "creationTimestamp": "t",
        "managedFields": [{}], "finalizers": ["foregroundDeletion"], "labels": {"app": "web"},
        "annotations": {"deployment.kubernetes.io/revision": "2",
                        "kubectl.kubernetes.io/last-applied-configuration": "{}",
                        "team": "payments"}},
        spec={"replicas": 3}, status={"readyReplicas": 3})
    clean = sanitise(live, secrets=SecretPolicy.REDACT)
    assert clean == {"apiVersion": "apps/v1", "kind": "Deployment",
                     "metadata": {"name": "web", "namespace": "ns", "labels": {"app": "web"},
                                  "annotations": {"team": "payments"}},
                     "spec": {"replicas": 3}}
    assert live["status"] == {"readyReplicas": 3}  # the input is left alone
    assert "uid" in live["metadata"]


def test_status_only_and_controller_annotation_changes_sanitise_equal() -> None:
    before = obj("apps/v1.Deployment", "web", spec={"replicas": 3})
    after = obj("apps/v1.Deployment", "web", spec={"replicas": 3}, status={"replicas": 3},
                metadata={"annotations": {"deployment.kubernetes.io/revision": "1"},
                          "resourceVersion": "10", "generation": 2})
    assert sanitise(before, secrets=SecretPolicy.REDACT) == sanitise(
        after, secrets=SecretPolicy.REDACT)


def test_secret_values_are_redacted_or_the_secret_skipped() -> None:
    secret = obj("v1.Secret", "db", data={"password": "aHVudGVyMg=="},
                 stringData={"token": "hunter2"}, type="Opaque")
    redacted = sanitise(secret, secrets=SecretPolicy.REDACT)
    assert redacted is not None
    assert redacted["data"] == {"password": ""}
    assert redacted["stringData"] == {"token": ""}
    assert redacted["type"] == "Opaque"
    assert sanitise(secret, secrets=SecretPolicy.SKIP) is None
    assert secret["data"] == {"password": "aHVudGVyMg=="}
    weird = obj("v1.Secret", "odd", data="not-a-map")
    assert sanitise(weird, secrets=SecretPolicy.REDACT)["data"] == {}  # type: ignore[index]


def test_pod_binding_is_not_intent() -> None:
    pending = obj("v1.Pod", "p", metadata={"labels": {"app": "x"}}, spec={"containers": []})
    bound = obj("v1.Pod", "p", metadata={"labels": {"app": "x",
                                                    "topology.kubernetes.io/zone": "a"}},
                spec={"containers": [], "nodeName": "node-1"})
    assert sanitise(pending, secrets=SecretPolicy.REDACT) == sanitise(
        bound, secrets=SecretPolicy.REDACT)
    only_zone = obj("v1.Pod", "q", metadata={"labels": {"topology.kubernetes.io/region": "r"}})
    assert "labels" not in sanitise(only_zone, secrets=SecretPolicy.REDACT)["metadata"]  # type: ignore[index]
