"""A trace in flight between a source and a writer, so tools can transform it lazily.

Fix, edit and convert all read a trace once and write another; each step wraps the
iterables of the one before, so a million-event trace flows through in constant memory.
Lifecycles are a callable because sources (and steps that filter by owner) know them only
once the events have gone by.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from simkube.trace.files import TraceWriter
from simkube.trace.model import KubeObject, PodLifecycle, TraceEvent, TraceHeader
from simkube.trace.source import TraceFormat, TraceSource

STATE_CHUNK = 1000


@dataclass(slots=True, kw_only=True)
class TraceStream:
    header: TraceHeader
    initial_state: Iterable[KubeObject]
    events: Iterable[TraceEvent]
    lifecycles: Callable[[], list[PodLifecycle]]  # call after the events are consumed


def stream_of(source: TraceSource) -> TraceStream:
    return TraceStream(header=source.header, initial_state=source.initial_state(),
                       events=source.events(), lifecycles=source.lifecycles)


def write_stream(stream: TraceStream, path: Path, *,
                 trace_format: TraceFormat | None = None) -> int:
    """Write ``stream`` to ``path`` atomically; returns the number of events written."""
    count = 0
    with TraceWriter(path, header=stream.header, trace_format=trace_format) as writer:
        state = iter(stream.initial_state)
        while chunk := list(islice(state, STATE_CHUNK)):
            writer.write_state(chunk)
        for event in stream.events:
            writer.write_event(event)
            count += 1
        for lifecycle in stream.lifecycles():
            writer.write_lifecycle(lifecycle)
    return count
