"""A native trace file (or bytes) as a ``TraceSource``: every pass re-reads the stream.

Lifecycle and usage records may appear anywhere in a native stream (a live tracer writes
lifecycles as pods finish), so the complete lists are known only after a whole pass; they are
remembered from the first full pass over the events.
"""

from __future__ import annotations

from collections.abc import Iterator

from simkube.trace.errors import TraceFormatError
from simkube.trace.limits import DEFAULT_LIMITS, ReadLimits
from simkube.trace.model.source import FileSource, Opener, TraceFormat
from simkube.trace.model.types import KubeObject, PodLifecycle, TraceEvent, merge_lifecycles
from simkube.trace.model.usage import RecordedUsage
from simkube.trace.native.reader import NativeReader, StateRecord


class NativeSource(FileSource):
    format = TraceFormat.NATIVE

    def __init__(self, opener: Opener, *, name: str, size_bytes: int,
                 limits: ReadLimits = DEFAULT_LIMITS) -> None:
        super().__init__(opener, name=name, size_bytes=size_bytes, limits=limits)
        self._lifecycles: list[PodLifecycle] | None = None
        self._usage: list[RecordedUsage] = []
        try:
            with opener() as stream:
                self.header = NativeReader(stream, limits=limits).header
        except TraceFormatError as exc:
            raise exc.with_source(name) from None

    def initial_state(self) -> Iterator[KubeObject]:
        try:
            with self._opener() as stream:
                for item in NativeReader(stream, limits=self._limits, source=self.name):
                    if isinstance(item, TraceEvent):
                        return
                    if isinstance(item, StateRecord):
                        yield from item.objects.decode()
        except TraceFormatError as exc:
            raise exc.with_source(self.name) from None

    def events(self) -> Iterator[TraceEvent]:
        try:
            with self._opener() as stream:
                reader = NativeReader(stream, limits=self._limits, source=self.name)
                yield from reader.events()
        except TraceFormatError as exc:
            raise exc.with_source(self.name) from None
        self._usage = reader.usage
        self._lifecycles = merge_lifecycles(reader.lifecycles)

    def lifecycles(self) -> list[PodLifecycle]:
        self._full_pass()
        return list(self._lifecycles or [])

    def recorded_usage(self) -> list[RecordedUsage]:
        self._full_pass()
        return list(self._usage)

    def _full_pass(self) -> None:
        if self._lifecycles is None:
            for _ in self.events():
                pass
