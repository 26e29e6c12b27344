from __future__ import annotations

import io
from dataclasses import replace

import pytest

from simkube.trace import (
    NativeReader,
    NativeWriter,
    PodLifecycle,
    PodRun,
    TraceEvent,
    TraceFormatError,
)
from simkube.trace.native.format import BATCH_EVENTS, CHUNK_BYTES, MAGIC
from tests.unit.trace.conftest import HEADER, native_bytes, pod, sample_trace

pytestmark = pytest.mark.unit


def _events(data: bytes) -> list[TraceEvent]:
    return [item for item in NativeReader(io.BytesIO(data)) if isinstance(item, TraceEvent)]


def test_stream_starts_with_magic_and_version_outside_the_compression() -> None:
    data = native_bytes(sample_trace())
    assert data.startswith(MAGIC + b"\x00\x02\x00\x00")


def test_flush_makes_events_readable_before_close() -> None:
    buffer = io.BytesIO()
    writer = NativeWriter(buffer, header=HEADER)
    writer.write_event(TraceEvent(ts_ms=1, applied=[pod("a")]))
    writer.flush()
    partial = buffer.getvalue()
    with pytest.raises(TraceFormatError, match="without its end record"):
        _events(partial)
    writer.close()
    writer.close()  # idempotent
    assert [e.applied[0]["metadata"]["name"] for e in _events(buffer.getvalue())] == ["a"]


def _crash_while_writing(buffer: io.BytesIO) -> None:
    with NativeWriter(buffer, header=HEADER) as writer:
        writer.write_event(TraceEvent(ts_ms=1, applied=[pod()]))
        raise RuntimeError("tracer crashed")


def test_failed_writer_leaves_a_detectably_incomplete_stream() -> None:
    buffer = io.BytesIO()
    with pytest.raises(RuntimeError):
        _crash_while_writing(buffer)
    with pytest.raises(TraceFormatError, match="truncated"):
        _events(buffer.getvalue())


def test_refuses_time_going_backwards_and_bad_timestamps() -> None:
    with NativeWriter(io.BytesIO(), header=HEADER) as writer:
        writer.write_event(TraceEvent(ts_ms=10))
        with pytest.raises(TraceFormatError, match="earlier than the previous") as caught:
            writer.write_event(TraceEvent(ts_ms=9))
        assert "timestamps-backwards=sort" in str(caught.value)
        with pytest.raises(TraceFormatError, match="non-negative integer"):
            writer.write_event(TraceEvent(ts_ms=10.5))  # type: ignore[arg-type]


def test_refuses_objects_without_identity_and_state_after_events() -> None:
    writer = NativeWriter(io.BytesIO(), header=HEADER)
    with pytest.raises(TraceFormatError, match="metadata must be a map"):
        writer.write_event(TraceEvent(ts_ms=1, applied=[{"apiVersion": "v1", "kind": "Pod"}]))
    writer.write_event(TraceEvent(ts_ms=1))
    with pytest.raises(ValueError, match="before any event"):
        writer.write_state([pod()])


def test_many_small_events_are_batched_and_read_back_in_order() -> None:
    count = BATCH_EVENTS * 2 + 7
    buffer = io.BytesIO()
    with NativeWriter(buffer, header=HEADER) as writer:
        for index in range(count):
            writer.write_event(TraceEvent(ts_ms=index, applied=[pod(f"p{index}")]))
    events = _events(buffer.getvalue())
    assert [event.ts_ms for event in events] == list(range(count))
    assert events[-1].applied[0]["metadata"]["name"] == f"p{count - 1}"


def test_an_event_larger_than_a_record_is_split_and_rejoined() -> None:
    big = [pod(f"p{index}", annotations={"blob": "x" * 100_000}) for index in range(60)]
    assert sum(len(str(obj)) for obj in big) > CHUNK_BYTES
    buffer = io.BytesIO()
    with NativeWriter(buffer, header=HEADER) as writer:
        writer.write_event(TraceEvent(ts_ms=1, applied=big[:50], deleted=big[50:]))
        writer.write_event(TraceEvent(ts_ms=2, applied=[pod("after")]))
    first, second = _events(buffer.getvalue())
    assert first.applied == big[:50]
    assert first.deleted == big[50:]
    assert second.applied == [pod("after")]


def test_untouched_objects_are_copied_without_reencoding() -> None:
    data = native_bytes(sample_trace())
    buffer = io.BytesIO()
    reader = NativeReader(io.BytesIO(data))
    with NativeWriter(buffer, header=reader.header) as writer:
        for item in reader:
            if isinstance(item, TraceEvent):
                assert item.encoded()[0] is not None or not item.applied_refs()
                writer.write_event(item)
    assert [e.applied for e in _events(buffer.getvalue())] == [
        e.applied for e in sample_trace().events]


def test_a_run_keeps_its_instance_type_and_one_without_reads_as_before() -> None:
    typed = PodLifecycle(owner_kind="apps/v1.Deployment", owner="ns/web", runs=(
        PodRun(start_ms=1, end_ms=2, node_type="m5.large"), PodRun(start_ms=3)))
    data = native_bytes(replace(sample_trace(), lifecycles=[typed]))
    assert [item for item in NativeReader(io.BytesIO(data))
            if isinstance(item, PodLifecycle)] == [typed]
