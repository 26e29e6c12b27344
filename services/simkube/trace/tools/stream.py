"""A trace in flight between a source and a writer, so tools can transform it lazily.

Fix, edit and convert all read a trace once and write another; each step wraps the
iterables of the one before, so a million-event trace flows through in constant memory.
Lifecycles and usage are callables because sources (and steps that filter by owner) know
them only once the events have gone by.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path

from simkube.trace.files import TraceWriter
from simkube.trace.model.source import TraceFormat, TraceSource
from simkube.trace.model.types import KubeObject, PodLifecycle, TraceEvent, TraceHeader
from simkube.trace.model.usage import WorkloadUsage

STATE_CHUNK = 1000


@dataclass(slots=True, kw_only=True)
class TraceStream:
    header: TraceHeader
    initial_state: Iterable[KubeObject]
    events: Iterable[TraceEvent]
    lifecycles: Callable[[], list[PodLifecycle]]  # call after the events are consumed
    usage: Callable[[], tuple[WorkloadUsage, ...]]  # likewise


def stream_of(source: TraceSource) -> TraceStream:
    return TraceStream(header=source.header, initial_state=source.initial_state(),
                       events=source.events(), lifecycles=source.lifecycles,
                       usage=source.usage)


@dataclass(frozen=True, slots=True)
class Written:
    state_objects: int
    events: int

    def __str__(self) -> str:
        events = f"{self.events} event{'' if self.events == 1 else 's'}"
        if not self.state_objects:
            return events
        return f"{self.state_objects} initial-state objects and {events}"


def write_stream(stream: TraceStream, path: Path, *,
                 trace_format: TraceFormat | None = None) -> Written:
    """Write ``stream`` to ``path`` atomically; says how much was written."""
    events = state_objects = 0
    with TraceWriter(path, header=stream.header, trace_format=trace_format) as writer:
        state = iter(stream.initial_state)
        while chunk := list(islice(state, STATE_CHUNK)):
            writer.write_state(chunk)
            state_objects += len(chunk)
        for event in stream.events:
            writer.write_event(event)
            events += 1
        for lifecycle in stream.lifecycles():
            writer.write_lifecycle(lifecycle)
        for usage in stream.usage():
            writer.write_usage(usage)
    return Written(state_objects, events)


def visit_objects(stream: TraceStream, visit: Callable[[KubeObject], None]) -> TraceStream:
    """``stream`` with ``visit`` called on every object it applies (initial state and events)
    as it is consumed; ``visit`` may edit the object in place."""
    def visited(objects: Iterable[KubeObject]) -> Iterator[KubeObject]:
        for obj in objects:
            visit(obj)
            yield obj

    def events() -> Iterator[TraceEvent]:
        for event in stream.events:
            for obj in event.applied:
                visit(obj)
            yield event

    return replace(stream, initial_state=visited(stream.initial_state), events=events())
