"""What every reader offers, whatever the file format: header, initial state, events, lifecycles
and recorded usage.

Tools (info, validate, fix, edit, convert) and the driver are written against ``TraceSource``
only, so adding a format never touches them. Sources re-open their input for each pass, so
events can be streamed several times without ever holding them all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from enum import Enum
from typing import IO, Protocol

from simkube.trace.encoding import copy_value
from simkube.trace.errors import TraceFormatError
from simkube.trace.limits import DEFAULT_LIMITS, ReadLimits
from simkube.trace.model.types import KubeObject, PodLifecycle, Trace, TraceEvent, TraceHeader
from simkube.trace.model.usage import RecordedUsage, WorkloadUsage

Opener = Callable[[], AbstractContextManager[IO[bytes]]]
"""Opens the trace's bytes afresh, positioned at the start."""


class TraceFormat(Enum):
    NATIVE = "native"
    SIMKUBE_V2 = "simkube-v2"  # SimKube's .sktrace: one msgpack map
    SIMKUBE_V2_JSON = "simkube-v2-json"  # the same document as JSON

    @property
    def family(self) -> str:
        """The format as ``skctl trace info`` reports it: ``native`` or ``simkube-v2``."""
        return "native" if self is TraceFormat.NATIVE else "simkube-v2"


class TraceSource(Protocol):
    """A readable trace. ``events`` and ``initial_state`` may be called any number of times,
    and every pass yields fresh objects the caller may change. ``lifecycles`` and
    ``recorded_usage`` may need a pass over the events (formats store them last); ``usage``
    is the recorded usage validated (a ``TraceFormatError`` names the first problem)."""

    name: str
    format: TraceFormat
    header: TraceHeader
    size_bytes: int

    def initial_state(self) -> Iterator[KubeObject]: ...
    def events(self) -> Iterator[TraceEvent]: ...
    def lifecycles(self) -> list[PodLifecycle]: ...
    def recorded_usage(self) -> list[RecordedUsage]: ...
    def usage(self) -> tuple[WorkloadUsage, ...]: ...


def checked_usage(records: list[RecordedUsage], *, source: str) -> tuple[WorkloadUsage, ...]:
    """Each series validated, one per workload; the first problem raises, naming ``source``."""
    seen: set[tuple[str, str]] = set()
    checked = []
    for record in records:
        try:
            checked.append(record.checked())
        except TraceFormatError as exc:
            raise exc.with_source(source) from None
        if (record.kind, record.workload) in seen:
            raise TraceFormatError(f"usage of {record.label} is recorded twice", source=source)
        seen.add((record.kind, record.workload))
    return tuple(checked)


class FileSource:
    """What sources over re-openable bytes share: a name for errors, a size, an opener."""

    format: TraceFormat

    def __init__(self, opener: Opener, *, name: str, size_bytes: int,
                 limits: ReadLimits = DEFAULT_LIMITS) -> None:
        self.name = name
        self.size_bytes = size_bytes
        self._opener = opener
        self._limits = limits

    def recorded_usage(self) -> list[RecordedUsage]:
        return []  # formats that record usage override this

    def usage(self) -> tuple[WorkloadUsage, ...]:
        return checked_usage(self.recorded_usage(), source=self.name)


class InMemorySource:
    """A ``TraceSource`` over a ``Trace`` already in memory (e.g. a parsed JSON document)."""

    def __init__(self, trace: Trace, *, name: str, trace_format: TraceFormat,
                 size_bytes: int) -> None:
        self.trace = trace
        self.name = name
        self.format = trace_format
        self.header = trace.header
        self.size_bytes = size_bytes

    def initial_state(self) -> Iterator[KubeObject]:
        return iter(copy_value(self.trace.initial_state, where=f"{self.name}: initial state"))

    def events(self) -> Iterator[TraceEvent]:
        for index, event in enumerate(self.trace.events):
            where = f"{self.name}: events[{index}]"
            yield TraceEvent(ts_ms=event.ts_ms, applied=copy_value(event.applied, where=where),
                             deleted=copy_value(event.deleted, where=where))

    def lifecycles(self) -> list[PodLifecycle]:
        return list(self.trace.lifecycles)

    def recorded_usage(self) -> list[RecordedUsage]:
        return [RecordedUsage.of(usage) for usage in self.trace.usage]

    def usage(self) -> tuple[WorkloadUsage, ...]:
        return self.trace.usage


def load(source: TraceSource) -> Trace:
    """The whole trace in memory, every object decoded (so every error surfaces here)."""
    initial_state = list(source.initial_state())
    events = list(source.events())
    for event in events:
        _ = event.applied, event.deleted
    return Trace(header=source.header, initial_state=initial_state, events=events,
                 lifecycles=source.lifecycles(), usage=source.usage())
