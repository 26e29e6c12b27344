from __future__ import annotations

from pathlib import Path

import pytest

from simkube.trace import (
    ReadLimits,
    TraceEvent,
    TraceFormat,
    TraceFormatError,
    TraceWriter,
    open_trace,
    open_trace_bytes,
    read_trace,
    write_trace,
)
from tests.unit.trace.conftest import HEADER, native_bytes, pod, sample_trace

pytestmark = pytest.mark.unit


def test_missing_file_is_a_trace_error(tmp_path: Path) -> None:
    with pytest.raises(TraceFormatError, match="cannot be read: No such file"):
        open_trace(tmp_path / "nope.trace")


def test_writer_is_atomic_and_leaves_nothing_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "out.trace"

    def fail_midway() -> None:
        with TraceWriter(target, header=HEADER) as writer:
            writer.write_event(TraceEvent(ts_ms=1, applied=[pod()]))
            raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        fail_midway()
    assert list(tmp_path.iterdir()) == []


def test_writer_replaces_the_target_only_when_complete(tmp_path: Path) -> None:
    target = tmp_path / "out.trace"
    target.write_bytes(b"old")
    with TraceWriter(target, header=HEADER) as writer:
        writer.write_state([pod("s")])
        writer.write_event(TraceEvent(ts_ms=1, applied=[pod()]))
        assert target.read_bytes() == b"old"
    assert [path.name for path in tmp_path.iterdir()] == ["out.trace"]
    assert read_trace(target).initial_state == [pod("s")]


def test_unwritable_target_is_a_trace_error(tmp_path: Path) -> None:
    with pytest.raises(TraceFormatError, match="cannot be written"):
        TraceWriter(tmp_path / "missing-dir" / "x.trace", header=HEADER)


def test_native_round_trip_is_exact(tmp_path: Path) -> None:
    write_trace(sample_trace(), tmp_path / "t.trace")
    assert open_trace(tmp_path / "t.trace").format is TraceFormat.NATIVE
    assert read_trace(tmp_path / "t.trace") == sample_trace()


def test_simkube_output_keeps_objects_at_second_resolution(tmp_path: Path) -> None:
    trace = sample_trace()
    write_trace(trace, tmp_path / "t.sktrace")
    loaded = read_trace(tmp_path / "t.sktrace")
    assert open_trace(tmp_path / "t.sktrace").format is TraceFormat.SIMKUBE_V2
    assert loaded.initial_state == []
    assert loaded.events[0].applied == trace.initial_state  # the state became an event
    assert [event.applied for event in loaded.events[1:]] == [
        event.applied for event in trace.events]
    assert [event.ts_ms for event in loaded.events[1:]] == [
        event.ts_ms // 1000 * 1000 for event in trace.events]
    assert [run.start_ms for run in loaded.lifecycles[0].runs] == [1_700_000_000_000,
                                                                  1_700_000_040_000]


def test_explicit_format_overrides_the_suffix(tmp_path: Path) -> None:
    write_trace(sample_trace(), tmp_path / "t.bin", trace_format=TraceFormat.SIMKUBE_V2)
    assert open_trace(tmp_path / "t.bin").format is TraceFormat.SIMKUBE_V2


def test_bytes_are_a_source_too() -> None:
    source = open_trace_bytes(native_bytes(sample_trace()), name="grpc")
    assert source.name == "grpc"
    assert len(list(source.events())) == 3


def test_json_documents_are_size_capped(samples: Path) -> None:
    with pytest.raises(TraceFormatError, match="the limit is 100"):
        open_trace(samples / "validation_trace.json", limits=ReadLimits(max_document_bytes=100))
