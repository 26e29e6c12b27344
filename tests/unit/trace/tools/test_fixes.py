from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simkube.core.errors import ConfigError
from simkube.trace import Trace, TraceEvent, TraceFormat, TraceHeader, TrackedKind, open_trace
from simkube.trace.model.source import InMemorySource, TraceSource, load
from simkube.trace.tools.findings import FindingCode, FixChoice
from simkube.trace.tools.fixes import apply_fixes, choose_fixes
from simkube.trace.tools.stream import TraceStream, write_stream
from simkube.trace.tools.validate import validate
from tests.unit.trace.conftest import HEADER, deployment, pod

pytestmark = pytest.mark.unit


def source(*events: TraceEvent, header: TraceHeader = HEADER) -> TraceSource:
    return InMemorySource(Trace(header=header, events=list(events)), name="t",
                          trace_format=TraceFormat.NATIVE, size_bytes=0)


def fixed(src: TraceSource, **requested: str) -> tuple[TraceStream, list[Any], list[Any]]:
    findings = validate(src)
    choices = choose_fixes(findings, auto=not requested, requested={
        FindingCode(code.replace("_", "-")): FixChoice(choice)
        for code, choice in requested.items()})
    stream = apply_fixes(src, findings, choices)
    state = list(stream.initial_state)
    events = list(stream.events)
    return stream, state, events


def test_auto_fixes_the_validation_sample(samples: Path, tmp_path: Path) -> None:
    src = open_trace(samples / "validation_trace.json")
    findings = validate(src)
    stream = apply_fixes(src, findings, choose_fixes(findings, requested={}, auto=True))
    write_stream(stream, tmp_path / "fixed.json")
    assert validate(open_trace(tmp_path / "fixed.json")) == []
    fixed_trace = load(open_trace(tmp_path / "fixed.json"))
    added = {(o["kind"], o["metadata"]["name"]) for o in fixed_trace.events[0].applied}
    assert ("ServiceAccount", "the-service-account") in added
    assert {kind.kind_key for kind in fixed_trace.header.tracked_kinds} >= {
        "v1.ConfigMap", "v1.Secret", "v1.ServiceAccount"}
    assert "status" not in fixed_trace.events[1].applied[0]


def test_drop_reference_removes_it_from_every_version() -> None:
    web = deployment(serviceAccountName="gone")
    src = source(TraceEvent(ts_ms=1, applied=[web]), TraceEvent(ts_ms=2, applied=[web]))
    _, state, events = fixed(src, missing_service_account="drop-reference")
    assert state == []
    for event in events:
        assert "serviceAccountName" not in event.applied[0]["spec"]["template"]["spec"]


def test_missing_claim_becomes_scratch_space_by_default() -> None:
    web = deployment(volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "db"}}])
    _, _, events = fixed(source(TraceEvent(ts_ms=1, applied=[web])))
    assert events[0].applied[0]["spec"]["template"]["spec"]["volumes"] == [
        {"name": "data", "emptyDir": {}}]


def test_added_priority_class_carries_the_recorded_priority() -> None:
    web = deployment(priorityClassName="high", priority=1000)
    stream, state, _ = fixed(source(TraceEvent(ts_ms=1, applied=[web])))
    assert state == [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                      "metadata": {"name": "high"}, "value": 1000}]
    assert stream.header.tracked("scheduling.k8s.io/v1.PriorityClass") is not None


def test_ports_status_template_paths_and_order() -> None:
    header = TraceHeader(tracked_kinds=(TrackedKind(kind_key="apps/v1.Deployment"),))
    web = deployment(containers=[{"name": "c", "image": "x", "ports": [
        {"containerPort": 80}, {"containerPort": 80, "name": "again"}]}])
    web["status"] = {"replicas": 1}
    stream, _, events = fixed(source(TraceEvent(ts_ms=9, applied=[web]),
                                     TraceEvent(ts_ms=3, applied=[pod()]), header=header))
    assert [event.ts_ms for event in events] == [3, 9]
    assert stream.header.tracked_kinds[0].pod_template_paths == ("/spec/template",)
    fixed_web = events[1].applied[0]
    assert "status" not in fixed_web
    assert fixed_web["spec"]["template"]["spec"]["containers"][0]["ports"] == [
        {"containerPort": 80}]


def test_malformed_ports_are_dropped_in_every_version() -> None:
    web = deployment(containers=[{"name": "c", "image": "x", "ports": [
        {"containerPort": [80]}, {"containerPort": 8080}, {"containerPort": [80]}]}])
    src = source(TraceEvent(ts_ms=1, applied=[web]), TraceEvent(ts_ms=2, applied=[web]))
    _, _, events = fixed(src)
    for event in events:
        assert event.applied[0]["spec"]["template"]["spec"]["containers"][0]["ports"] == [
            {"containerPort": 8080}]


def test_missing_namespaces_are_added_first_or_their_objects_dropped() -> None:
    header = TraceHeader(tracked_kinds=(TrackedKind(kind_key="v1.Namespace"),))
    sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "x",
                                                                      "namespace": "ghost"}}
    events = (TraceEvent(ts_ms=1, applied=[pod("a", "ghost", serviceAccountName="missing")]),
              TraceEvent(ts_ms=2, applied=[sa], deleted=[pod("a", "ghost")]))
    _, state, _ = fixed(source(*events, header=header))
    assert [obj["kind"] for obj in state] == ["Namespace", "ServiceAccount"]
    stream, _, dropped = fixed(source(*events, header=header),
                               namespace_missing="drop-objects")
    assert all(not event.applied and not event.deleted for event in dropped)
    assert stream.lifecycles() == []


def test_a_fix_must_fit_its_code_and_every_finding() -> None:
    web = deployment(env=[], containers=[{"name": "c", "image": "x", "env": [
        {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}}]}])
    findings = validate(source(TraceEvent(ts_ms=1, applied=[web])))
    with pytest.raises(ConfigError, match="cannot be fixed with sort"):
        choose_fixes(findings, requested={FindingCode.MISSING_CONFIGMAP: FixChoice.SORT},
                     auto=False)
    with pytest.raises(ConfigError, match="empty-dir does not apply to every"):
        choose_fixes(findings, requested={FindingCode.MISSING_CONFIGMAP: FixChoice.EMPTY_DIR},
                     auto=False)
    assert choose_fixes(findings, requested={}, auto=False) == {}
