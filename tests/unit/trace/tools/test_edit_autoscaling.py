from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simkube.core.errors import ConfigError
from simkube.trace import Trace, TraceEvent, TraceFormat, read_trace, write_trace
from simkube.trace.model.selectors import Match, parse_selector
from simkube.trace.model.source import InMemorySource, load
from simkube.trace.model.usage import WorkloadUsage
from simkube.trace.tools.edit import apply_edits
from simkube.trace.tools.edit_steps import (
    DropUsage,
    EditStep,
    HpaChange,
    ScaleLoad,
    Select,
    TimeStretch,
)
from simkube.trace.tools.stream import write_stream
from tests.unit.trace.conftest import HEADER, deployment, pod, web_usage

pytestmark = pytest.mark.unit


def hpa(name: str = "web", namespace: str = "shop", *, cpu: int | None = 50,
        api_version: str = "autoscaling/v2", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                               "name": name},
                            "minReplicas": 1, "maxReplicas": 10, **spec}
    if cpu is not None and api_version == "autoscaling/v2":
        body["metrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": cpu}}}]
    return {"apiVersion": api_version, "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "namespace": namespace}, "spec": body}


def trace(*objects: dict[str, Any]) -> Trace:
    with_usage = Trace(header=HEADER, initial_state=[deployment("web")], events=[
        TraceEvent(ts_ms=1000, applied=[hpa(), *objects]),
        TraceEvent(ts_ms=61_000, applied=[hpa(cpu=60), deployment("api", labels={"t": "b"})])])
    with_usage.usage = (web_usage(), WorkloadUsage(
        kind="apps/v1.Deployment", namespace="shop", name="api", period_ms=15_000,
        samples=web_usage().samples[:1]))
    return with_usage


def edit(steps: list[EditStep], *objects: dict[str, Any]) -> Trace:
    stream = apply_edits(InMemorySource(trace(*objects), name="t",
                                        trace_format=TraceFormat.NATIVE, size_bytes=0), steps)
    edited = Trace(header=stream.header, initial_state=list(stream.initial_state),
                   events=list(stream.events), lifecycles=stream.lifecycles())
    edited.usage = stream.usage()
    return edited


def hpas(edited: Trace) -> list[dict[str, Any]]:
    return [obj["spec"] for obj in edited.objects() if obj["kind"] == "HorizontalPodAutoscaler"]


def test_every_recorded_version_of_the_hpa_gets_the_new_target_and_bounds() -> None:
    edited = edit([HpaChange(namespace="shop", name="web", cpu_utilization=80, min_replicas=2,
                             max_replicas=20)])
    for spec in hpas(edited):
        assert spec["metrics"][0]["resource"]["target"]["averageUtilization"] == 80
        assert (spec["minReplicas"], spec["maxReplicas"]) == (2, 20)


def test_autoscaling_v1_hpas_have_one_cpu_field() -> None:
    edited = edit([HpaChange(namespace="shop", name="v1", cpu_utilization=70)],
                  hpa("v1", api_version="autoscaling/v1"))
    (spec,) = [s for s in hpas(edited) if s["scaleTargetRef"]["name"] == "v1"]
    assert spec["targetCPUUtilizationPercentage"] == 70


@pytest.mark.parametrize(("step", "objects", "problem"), [
    (HpaChange(namespace="shop", name="nope", max_replicas=3), [], "the trace has no "
     "HorizontalPodAutoscaler shop/nope"),
    (HpaChange(namespace="shop", name="p", max_replicas=3), [pod("p")],
     "shop/p is a v1.Pod, not a HorizontalPodAutoscaler"),
    (HpaChange(namespace="shop", name="mem", cpu_utilization=80), [hpa("mem", cpu=None)],
     "HorizontalPodAutoscaler shop/mem has no CPU utilization metric"),
    (HpaChange(namespace="shop", name="web", max_replicas=0 + 1, min_replicas=None),
     [hpa("web", minReplicas=5)], "minReplicas 5 would exceed maxReplicas 1"),
])
def test_hpa_steps_that_cannot_do_what_they_say_are_errors(
        step: HpaChange, objects: list[dict[str, Any]], problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        edit([step], *objects)


def test_scaling_load_multiplies_matching_usage_only() -> None:
    edited = edit([ScaleLoad(factor=2, match=Match(namespaces=frozenset({"shop"})))])
    assert [s.cpu_millicores for s in edited.usage[0].samples] == [600, 1800, 4800, 400]
    assert [s.pods for s in edited.usage[0].samples] == [2, 3, 5, 2]
    by_label = edit([ScaleLoad(factor=0.5, match=Match(selector=parse_selector("t=b")))])
    assert by_label.usage[0] == web_usage()
    assert by_label.usage[1].samples[0].cpu_millicores == 150


def test_dropping_usage_and_selecting_objects_drop_their_series() -> None:
    assert edit([DropUsage()]).usage == ()
    kept = edit([Select(keep=False, match=Match(kinds=frozenset({"Deployment"})))])
    assert kept.usage == ()
    api_only = edit([DropUsage(match=Match(selector=parse_selector("t=b")))])
    assert api_only.usage == (web_usage(),)


def test_edited_usage_is_written_and_read_back(tmp_path: Path) -> None:
    write_trace(trace(), tmp_path / "in.trace")
    source = InMemorySource(read_trace(tmp_path / "in.trace"), name="in",
                            trace_format=TraceFormat.NATIVE, size_bytes=0)
    write_stream(apply_edits(source, [ScaleLoad(factor=3), TimeStretch(factor=2)]),
                 tmp_path / "out.trace")
    out = load(InMemorySource(read_trace(tmp_path / "out.trace"), name="out",
                              trace_format=TraceFormat.NATIVE, size_bytes=0))
    assert out.usage[0].period_ms == 30_000
    assert [(s.t_ms, s.cpu_millicores) for s in out.usage[0].samples[:2]] == [(0, 900),
                                                                               (30_000, 2700)]
