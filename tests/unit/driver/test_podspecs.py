from __future__ import annotations

from typing import Any

import pytest

from simkube.driver.names import LIFECYCLE_OWNER, SIMULATION_LABEL, STARTUP_DELAY, STARTUP_DELAY_MAX
from simkube.driver.options import Placement, PodTiming
from simkube.driver.podspecs import place, rewrite_template, templates
from simkube.trace import TraceHeader, TrackedKind
from simkube.trace.pod_specs import template_paths

pytestmark = pytest.mark.unit


def test_templates_are_found_by_pointer() -> None:
    cron: dict[str, Any] = {"spec": {"jobTemplate": {"spec": {"template": {"spec": {}}}}},
                            "status": "x"}
    header = TraceHeader(tracked_kinds=(TrackedKind(kind_key="batch/v1.CronJob"),))
    paths = template_paths(header, "batch/v1.CronJob")
    assert list(templates(cron, paths)) == [{"spec": {}}]
    assert list(templates(cron, ("/status", "/missing"))) == []  # not maps, or absent


def test_placement_merges_selector_and_adds_missing_tolerations() -> None:
    toleration = {"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}
    spec: dict[str, Any] = {"nodeSelector": {"zone": "a"}, "tolerations": [dict(toleration)]}
    place(spec, Placement(node_selector={"type": "kwok"}, tolerations=(toleration,)))
    assert spec == {"nodeSelector": {"zone": "a", "type": "kwok"}, "tolerations": [toleration]}
    bare: dict[str, Any] = {}
    place(bare, Placement(node_selector={}, tolerations=()))
    assert bare == {}


def test_a_template_is_labelled_timed_and_placed() -> None:
    template: dict[str, Any] = {"spec": {"nodeName": "prod-7", "containers": [
        {"name": "c", "ports": [{"containerPort": 1}, {"containerPort": 1, "protocol": "TCP"},
                                {"containerPort": 1, "protocol": "UDP"}]}],
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
    assert spec["containers"][0]["ports"] == [{"containerPort": 1},
                                              {"containerPort": 1, "protocol": "UDP"}]


def test_no_timing_annotations_without_a_delay() -> None:
    template: dict[str, Any] = {"metadata": {"annotations": {"keep": "me"}}}
    rewrite_template(template, simulation="sim", placement=Placement(), timing=PodTiming(),
                     lifecycle_owner=None)
    assert template["metadata"]["annotations"] == {"keep": "me"}
