from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from simkube.trace import Trace, TraceFormat, TraceFormatError, open_trace
from simkube.trace.model.source import load
from simkube.trace.native.format import encode_header
from tests.unit.trace.conftest import HEADER, crafted, sample_trace

pytestmark = pytest.mark.unit


def test_every_pass_rereads_the_file(write_native: Callable[[Trace, str], Path]) -> None:
    source = open_trace(write_native(sample_trace(), "t.trace"))
    assert source.format is TraceFormat.NATIVE
    first = [event.ts_ms for event in source.events()]
    assert first == [event.ts_ms for event in source.events()]
    assert list(source.initial_state()) == sample_trace().initial_state


def test_lifecycles_without_reading_events_first(
        write_native: Callable[[Trace, str], Path]) -> None:
    source = open_trace(write_native(sample_trace(), "t.trace"))
    assert source.lifecycles() == sample_trace().lifecycles


def test_whole_trace_loads_equal_to_what_was_written(
        write_native: Callable[[Trace, str], Path]) -> None:
    trace = sample_trace()
    loaded = load(open_trace(write_native(trace, "t.trace")))
    assert loaded.events == trace.events
    assert loaded.initial_state == trace.initial_state
    assert loaded.header == trace.header


def test_errors_name_the_file(tmp_path: Path, write_native: Callable[[Trace, str], Path]) -> None:
    path = write_native(Trace(events=[]), "empty.trace")
    path.write_bytes(path.read_bytes()[:-3])
    source = open_trace(path)
    with pytest.raises(TraceFormatError, match=r"empty\.trace: record \d+"):
        list(source.events())


def test_lazy_decode_errors_name_the_file_and_record(tmp_path: Path) -> None:
    path = tmp_path / "lazy.trace"
    path.write_bytes(crafted([[1, encode_header(HEADER)],
                              [3, [[1, [["v1", "Pod", "ns", "a", b"\xc1"]], []]]],
                              [6, 1, 0, 0]]))
    (event,) = open_trace(path).events()  # the envelope is fine, so reading succeeds ...
    with pytest.raises(TraceFormatError,  # ... and decoding the body names file and record
                       match=r"lazy\.trace: record 2 \(byte \d+ decompressed\), event 0"):
        _ = event.applied
