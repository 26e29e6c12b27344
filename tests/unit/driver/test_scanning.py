from __future__ import annotations

from pathlib import Path

import pytest

from simkube.driver.scanning import replay_events, scan_trace
from simkube.trace import PodLifecycle, PodRun, TraceEvent, TraceFormatError, open_trace
from simkube.trace.model.source import InMemorySource, TraceFormat
from simkube.trace.native.format import encode_header, envelope_of
from tests.support.traces import START_MS, build_trace, config_map, write_native
from tests.unit.trace.conftest import HEADER, crafted, web_usage

pytestmark = pytest.mark.unit
DATA = Path(__file__).resolve().parents[2] / "data" / "simkube"


def test_the_dsb_sample() -> None:
    scan = scan_trace(open_trace(DATA / "dsb-scaling.sktrace"), duration_ms=None)
    assert (scan.events_total, scan.objects_total) == (19, 46)
    assert scan.length_ms == 1_134_000
    assert scan.namespaces == {"dsb"}
    assert scan.lifecycles == ()


def test_duration_counts_only_earlier_events() -> None:
    scan = scan_trace(open_trace(DATA / "dsb-scaling.sktrace"), duration_ms=500_000)
    assert scan.events_total == 3
    assert scan.length_ms == 500_000
    events = list(replay_events(open_trace(DATA / "dsb-scaling.sktrace"),
                                start_ms=scan.start_ms, duration_ms=500_000))
    assert [event.offset_ms for event in events] == [0, 0, 423_000]


def test_lifecycles_and_namespaces_of_namespace_objects(tmp_path: Path) -> None:
    lifecycle = PodLifecycle(owner_kind="v1.Pod", owner="a/p", runs=(PodRun(start_ms=1),))
    trace = build_trace([
        (0, [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "made"}}]),
        (10, [config_map("c", namespace="a")], [config_map("gone", namespace="b")])],
        lifecycles=[lifecycle])
    scan = scan_trace(open_trace(write_native(tmp_path / "t.trace", trace)), duration_ms=None)
    assert scan.namespaces == {"made", "a"}  # deletes need no namespace
    assert scan.lifecycles == (lifecycle,)
    assert (scan.start_ms, scan.end_ms) == (START_MS, START_MS + 10)


def _memory(events: list[TraceEvent], initial: list[dict[str, object]] | None = None,
            ) -> InMemorySource:
    trace = build_trace([])
    trace.events = events
    trace.initial_state = list(initial or [])
    return InMemorySource(trace, name="mem", trace_format=TraceFormat.NATIVE, size_bytes=0)


def test_out_of_order_events_are_refused() -> None:
    source = _memory([TraceEvent(ts_ms=20, applied=[config_map("a")]),
                      TraceEvent(ts_ms=10, applied=[config_map("b")])])
    with pytest.raises(TraceFormatError, match="out of time order") as caught:
        scan_trace(source, duration_ms=None)
    assert caught.value.where == "event 1"


def test_an_empty_trace_is_refused() -> None:
    with pytest.raises(TraceFormatError, match="no events to replay"):
        scan_trace(_memory([]), duration_ms=None)


def test_the_initial_state_is_the_first_event() -> None:
    source = _memory([TraceEvent(ts_ms=50, applied=[config_map("later")])],
                     initial=[config_map("first", namespace="init")])
    scan = scan_trace(source, duration_ms=None)
    assert scan.events_total == 2
    assert scan.namespaces == {"init", "app"}
    events = list(replay_events(source, start_ms=scan.start_ms, duration_ms=None))
    assert [(e.offset_ms, e.applied[0]["metadata"]["name"]) for e in events] == [
        (0, "first"), (0, "later")]


def test_undecodable_objects_fail_the_scan(tmp_path: Path) -> None:
    path = write_native(tmp_path / "t.trace", build_trace([(0, [config_map("a")])]))
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    broken = tmp_path / "broken.trace"
    broken.write_bytes(bytes(data))
    with pytest.raises(TraceFormatError):
        scan_trace(open_trace(broken), duration_ms=None)


def test_removed_hpas_are_left_out_of_the_replay() -> None:
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "web", "namespace": "app"}, "spec": {"maxReplicas": 3}}
    source = _memory([TraceEvent(ts_ms=50, applied=[config_map("c"), hpa]),
                      TraceEvent(ts_ms=60, deleted=[hpa])], initial=[hpa])
    kept = list(replay_events(source, start_ms=50, duration_ms=None))
    assert [len(e.applied) + len(e.deleted) for e in kept] == [1, 2, 1]
    removed = list(replay_events(source, start_ms=50, duration_ms=None, remove_hpas=True))
    assert [[o["kind"] for o in e.applied + e.deleted] for e in removed] == [
        ["ConfigMap"], []]


def test_active_hpas_targets_replay_without_their_recorded_scalings() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "web", "namespace": "app"}, "spec": {"replicas": 1}}
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "web", "namespace": "app"},
           "spec": {"maxReplicas": 3, "scaleTargetRef": {"kind": "Deployment", "name": "web"}}}
    scaled = {**deployment, "spec": {"replicas": 3}}
    source = _memory([TraceEvent(ts_ms=60, applied=[scaled])], initial=[deployment, hpa])
    active = list(replay_events(source, start_ms=50, duration_ms=None))
    assert active[0].applied[0]["spec"] == {"replicas": 1}
    assert active[1].applied[0]["spec"] == {}
    removed = list(replay_events(source, start_ms=50, duration_ms=None, remove_hpas=True))
    assert removed[1].applied[0]["spec"] == {"replicas": 3}


def test_malformed_usage_is_refused_by_the_scan_naming_the_field(tmp_path: Path) -> None:
    records = [[1, encode_header(HEADER)],
               [3, [[START_MS, [envelope_of(config_map("a"), where="t")], []]]],
               [7, "apps/v1.Deployment", "app/web", 15_000, [[0, 1, -5, 1]]],
               [6, 1, 0, 0, 1]]
    path = tmp_path / "bad-usage.trace"
    path.write_bytes(crafted(records, version=2))
    with pytest.raises(TraceFormatError, match=r"usage of apps/v1.Deployment app/web, "
                       r"samples\[0\].cpu_millicores: cpu_millicores is negative"):
        scan_trace(open_trace(path), duration_ms=None)


def test_a_trace_with_good_usage_scans() -> None:
    source = _memory([TraceEvent(ts_ms=START_MS, applied=[config_map("a")])])
    source.trace.usage = (web_usage(),)
    assert scan_trace(source, duration_ms=None).events_total == 1
