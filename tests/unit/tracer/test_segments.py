from __future__ import annotations

from pathlib import Path

import msgpack
import pytest

from simkube.trace import ObjectRef, StateRecord, TraceEvent
from simkube.tracer import segments
from simkube.tracer.segments import RunFact, SegmentWriter
from tests.unit.tracer.conftest import HEADER, obj, ref

pytestmark = pytest.mark.unit
HEADER_AT = HEADER.__class__(created_ms=1000, source_cluster="test",
                             tracked_kinds=HEADER.tracked_kinds)


def _writer(directory: Path, *, state: list[list[object]] | None = None) -> SegmentWriter:
    return SegmentWriter(directory, number=1, header=HEADER_AT, state=state or [],
                         owners=[(ref("v1.Pod", "p"), (ref("apps/v1.ReplicaSet", "rs"),))],
                         runs=[RunFact(uid="u1", owner_kind="batch/v1.Job", owner="ns/j",
                                       pod="ns/p", start_ms=5)])


def test_written_segment_reads_back_with_index_and_meta(tmp_path: Path) -> None:
    body = b"\x81\xa1a\x01"  # any msgpack map: the store hands encoded bodies through
    old = msgpack.packb(obj("v1.Pod", "old"))
    state = [segments.envelope(ref("v1.Pod", "old"), old)]
    writer = _writer(tmp_path, state=state)  # type: ignore[arg-type]
    writer.write_event(2000, applied=[segments.envelope(ref("v1.Pod", "p"), body)], deleted=[])
    writer.write_event(3000, applied=[], deleted=[segments.envelope(ref("v1.Pod", "old"), old)])
    writer.write_run(RunFact(uid="u1", owner_kind="batch/v1.Job", owner="ns/j", pod="ns/p",
                             start_ms=5, end_ms=9))
    info = writer.seal()
    assert (info.events, info.first_ts, info.last_ts, info.state_objects) == (2, 2000, 3000, 1)
    assert info.kinds == {"v1.Pod": 2}
    assert info.complete
    items = list(segments.read_trace(tmp_path, 1, complete=True))
    assert isinstance(items[0], StateRecord)
    events = [item for item in items if isinstance(item, TraceEvent)]
    assert [e.ts_ms for e in events] == [2000, 3000]
    assert segments.event_envelopes(events[0])[0][0][4] == body
    facts = list(segments.read_meta(tmp_path, 1))
    assert facts[0] == (ref("v1.Pod", "p"), (ref("apps/v1.ReplicaSet", "rs"),))
    assert [f.end_ms for f in facts if isinstance(f, RunFact)] == [None, 9]
    loaded = segments.SegmentInfo.from_json(
        __import__("json").loads(segments.segment_path(tmp_path, 1, ".index.json").read_text()))
    assert loaded == info


def test_an_open_segment_is_readable_up_to_its_last_flush(tmp_path: Path) -> None:
    writer = _writer(tmp_path)
    writer.write_event(2000, applied=[segments.envelope(ref("v1.Pod", "p"), b"\x80")],
                       deleted=[])
    writer.flush()
    limit = writer.trace_bytes
    writer.write_event(2500, applied=[segments.envelope(ref("v1.Pod", "q"), b"\x80")],
                       deleted=[])
    events = [item for item in segments.read_trace(tmp_path, 1, complete=False, limit=limit)
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
    info = segments.scan(tmp_path, 1)
    assert (info.events, info.sealed, info.complete) == (1, True, False)
    assert info.start_ts == 1000
    assert len(list(segments.read_meta(tmp_path, 1))) == 2
    segments.remove(tmp_path, 1)
    assert not list(tmp_path.iterdir())
    assert list(segments.read_meta(tmp_path, 1)) == []


def test_ref_and_envelope_round_trip() -> None:
    one = ObjectRef(api_version="apps/v1", kind="Deployment", namespace="", name="x")
    assert segments.ref_of(segments.envelope(one, b"")) == one
