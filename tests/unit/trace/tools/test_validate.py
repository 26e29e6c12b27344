from __future__ import annotations

from pathlib import Path

import pytest

from simkube.trace import (
    ObjectRef,
    Trace,
    TraceEvent,
    TraceFormat,
    TraceHeader,
    TrackedKind,
    open_trace,
)
from simkube.trace.model.source import InMemorySource
from simkube.trace.tools.findings import Finding, FindingCode, FixChoice, exit_status
from simkube.trace.tools.validate import validate
from tests.unit.trace.conftest import HEADER, deployment, pod

pytestmark = pytest.mark.unit


def check(*events: TraceEvent, header: TraceHeader = HEADER,
          state: list[dict[str, object]] | None = None) -> list[Finding]:
    trace = Trace(header=header, initial_state=state or [], events=list(events))
    return validate(InMemorySource(trace, name="t", trace_format=TraceFormat.NATIVE,
                                   size_bytes=0))


def codes(findings: list[Finding]) -> list[str]:
    return [finding.code.value for finding in findings]


def test_validation_sample_reports_what_simkube_users_hit(samples: Path) -> None:
    findings = validate(open_trace(samples / "validation_trace.json"))
    missing = {(f.code.value, f.missing.name) for f in findings if f.missing}
    assert missing == {
        ("missing-configmap", "a-config-map"), ("missing-configmap", "another-config-map"),
        ("missing-configmap", "the-config-map"), ("missing-secret", "a-secret"),
        ("missing-secret", "another-secret"), ("missing-secret", "the-secret"),
        ("missing-service-account", "the-service-account")}
    assert "status-recorded" in codes(findings)
    assert exit_status(findings) == 2
    volume = next(f for f in findings if f.path.endswith("volumes[1].configMap.name"))
    assert FixChoice.EMPTY_DIR in volume.fix_choices
    env = next(f for f in findings if ".env[0]." in f.path)
    assert FixChoice.EMPTY_DIR not in env.fix_choices


def test_clean_samples(samples: Path) -> None:
    assert validate(open_trace(samples / "dsb-scaling.sktrace")) == []
    assert validate(open_trace(samples / "bare-pods.sktrace")) == []


def test_cronjob_sample_tracks_kinds_without_template_paths(samples: Path) -> None:
    findings = validate(open_trace(samples / "cronjob.sktrace"))
    assert {(f.code.value, f.object) for f in findings} == {
        ("pod-template-path", "apps/v1.Deployment"), ("pod-template-path", "apps/v1.StatefulSet"),
        ("pod-template-path", "batch/v1.CronJob")}
    assert exit_status(findings) == 1


def test_objects_created_anywhere_in_the_trace_satisfy_references() -> None:
    web = deployment(serviceAccountName="web", volumes=[{"name": "d", "configMap": {
        "name": "cfg"}}])
    sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "web",
                                                                      "namespace": "shop"}}
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg",
                                                                     "namespace": "shop"}}
    assert check(TraceEvent(ts_ms=1, applied=[web]), TraceEvent(ts_ms=2, applied=[config]),
                 state=[sa]) == []


def test_built_in_objects_are_never_missing() -> None:
    spec = {"serviceAccountName": "default", "priorityClassName": "system-node-critical",
            "volumes": [{"name": "ca", "configMap": {"name": "kube-root-ca.crt"}}]}
    assert check(TraceEvent(ts_ms=1, applied=[deployment(**spec)])) == []


def test_pvc_priority_and_runtime_classes() -> None:
    web = deployment(priorityClassName="high", priority=1000, runtimeClassName="gvisor",
                     overhead={"cpu": "250m"},
                     volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "db"}}])
    findings = check(TraceEvent(ts_ms=1, applied=[web]))
    by_code = {f.code: f for f in findings}
    assert set(by_code) == {FindingCode.MISSING_PVC, FindingCode.MISSING_PRIORITY_CLASS,
                            FindingCode.MISSING_RUNTIME_CLASS}
    assert exit_status(findings) == 2
    priority = by_code[FindingCode.MISSING_PRIORITY_CLASS]
    assert priority.missing == ObjectRef(api_version="scheduling.k8s.io/v1",
                                         kind="PriorityClass", namespace="", name="high")
    assert priority.proposed is not None
    assert priority.proposed["value"] == 1000  # what admission will compare against
    runtime = by_code[FindingCode.MISSING_RUNTIME_CLASS].proposed
    assert runtime is not None
    assert runtime["overhead"] == {"podFixed": {"cpu": "250m"}}
    assert by_code[FindingCode.MISSING_PVC].fix_choices[0] is FixChoice.EMPTY_DIR


def test_each_problem_is_reported_once_at_its_first_event() -> None:
    web = deployment(serviceAccountName="nope")
    findings = check(TraceEvent(ts_ms=1, applied=[web]), TraceEvent(ts_ms=2, applied=[web]))
    assert [(f.code.value, f.event) for f in findings] == [("missing-service-account", 0)]


