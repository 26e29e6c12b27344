from __future__ import annotations

import pytest

from simkube.trace import (
    ObjectRef,
    PodLifecycle,
    PodRun,
    Trace,
    TraceEvent,
    TraceHeader,
    TrackedKind,
)
from simkube.trace.model.types import merge_lifecycles
from tests.unit.trace.conftest import deployment, pod

pytestmark = pytest.mark.unit


def test_object_ref_names_kind_and_namespace_like_simkube() -> None:
    ref = ObjectRef.of(deployment("web", "shop"))
    assert ref.kind_key == "apps/v1.Deployment"
    assert ref.ns_name == "shop/web"
    assert str(ref) == "apps/v1.Deployment shop/web"


def test_cluster_scoped_ref_has_no_namespace_in_its_name_or_stub() -> None:
    ref = ObjectRef(api_version="scheduling.k8s.io/v1", kind="PriorityClass", namespace="",
                    name="high")
    assert ref.ns_name == "high"
    assert ref.stub() == {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                          "metadata": {"name": "high"}}


def test_header_finds_tracked_kind() -> None:
    header = TraceHeader(tracked_kinds=(TrackedKind(kind_key="v1.Pod", track_lifecycle=True),))
    assert header.tracked("v1.Pod") is not None
    assert header.tracked("apps/v1.Deployment") is None


def test_event_defaults_to_empty_lists_and_compares_by_content() -> None:
    event = TraceEvent(ts_ms=5)
    assert event.applied == []
    assert event.deleted == []
    assert len(event) == 0
    assert TraceEvent(ts_ms=1, applied=[pod()]) == TraceEvent(ts_ms=1, applied=[pod()])
    assert TraceEvent(ts_ms=1, applied=[pod()]) != TraceEvent(ts_ms=2, applied=[pod()])
    assert "1 objects" in repr(TraceEvent(ts_ms=1, applied=[pod()]))


def test_event_refs_without_touching_bodies() -> None:
    event = TraceEvent(ts_ms=1, applied=[pod("a")], deleted=[pod("b")])
    assert [ref.name for ref in event.applied_refs()] == ["a"]
    assert [ref.name for ref in event.deleted_refs()] == ["b"]
    assert event.encoded() == (None, None)


def test_pod_run_without_end_is_running() -> None:
    assert PodRun(start_ms=1).running
    assert not PodRun(start_ms=1, end_ms=2).running


def test_trace_span_and_objects_in_order() -> None:
    trace = Trace(initial_state=[pod("s")], events=[TraceEvent(ts_ms=10, applied=[pod("a")]),
                                                    TraceEvent(ts_ms=20, applied=[pod("b")])])
    assert (trace.start_ms, trace.end_ms) == (10, 20)
    assert [obj["metadata"]["name"] for obj in trace.objects()] == ["s", "a", "b"]
    assert Trace().start_ms is None


def test_merge_lifecycles_concatenates_runs_per_owner_in_order() -> None:
    runs = [PodRun(start_ms=index) for index in range(3)]
    merged = merge_lifecycles([
        PodLifecycle(owner_kind="v1.Pod", owner="ns/a", runs=(runs[0],)),
        PodLifecycle(owner_kind="v1.Pod", owner="ns/b", runs=(runs[1],)),
        PodLifecycle(owner_kind="v1.Pod", owner="ns/a", runs=(runs[2],))])
    assert merged == [PodLifecycle(owner_kind="v1.Pod", owner="ns/a", runs=(runs[0], runs[2])),
                      PodLifecycle(owner_kind="v1.Pod", owner="ns/b", runs=(runs[1],))]
