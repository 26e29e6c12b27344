from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simkube.trace import PodLifecycle, PodRun, Trace, TraceEvent, TraceFormat, open_trace
from simkube.trace.model.selectors import Match, parse_selector
from simkube.trace.model.source import InMemorySource, load
from simkube.trace.tools.edit import apply_edits
from simkube.trace.tools.edit_steps import (
    EditStep,
    NodeSelector,
    ScaleReplicas,
    ScaleResources,
    Select,
    Tolerations,
    toleration,
)
from simkube.trace.tools.stream import TraceStream, write_stream
from tests.unit.trace.conftest import HEADER, deployment, pod

pytestmark = pytest.mark.unit


def trace() -> Trace:
    return Trace(header=HEADER, initial_state=[deployment("base", "shop")], events=[
        TraceEvent(ts_ms=1000, applied=[deployment("web", "shop", replicas=3),
                                        deployment("api", "dsb", replicas=2,
                                                   labels={"tier": "backend"})]),
        TraceEvent(ts_ms=2000, applied=[pod("p", "shop")]),
        TraceEvent(ts_ms=3000, deleted=[pod("p", "shop")]),
        TraceEvent(ts_ms=4000)],
        lifecycles=[PodLifecycle(owner_kind="v1.Pod", owner="shop/p",
                                 runs=(PodRun(start_ms=2000, end_ms=3000),)),
                    PodLifecycle(owner_kind="v1.Pod", owner="dsb/never-seen",
                                 runs=(PodRun(start_ms=2500),))])


def edited(*steps: EditStep) -> tuple[list[dict[str, Any]], list[TraceEvent], TraceStream]:
    stream = apply_edits(InMemorySource(trace(), name="t", trace_format=TraceFormat.NATIVE,
                                        size_bytes=0), list(steps))
    return list(stream.initial_state), list(stream.events), stream


def names(objects: list[dict[str, Any]]) -> list[str]:
    return [obj["metadata"]["name"] for obj in objects]


def test_keep_namespace_drops_other_objects_events_and_lifecycles() -> None:
    state, events, stream = edited(Select(keep=True, match=Match(
        namespaces=frozenset({"dsb"}))))
    assert state == []
    assert [(event.ts_ms, names(event.applied)) for event in events] == [
        (1000, ["api"]), (4000, [])]  # emptied events go, events that were empty stay
    assert [lc.owner for lc in stream.lifecycles()] == ["dsb/never-seen"]


def test_drop_by_kind_and_selector() -> None:
    _, events, stream = edited(Select(keep=False, match=Match(kinds=frozenset({"Pod"}))),
                               Select(keep=False, match=Match(
                                   selector=parse_selector("tier=backend"))))
    assert [names(event.applied) for event in events] == [["web"], []]
    assert stream.lifecycles() == []


def test_every_deployment_at_ten_times_its_replicas() -> None:
    state, events, _ = edited(ScaleReplicas(factor=10, match=Match(
        kinds=frozenset({"Deployment"}))))
    assert state[0]["spec"]["replicas"] == 20
    assert [obj["spec"]["replicas"] for obj in events[0].applied] == [30, 20]
    assert "replicas" not in events[1].applied[0]["spec"]  # pods have none: untouched


def test_set_replicas_by_selector() -> None:
    _, events, _ = edited(ScaleReplicas(value=0, match=Match(
        selector=parse_selector("tier=backend"))))
    assert [obj["spec"]["replicas"] for obj in events[0].applied] == [3, 0]


def test_scale_resources_in_requests_only() -> None:
    _, events, _ = edited(ScaleResources(cpu=2, memory=0.5, limits=False))
    resources = events[0].applied[0]["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert resources == {"requests": {"cpu": "500m", "memory": "256Mi"},
                         "limits": {"cpu": "1", "memory": "1Gi"}}


def test_node_selectors_and_tolerations_on_pod_templates_and_pods() -> None:
    _, events, _ = edited(
        NodeSelector(add=(("pool", "big"),), remove=frozenset({"zone"})),
        Tolerations(add=(toleration("spot:NoSchedule", what="t"),)),
        Tolerations(remove=frozenset({"spot"}), match=Match(kinds=frozenset({"Pod"}))))
    template = events[0].applied[0]["spec"]["template"]["spec"]
    assert template["nodeSelector"] == {"pool": "big"}
    assert template["tolerations"] == [{"effect": "NoSchedule", "key": "spot",
                                        "operator": "Exists"}]
    bare = events[1].applied[0]["spec"]
    assert bare["nodeSelector"] == {"pool": "big"}
    assert "tolerations" not in bare


def test_removing_the_last_selector_key_removes_the_field() -> None:
    _, events, _ = edited(NodeSelector(add=(("zone", "a"),)),
                          NodeSelector(remove=frozenset({"zone"})))
    assert "nodeSelector" not in events[0].applied[0]["spec"]["template"]["spec"]


def test_edits_stream_from_file_to_file(samples: Path, tmp_path: Path) -> None:
    source = open_trace(samples / "dsb-scaling.sktrace")
    stream = apply_edits(source, [ScaleReplicas(factor=10)])
    write_stream(stream, tmp_path / "x10.trace")
    before = load(open_trace(samples / "dsb-scaling.sktrace"))
    after = load(open_trace(tmp_path / "x10.trace"))
    assert [o["spec"]["replicas"] for e in after.events for o in e.applied] == [
        o["spec"]["replicas"] * 10 for e in before.events for o in e.applied]
