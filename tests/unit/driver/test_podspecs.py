from __future__ import annotations

from typing import Any

import pytest

from simkube.driver.names import LIFECYCLE_OWNER, SIMULATION_LABEL, STARTUP_DELAY, STARTUP_DELAY_MAX
from simkube.driver.options import Placement, PodTiming
from simkube.driver.podspecs import (
    dedupe_ports,
    place,
    resolve_pointer,
    rewrite_template,
    template_paths,
)
from simkube.trace import TraceHeader, TrackedKind

pytestmark = pytest.mark.unit


def test_template_paths_come_from_the_trace_or_the_builtin_kinds() -> None:
    header = TraceHeader(tracked_kinds=(
        TrackedKind(kind_key="example.com/v1.Runner", pod_template_paths=("/spec/pod",)),
        TrackedKind(kind_key="batch/v1.CronJob")))
    assert template_paths(header, "example.com/v1.Runner") == ("/spec/pod",)
    assert template_paths(header, "batch/v1.CronJob") == ("/spec/jobTemplate/spec/template",)
    assert template_paths(header, "v1.Pod") == ("",)
    assert template_paths(header, "v1.ConfigMap") == ()


def test_json_pointers() -> None:
    obj: dict[str, Any] = {"spec": {"a/b": {"x": 1}, "list": [{"y": 2}], "text": "t"}}
    assert resolve_pointer(obj, "") is obj
    assert resolve_pointer(obj, "/spec/a~1b") == {"x": 1}
    assert resolve_pointer(obj, "/spec/list/0") == {"y": 2}
    assert resolve_pointer(obj, "/spec/list/5") is None
    assert resolve_pointer(obj, "/spec/text") is None
    assert resolve_pointer(obj, "/missing/deeper") is None


def test_placement_merges_selector_and_adds_missing_tolerations() -> None:
    toleration = {"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}
    spec: dict[str, Any] = {"nodeSelector": {"zone": "a"}, "tolerations": [dict(toleration)]}
    place(spec, Placement(node_selector={"type": "kwok"}, tolerations=(toleration,)))
    assert spec == {"nodeSelector": {"zone": "a", "type": "kwok"}, "tolerations": [toleration]}
    bare: dict[str, Any] = {}
    place(bare, Placement(node_selector={}, tolerations=()))
    assert bare == {}


def test_duplicate_ports_are_dropped() -> None:
    container = {"ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "TCP"},
                           {"containerPort": 80, "protocol": "UDP"}, {"containerPort": 81}]}
    dedupe_ports(container)
    assert container["ports"] == [{"containerPort": 80}, {"containerPort": 80, "protocol": "UDP"},
                                  {"containerPort": 81}]


def test_a_template_is_labelled_timed_and_placed() -> None:
    template: dict[str, Any] = {"spec": {"nodeName": "prod-7", "containers": [
        {"name": "c", "ports": [{"containerPort": 1}, {"containerPort": 1}]}],
        "initContainers": [{"name": "i"}]}}
    rewrite_template(template, simulation="sim", placement=Placement(),
                     timing=PodTiming(startup_delay_ms=1000, startup_jitter_ms=500),
                     lifecycle_owner=(LIFECYCLE_OWNER, "v1.Pod ns/p"))
    assert template["metadata"]["labels"] == {SIMULATION_LABEL: "sim"}
    assert template["metadata"]["annotations"] == {
        LIFECYCLE_OWNER: "v1.Pod ns/p", STARTUP_DELAY: "1000ms", STARTUP_DELAY_MAX: "1500ms"}
    spec = template["spec"]
    assert "nodeName" not in spec
    assert spec["nodeSelector"] == {"type": "kwok"}
    assert spec["containers"][0]["ports"] == [{"containerPort": 1}]


def test_no_timing_annotations_without_a_delay() -> None:
    template: dict[str, Any] = {"metadata": {"annotations": {"keep": "me"}}}
    rewrite_template(template, simulation="sim", placement=Placement(), timing=PodTiming(),
                     lifecycle_owner=None)
    assert template["metadata"]["annotations"] == {"keep": "me"}
