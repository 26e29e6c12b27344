from __future__ import annotations

from typing import Any

import pytest

from simkube.trace.model.pod_edits import (
    dedupe_ports,
    drop_invalid_ports,
    port_key,
    remove_reference,
    wrong_port_fields,
)
from simkube.trace.model.pod_specs import PodSpecSite
from simkube.trace.model.references import PodReference, RefKind, pod_references

pytestmark = pytest.mark.unit


def spec() -> dict[str, Any]:
    return {
        "serviceAccountName": "sa", "serviceAccount": "sa", "priorityClassName": "high",
        "priority": 100, "runtimeClassName": "rc", "overhead": {"cpu": "1"},
        "containers": [{"name": "c", "env": [
            {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}},
            {"name": "B", "value": "b"}],
            "envFrom": [{"configMapRef": {"name": "cm"}, "secretRef": {"name": "s"}}],
            "volumeMounts": [{"name": "v", "mountPath": "/v"}, {"name": "p", "mountPath": "/p"}]}],
        "volumes": [{"name": "v", "configMap": {"name": "cm"}},
                    {"name": "p", "projected": {"sources": [{"secret": {"name": "s"}},
                                                            {"configMap": {"name": "keep"}}]}}]}


def ref(pod_spec: dict[str, Any], kind: RefKind, path_part: str) -> PodReference:
    return next(r for r in pod_references(PodSpecSite("spec", pod_spec))
                if r.kind is kind and path_part in r.path)


def test_dropping_class_and_account_references_takes_derived_fields_along() -> None:
    edited = spec()
    for kind in (RefKind.SERVICE_ACCOUNT, RefKind.PRIORITY_CLASS, RefKind.RUNTIME_CLASS):
        remove_reference(edited, ref(edited, kind, "Name"), empty_dir=False)
    for field in ("serviceAccountName", "serviceAccount", "priorityClassName", "priority",
                  "runtimeClassName", "overhead"):
        assert field not in edited


def test_dropping_env_and_env_from_entries() -> None:
    edited = spec()
    remove_reference(edited, ref(edited, RefKind.CONFIG_MAP, ".env[0]"), empty_dir=False)
    assert edited["containers"][0]["env"] == [{"name": "B", "value": "b"}]
    remove_reference(edited, ref(edited, RefKind.SECRET, "envFrom"), empty_dir=False)
    assert edited["containers"][0]["envFrom"] == [{"configMapRef": {"name": "cm"}}]
    remove_reference(edited, ref(edited, RefKind.CONFIG_MAP, "envFrom"), empty_dir=False)
    assert edited["containers"][0]["envFrom"] == []


def test_dropping_a_volume_unmounts_it_and_empty_dir_keeps_the_name() -> None:
    dropped = spec()
    remove_reference(dropped, ref(dropped, RefKind.CONFIG_MAP, "volumes[0]"), empty_dir=False)
    assert [v["name"] for v in dropped["volumes"]] == ["p"]
    assert [m["name"] for m in dropped["containers"][0]["volumeMounts"]] == ["p"]
    replaced = spec()
    remove_reference(replaced, ref(replaced, RefKind.CONFIG_MAP, "volumes[0]"), empty_dir=True)
    assert replaced["volumes"][0] == {"name": "v", "emptyDir": {}}


def test_projected_sources_are_dropped_one_by_one_or_replaced_whole() -> None:
    dropped = spec()
    remove_reference(dropped, ref(dropped, RefKind.SECRET, "projected"), empty_dir=False)
    assert dropped["volumes"][1]["projected"]["sources"] == [{"configMap": {"name": "keep"}}]
    replaced = spec()
    remove_reference(replaced, ref(replaced, RefKind.SECRET, "projected"), empty_dir=True)
    assert replaced["volumes"][1] == {"name": "p", "emptyDir": {}}


def test_dedupe_ports_keeps_the_first_per_port_and_protocol() -> None:
    container = {"ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "TCP"},
                           {"containerPort": 80, "protocol": "UDP"}, "junk"]}
    dedupe_ports(container)
    assert container["ports"] == [{"containerPort": 80},
                                  {"containerPort": 80, "protocol": "UDP"}, "junk"]
    untouched: dict[str, Any] = {"name": "no-ports"}
    dedupe_ports(untouched)
    assert untouched == {"name": "no-ports"}


def test_malformed_ports_have_no_key_and_survive_dedupe() -> None:
    assert port_key({"containerPort": 80}) == (80, "TCP")
    assert port_key({"containerPort": 53, "protocol": "UDP"}) == (53, "UDP")
    assert port_key({"containerPort": [80]}) is None
    assert port_key({"containerPort": 80, "protocol": ["TCP"]}) is None
    assert port_key("junk") is None
    assert wrong_port_fields({"containerPort": {}, "protocol": 6}) == [
        ("containerPort", "an integer"), ("protocol", "a string")]
    container: dict[str, Any] = {"ports": [{"containerPort": [80]}, {"containerPort": [80]},
                                           {"containerPort": 80}, {"containerPort": 80}]}
    dedupe_ports(container)  # used to raise TypeError: unhashable type: 'list'
    assert container["ports"] == [{"containerPort": [80]}, {"containerPort": [80]},
                                  {"containerPort": 80}]


def test_drop_invalid_ports_keeps_the_well_formed_entries() -> None:
    container: dict[str, Any] = {"ports": [{"containerPort": [80]}, "junk", {"containerPort": 80},
                                           {"containerPort": 81, "protocol": {"x": 1}}]}
    drop_invalid_ports(container)
    assert container["ports"] == [{"containerPort": 80}]
    not_a_list: dict[str, Any] = {"name": "c", "ports": {"containerPort": 80}}
    drop_invalid_ports(not_a_list)
    assert not_a_list == {"name": "c"}
    untouched: dict[str, Any] = {"name": "no-ports"}
    drop_invalid_ports(untouched)
    assert untouched == {"name": "no-ports"}
