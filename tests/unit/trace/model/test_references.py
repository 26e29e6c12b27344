from __future__ import annotations

import pytest

from simkube.trace.model.pod_specs import PodSpecSite
from simkube.trace.model.references import RefKind, RefSite, pod_references

pytestmark = pytest.mark.unit


def refs(spec: dict[str, object]) -> list[tuple[RefKind, str, RefSite, str]]:
    return [(ref.kind, ref.name, ref.site, ref.path)
            for ref in pod_references(PodSpecSite("spec", spec))]


def test_env_and_env_from_references() -> None:
    spec = {"containers": [{"name": "c", "env": [
        {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}},
        {"name": "B", "value": "plain"},
        {"name": "C", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
        {"name": "D", "valueFrom": {"secretKeyRef": {"name": "opt", "optional": True}}}],
        "envFrom": [{"configMapRef": {"name": "cm2"}, "secretRef": {"name": "s2"}}]}]}
    assert refs(spec) == [
        (RefKind.CONFIG_MAP, "cm", RefSite.ENV,
         "spec.containers[0].env[0].valueFrom.configMapKeyRef.name"),
        (RefKind.SECRET, "s", RefSite.ENV, "spec.containers[0].env[2].valueFrom.secretKeyRef.name"),
        (RefKind.CONFIG_MAP, "cm2", RefSite.ENV_FROM,
         "spec.containers[0].envFrom[0].configMapRef.name"),
        (RefKind.SECRET, "s2", RefSite.ENV_FROM, "spec.containers[0].envFrom[0].secretRef.name"),
    ]


def test_volume_and_projected_references() -> None:
    spec = {"volumes": [
        {"name": "a", "configMap": {"name": "cm"}},
        {"name": "b", "secret": {"secretName": "s"}},
        {"name": "c", "persistentVolumeClaim": {"claimName": "data"}},
        {"name": "d", "projected": {"sources": [{"configMap": {"name": "pcm"}},
                                                {"secret": {"name": "ps"}},
                                                {"serviceAccountToken": {"path": "t"}}]}},
        {"name": "e", "emptyDir": {}}, "junk"]}
    assert [(kind, name, site) for kind, name, site, _ in refs(spec)] == [
        (RefKind.CONFIG_MAP, "cm", RefSite.VOLUME), (RefKind.SECRET, "s", RefSite.VOLUME),
        (RefKind.PVC, "data", RefSite.VOLUME), (RefKind.CONFIG_MAP, "pcm", RefSite.PROJECTED),
        (RefKind.SECRET, "ps", RefSite.PROJECTED)]


def test_class_and_account_fields_with_the_deprecated_alias_once() -> None:
    spec = {"serviceAccountName": "sa", "serviceAccount": "sa", "priorityClassName": "high",
            "runtimeClassName": "gvisor"}
    assert [(kind, name) for kind, name, _, _ in refs(spec)] == [
        (RefKind.SERVICE_ACCOUNT, "sa"), (RefKind.PRIORITY_CLASS, "high"),
        (RefKind.RUNTIME_CLASS, "gvisor")]
    assert RefKind.PRIORITY_CLASS.namespaced is False
    assert RefKind.CONFIG_MAP.api_version == "v1"
