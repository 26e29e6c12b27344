from __future__ import annotations

from typing import Any

import pytest

from simkube.core.replay_flags import GATED_DELAY, SCALE_UP_DELAY_ANNOTATION
from simkube.driver.names import LIFECYCLE_OWNER, SIMULATION_LABEL, STARTUP_DELAY, STARTUP_DELAY_MAX
from simkube.driver.options import Placement, PodTiming
from simkube.driver.podspecs import place, rewrite_template
from simkube.trace.model.fields import At, FieldTypeError

pytestmark = pytest.mark.unit
AT = At("v1.Pod ns/p")


def test_placement_merges_selector_and_adds_missing_tolerations() -> None:
    toleration = {"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}
    spec: dict[str, Any] = {"nodeSelector": {"zone": "a"}, "tolerations": [dict(toleration)]}
    place(spec, Placement(node_selector={"type": "kwok"}, tolerations=(toleration,)), at=AT)
    assert spec == {"nodeSelector": {"zone": "a", "type": "kwok"}, "tolerations": [toleration]}
    bare: dict[str, Any] = {}
    place(bare, Placement(node_selector={}, tolerations=()), at=AT)
    assert bare == {}


def test_a_template_is_labelled_timed_and_placed() -> None:
    template: dict[str, Any] = {"spec": {"nodeName": "prod-7", "containers": [
        {"name": "c", "ports": [{"containerPort": 1}, {"containerPort": 1, "protocol": "TCP"},
                                {"containerPort": 1, "protocol": "UDP"}]}],
        "initContainers": [{"name": "i"}]}}
    rewrite_template(template, at=AT, simulation="sim", placement=Placement(),
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


def test_a_gated_run_hides_its_pods_from_ca_scale_up() -> None:
    template: dict[str, Any] = {}
    rewrite_template(template, at=AT, simulation="sim", placement=Placement(),
                     timing=PodTiming(scale_up_gated=True), lifecycle_owner=None)
    assert template["metadata"]["annotations"] == {SCALE_UP_DELAY_ANNOTATION: GATED_DELAY}


def test_no_timing_annotations_without_a_delay() -> None:
    template: dict[str, Any] = {"metadata": {"annotations": {"keep": "me"}}}
    rewrite_template(template, at=AT, simulation="sim", placement=Placement(), timing=PodTiming(),
                     lifecycle_owner=None)
    assert template["metadata"]["annotations"] == {"keep": "me"}


@pytest.mark.parametrize(("template", "path"), [
    ({"metadata": []}, "metadata"),
    ({"metadata": {"labels": "app=web"}}, "metadata.labels"),
    ({"spec": {"tolerations": {"key": "k"}}}, "spec.tolerations"),
    ({"spec": {"containers": [80]}}, "spec.containers[0]"),
])
def test_a_field_of_the_wrong_type_is_named(template: dict[str, Any], path: str) -> None:
    with pytest.raises(FieldTypeError) as caught:
        rewrite_template(template, at=AT, simulation="sim", placement=Placement(),
                         timing=PodTiming(), lifecycle_owner=None)
    assert caught.value.path == path
    assert caught.value.owner == "v1.Pod ns/p"