def test_status_and_duplicate_ports() -> None:
    ports = [{"containerPort": 53, "protocol": "UDP"}, {"containerPort": 53},
             {"containerPort": 53, "protocol": "TCP", "name": "dns-tcp"}]
    web = deployment(containers=[{"name": "dns", "image": "x", "ports": ports}])
    web["status"] = {"replicas": 2}
    findings = check(TraceEvent(ts_ms=1, applied=[web, pod("p", status={})]))
    assert [(f.code.value, f.path) for f in findings] == [
        ("duplicate-container-port", "spec.template.spec.containers[0].ports[2]"),
        ("status-recorded", "status")]


def test_a_list_as_container_port_is_a_finding_not_a_crash() -> None:
    # A list cannot be a duplicate-check key: this used to raise "unhashable type: 'list'".
    web = deployment(containers=[{"name": "c", "image": "x", "ports": [
        {"containerPort": [80]}, {"containerPort": [80]}]}])
    findings = check(TraceEvent(ts_ms=1, applied=[web]))
    assert [(f.code.value, f.path, f.event) for f in findings] == [
        ("invalid-container-port", "spec.template.spec.containers[0].ports[0].containerPort", 0),
        ("invalid-container-port", "spec.template.spec.containers[0].ports[1].containerPort", 0)]
    assert findings[0].message == ("containerPort is a list, not an integer; the API server "
                                   "rejects the object")
    assert findings[0].fix_choices == (FixChoice.DROP_INVALID,)
    assert exit_status(findings) == 2


@pytest.mark.parametrize(("ports", "path", "problem"), [
    ([{"containerPort": 80, "protocol": {"TCP": 1}}], "ports[0].protocol",
     "protocol is a map, not a string"),
    ([{"containerPort": "80"}], "ports[0].containerPort", "containerPort is a string"),
    ([{"containerPort": True}], "ports[0].containerPort", "containerPort is a boolean"),
    ([{"containerPort": 80.0}], "ports[0].containerPort", "containerPort is a number"),
    ([80], "ports[0]", "the entry is an integer, not a map"),
    ({"containerPort": 80}, "ports", "ports is a map, not a list"),
])
def test_mistyped_ports_name_the_field(ports: object, path: str, problem: str) -> None:
    web = deployment(containers=[{"name": "c", "image": "x", "ports": ports}])
    findings = check(TraceEvent(ts_ms=1, applied=[web]))
    assert [(f.code, f.path) for f in findings] == [
        (FindingCode.INVALID_CONTAINER_PORT, f"spec.template.spec.containers[0].{path}")]
    assert findings[0].message.startswith(problem)


def test_malformed_ports_are_left_out_of_the_duplicate_check() -> None:
    ports = [{"containerPort": 80}, {"containerPort": [80]}, {"containerPort": 80},
             {"containerPort": 81, "protocol": None}, {"name": "no-number"}]
    findings = check(TraceEvent(ts_ms=1, applied=[pod(containers=[
        {"name": "c", "image": "x", "ports": ports}])]))
    assert [(f.code.value, f.path) for f in findings] == [
        ("duplicate-container-port", "spec.containers[0].ports[2]"),
        ("invalid-container-port", "spec.containers[0].ports[1].containerPort")]


def test_template_paths_that_resolve_nowhere() -> None:
    header = TraceHeader(tracked_kinds=(
        TrackedKind(kind_key="apps/v1.Deployment", pod_template_paths=("/spec/tmpl",)),
        TrackedKind(kind_key="example.com/v1.Widget", pod_template_paths=("/spec/x",)),
        TrackedKind(kind_key="v1.ConfigMap")))
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    findings = check(TraceEvent(ts_ms=1, applied=[deployment(), widget]), header=header)
    assert [(f.object, f.fix_choices) for f in findings] == [
        ("apps/v1.Deployment", (FixChoice.DEFAULT_PATH,)), ("example.com/v1.Widget", ())]


def test_timestamps_going_backwards() -> None:
    findings = check(TraceEvent(ts_ms=5), TraceEvent(ts_ms=3), TraceEvent(ts_ms=4),
                     TraceEvent(ts_ms=6))
    assert [(f.code.value, f.path) for f in findings] == [
        ("timestamps-backwards", "events[1].ts"), ("timestamps-backwards", "events[2].ts")]


def test_namespaces_must_exist_when_the_trace_tracks_them() -> None:
    header = TraceHeader(tracked_kinds=(TrackedKind(kind_key="v1.Namespace"),))
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}
    findings = check(TraceEvent(ts_ms=1, applied=[namespace, pod("a", "shop"),
                                                  pod("b", "ghost"), pod("c", "default")]),
                     header=header)
    assert [(f.code.value, f.object, f.missing) for f in findings] == [
        ("namespace-missing", "v1.Pod ghost/b",
         ObjectRef(api_version="v1", kind="Namespace", namespace="", name="ghost"))]
    assert check(TraceEvent(ts_ms=1, applied=[pod("b", "ghost")])) == []
