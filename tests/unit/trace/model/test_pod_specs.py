from __future__ import annotations

from typing import Any

import pytest

from simkube.trace import TraceHeader, TrackedKind
from simkube.trace.model.fields import At, FieldTypeError
from simkube.trace.model.pod_specs import (
    containers,
    dotted,
    pod_specs,
    pod_templates,
    resolve_pointer,
    template_paths,
)
from tests.unit.trace.conftest import deployment, pod

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("pointer", "expected"), [
    ("", {"a": {"b/c": [10, {"~d": 4}]}}),
    ("/a/b~1c/1/~0d", 4),
    ("/a/b~1c/0", 10),
    ("/a/missing", None),
    ("/a/b~1c/7", None),
    ("a", None),
])
def test_json_pointers(pointer: str, expected: Any) -> None:
    assert resolve_pointer({"a": {"b/c": [10, {"~d": 4}]}}, pointer) == expected


def test_dotted_paths_for_messages() -> None:
    assert dotted("/spec/jobTemplate/spec/template") == "spec.jobTemplate.spec.template"
    assert dotted("") == ""


def test_tracked_paths_win_then_defaults_then_nothing() -> None:
    header = TraceHeader(tracked_kinds=(
        TrackedKind(kind_key="apps/v1.Deployment", pod_template_paths=("/spec/other",)),
        TrackedKind(kind_key="batch/v1.CronJob")))
    assert template_paths(header, "apps/v1.Deployment") == ("/spec/other",)
    assert template_paths(header, "batch/v1.CronJob") == ("/spec/jobTemplate/spec/template",)
    assert template_paths(header, "example.com/v1.Widget") == ()


def test_pod_specs_of_a_deployment_and_a_pod() -> None:
    (site,) = pod_specs(deployment(), ("/spec/template",))
    assert site.path == "spec.template.spec"
    assert site.spec["containers"][0]["name"] == "c"
    (bare,) = pod_specs(pod(), ("",))
    assert bare.path == "spec"
    assert list(pod_specs(deployment(), ("/spec/nowhere",))) == []


def test_containers_cover_init_containers_and_name_junk() -> None:
    spec: dict[str, Any] = {"initContainers": [{"name": "i"}], "containers": [{"name": "c"}]}
    assert [(key, index) for key, index, _ in containers(spec)] == [
        ("initContainers", 0), ("containers", 0)]
    spec["containers"].append("junk")
    with pytest.raises(FieldTypeError, match=r"web: spec.template.spec.containers\[1\] is a "
                       "string, not a map"):
        list(containers(spec, At("web", "spec.template.spec")))


def test_templates_and_specs_of_the_wrong_type_are_named() -> None:
    cron: dict[str, Any] = {"apiVersion": "batch/v1", "kind": "CronJob",
                            "metadata": {"name": "c", "namespace": "n"},
                            "spec": {"jobTemplate": {"spec": {"template": {"spec": {}}}}},
                            "status": "x"}
    paths = ("/spec/jobTemplate/spec/template",)
    assert [(at.path, template) for at, template in pod_templates(cron, paths)] == [
        ("spec.jobTemplate.spec.template", {"spec": {}})]
    assert list(pod_templates(cron, ("/missing", "/spec/absent/deeper"))) == []
    with pytest.raises(FieldTypeError) as caught:
        list(pod_templates(cron, ("/status",)))
    assert (caught.value.owner, caught.value.path) == ("batch/v1.CronJob n/c", "status")
    cron["spec"]["jobTemplate"]["spec"]["template"]["spec"] = ["x"]
    with pytest.raises(FieldTypeError, match=r"spec\.jobTemplate\.spec\.template\.spec is a list"):
        list(pod_specs(cron, paths))
    cron["spec"]["jobTemplate"] = "every minute"
    with pytest.raises(FieldTypeError, match=r"spec\.jobTemplate is a string, not a map"):
        list(pod_specs(cron, paths))
