from __future__ import annotations

from pathlib import Path

import pytest

from simkube.trace import TraceFormat, open_trace, read_trace, write_trace
from simkube.trace.tools.stream import (
    STATE_CHUNK,
    TraceStream,
    stream_of,
    visit_objects,
    write_stream,
)
from tests.unit.trace.conftest import HEADER, pod, sample_trace

pytestmark = pytest.mark.unit


def test_a_source_streams_to_a_file_unchanged(tmp_path: Path) -> None:
    write_trace(sample_trace(), tmp_path / "in.trace")
    written = write_stream(stream_of(open_trace(tmp_path / "in.trace")), tmp_path / "out.trace")
    assert (written.state_objects, written.events) == (1, 3)
    assert str(written) == "1 initial-state objects and 3 events"
    assert read_trace(tmp_path / "out.trace") == sample_trace()


def test_large_initial_states_are_written_in_chunks(tmp_path: Path) -> None:
    state = [pod(f"p{index}") for index in range(STATE_CHUNK * 2 + 1)]
    stream = TraceStream(header=HEADER, initial_state=iter(state), events=[],
                         lifecycles=list, usage=tuple)
    write_stream(stream, tmp_path / "s.sktrace", trace_format=TraceFormat.SIMKUBE_V2)
    assert read_trace(tmp_path / "s.sktrace").events[0].applied == state


def test_visit_objects_sees_every_applied_object_as_the_stream_is_consumed(
        tmp_path: Path) -> None:
    write_trace(sample_trace(), tmp_path / "in.trace")
    seen: list[str] = []

    def visit(obj: dict[str, object]) -> None:
        seen.append(obj["metadata"]["name"])  # type: ignore[index]
        obj["metadata"]["labels"] = {"seen": "yes"}  # type: ignore[index]
    stream = visit_objects(stream_of(open_trace(tmp_path / "in.trace")), visit)
    assert seen == []  # lazily: nothing until the stream is read
    state = list(stream.initial_state)
    events = list(stream.events)
    assert seen == ["base", "web", "p1", "web"]  # deletions are not visited
    assert state[0]["metadata"]["labels"] == {"seen": "yes"}
    assert all(obj["metadata"]["labels"] == {"seen": "yes"}
               for event in events for obj in event.applied)
