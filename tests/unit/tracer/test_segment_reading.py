from __future__ import annotations

from pathlib import Path

import pytest

from simkube.trace import TraceEvent
from simkube.tracer import segment_reading, segments
from tests.unit.tracer.conftest import ref
from tests.unit.tracer.test_segments import _writer

pytestmark = pytest.mark.unit


def test_an_open_segment_is_readable_up_to_its_last_flush(tmp_path: Path) -> None:
    writer = _writer(tmp_path)
    writer.write_event(2000, applied=[segments.envelope(ref("v1.Pod", "p"), b"\x80")],
                       deleted=[])
    writer.flush()
    limit = writer.trace_bytes
    writer.write_event(2500, applied=[segments.envelope(ref("v1.Pod", "q"), b"\x80")],
                       deleted=[])
    events = [item for item in segment_reading.read_trace(tmp_path, 1, complete=False, limit=limit)
              if isinstance(item, TraceEvent)]
    assert [e.ts_ms for e in events] == [2000]  # the last flushed event is whole
    writer.seal()


def test_a_crashed_segment_is_scanned_and_torn_meta_ignored(tmp_path: Path) -> None:
    writer = _writer(tmp_path)
    writer.write_event(2000, applied=[segments.envelope(ref("v1.Pod", "p"), b"\x80")],
                       deleted=[])
    writer.flush()  # then the process dies: no end record, no index
    with segments.segment_path(tmp_path, 1, segments.META_SUFFIX).open("ab") as meta:
        meta.write(b"\x00\x00\x01\x00partial")
    info = segment_reading.scan(tmp_path, 1)
    assert (info.events, info.sealed, info.complete) == (1, True, False)
    assert info.start_ts == 1000
    assert len(list(segment_reading.read_meta(tmp_path, 1))) == 2
    segments.remove(tmp_path, 1)
    assert not list(tmp_path.iterdir())
    assert list(segment_reading.read_meta(tmp_path, 1)) == []
