from __future__ import annotations

from pathlib import Path

import msgpack
import pytest

from simkube.trace import ObjectRef, StateRecord, TraceEvent
from simkube.tracer import segment_reading, segments
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
                             start_ms=5, end_ms=9, node_type="m5.large"))
    info = writer.seal()
    assert (info.events, info.first_ts, info.last_ts, info.state_objects) == (2, 2000, 3000, 1)
    assert info.kinds == {"v1.Pod": 2}
    assert info.complete
    items = list(segment_reading.read_trace(tmp_path, 1, complete=True))
    assert isinstance(items[0], StateRecord)
    events = [item for item in items if isinstance(item, TraceEvent)]
    assert [e.ts_ms for e in events] == [2000, 3000]
    assert segments.event_envelopes(events[0])[0][0][4] == body
    facts = list(segment_reading.read_meta(tmp_path, 1))
    assert facts[0] == (ref("v1.Pod", "p"), (ref("apps/v1.ReplicaSet", "rs"),))
    assert [(f.end_ms, f.node_type) for f in facts if isinstance(f, RunFact)] == [
        (None, None), (9, "m5.large")]
    loaded = segments.SegmentInfo.from_json(
        __import__("json").loads(segments.segment_path(tmp_path, 1, ".index.json").read_text()))
    assert loaded == info


def test_ref_and_envelope_round_trip() -> None:
    one = ObjectRef(api_version="apps/v1", kind="Deployment", namespace="", name="x")
    assert segments.ref_of(segments.envelope(one, b"")) == one
