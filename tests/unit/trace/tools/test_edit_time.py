from __future__ import annotations

from pathlib import Path

import pytest

from simkube.trace import PodLifecycle, PodRun, Trace, TraceEvent, TraceFormat, open_trace
from simkube.trace.model.selectors import Match
from simkube.trace.model.source import InMemorySource, load
from simkube.trace.model.usage import UsageSample, WorkloadUsage
from simkube.trace.tools.edit import apply_edits
from simkube.trace.tools.edit_steps import Select, TimePoint, TimeStretch, TimeWindow
from simkube.trace.tools.stream import write_stream
from tests.unit.trace.conftest import HEADER, deployment, pod

pytestmark = pytest.mark.unit
T0 = 1_000_000


def trace() -> Trace:
    return Trace(header=HEADER, initial_state=[deployment("base")], events=[
        TraceEvent(ts_ms=T0, applied=[deployment("web", replicas=1), pod("early")]),
        TraceEvent(ts_ms=T0 + 60_000, applied=[deployment("web", replicas=4)],
                   deleted=[pod("early")]),
        TraceEvent(ts_ms=T0 + 120_000, applied=[pod("inside")]),
        TraceEvent(ts_ms=T0 + 700_000, applied=[pod("after")])],
        lifecycles=[PodLifecycle(owner_kind="v1.Pod", owner="shop/x", runs=(
            PodRun(start_ms=T0, end_ms=T0 + 30_000),  # ends before the window
            PodRun(start_ms=T0 + 50_000, end_ms=T0 + 200_000),  # spans its start
            PodRun(start_ms=T0 + 300_000, end_ms=T0 + 900_000),  # outlives its end
            PodRun(start_ms=T0 + 800_000)))])  # starts after it


def source() -> InMemorySource:
    return InMemorySource(trace(), name="t", trace_format=TraceFormat.NATIVE, size_bytes=0)


def test_window_folds_the_past_into_the_initial_state() -> None:
    stream = apply_edits(source(), [TimeWindow(start=TimePoint(offset_ms=90_000),
                                               duration_ms=600_000)])
    state = list(stream.initial_state)
    assert [(o["metadata"]["name"], o["spec"].get("replicas")) for o in state] == [
        ("base", 2), ("web", 4)]  # "early" was deleted before the window: not in the state
    assert [event.ts_ms for event in stream.events] == [T0 + 120_000]
    (lifecycle,) = stream.lifecycles()
    assert lifecycle.runs == (PodRun(start_ms=T0 + 50_000, end_ms=T0 + 200_000),
                              PodRun(start_ms=T0 + 300_000))  # running at the window's end


def test_window_with_absolute_end_and_no_start() -> None:
    stream = apply_edits(source(), [TimeWindow(end=TimePoint(absolute_ms=T0 + 60_000))])
    assert [obj["metadata"]["name"] for obj in stream.initial_state] == ["base"]
    assert [event.ts_ms for event in stream.events] == [T0]


def test_window_of_an_empty_trace() -> None:
    empty = InMemorySource(Trace(initial_state=[pod()]), name="e",
                           trace_format=TraceFormat.NATIVE, size_bytes=0)
    stream = apply_edits(empty, [TimeWindow(duration_ms=5)])
    assert list(stream.initial_state) == [pod()]
    assert list(stream.events) == []


def test_compressing_time_scales_events_and_lifecycles_from_the_first_event() -> None:
    stream = apply_edits(source(), [TimeStretch(factor=0.5)])
    assert [event.ts_ms - T0 for event in stream.events] == [0, 30_000, 60_000, 350_000]
    runs = stream.lifecycles()[0].runs
    assert (runs[1].start_ms - T0, runs[1].end_ms) == (25_000, T0 + 100_000)
    assert runs[3].running


def test_only_namespace_dsb_the_first_ten_minutes(samples: Path, tmp_path: Path) -> None:
    stream = apply_edits(open_trace(samples / "dsb-scaling.sktrace"), [
        Select(keep=True, match=Match(namespaces=frozenset({"dsb"}))),
        TimeWindow(duration_ms=600_000)])
    write_stream(stream, tmp_path / "dsb-10m.trace")
    cut = load(open_trace(tmp_path / "dsb-10m.trace"))
    assert cut.start_ms == 1710892138000
    assert cut.end_ms is not None
    assert cut.end_ms < 1710892138000 + 600_000
    assert len(cut.events) == 9  # of 19; the first 10 minutes end at 1710892738


def web_series() -> WorkloadUsage:
    """Usage of shop/web every 30 s from the first event to 600 s."""
    return WorkloadUsage(kind="apps/v1.Deployment", namespace="shop", name="web",
                         period_ms=30_000, samples=tuple(
                             UsageSample(t_ms=t, pods=1, cpu_millicores=t // 1000 + 1,
                                         memory_bytes=1) for t in range(0, 600_001, 30_000)))


def usage_source() -> InMemorySource:
    with_usage = trace()
    with_usage.usage = (web_series(),)
    return InMemorySource(with_usage, name="t", trace_format=TraceFormat.NATIVE, size_bytes=0)


def test_a_window_re_times_usage_to_its_first_event_keeping_the_sample_in_force() -> None:
    stream = apply_edits(usage_source(), [TimeWindow(start=TimePoint(offset_ms=100_000),
                                                     duration_ms=300_000)])
    first = next(iter(stream.events)).ts_ms
    for _ in stream.events:
        pass
    assert first == T0 + 120_000  # the first event inside the window
    (series,) = stream.usage()
    # in force at 120 s: the sample of 120 s itself (held from 120 s, re-timed to 0)
    assert [(s.t_ms, s.cpu_millicores) for s in series.samples[:2]] == [(0, 121), (30_000, 151)]
    assert series.samples[-1].t_ms == 390_000 - 120_000  # the last sample before 400 s


def test_a_window_without_events_keeps_no_usage() -> None:
    stream = apply_edits(usage_source(), [TimeWindow(start=TimePoint(offset_ms=800_000))])
    list(stream.events)
    assert stream.usage() == ()


def test_stretching_time_stretches_usage_and_its_period() -> None:
    stream = apply_edits(usage_source(), [TimeStretch(factor=0.5)])
    list(stream.events)
    (series,) = stream.usage()
    assert series.period_ms == 15_000
    assert [s.t_ms for s in series.samples[:3]] == [0, 15_000, 30_000]
    squeezed = apply_edits(usage_source(), [TimeStretch(factor=0.00001)]).usage()
    assert [s.t_ms for s in squeezed[0].samples] == [0, 1, 2, 3, 4, 5, 6]  # collisions merged
    assert squeezed[0].period_ms == 1
