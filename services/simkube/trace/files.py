"""Opening traces by path or bytes (format detected), and writing them atomically.

This is the front door for everyone else: ``open_trace`` for streaming, ``read_trace`` for
the whole trace in memory, ``TraceWriter`` for writing. A file being written is a temporary
sibling until the writer closes cleanly, so a failed conversion or edit never leaves a
half-written trace where a good one is expected.
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType
from typing import IO, Protocol

from simkube.trace.detect import PREFIX_BYTES, detect_format, format_for_path
from simkube.trace.errors import TraceFormatError
from simkube.trace.limits import DEFAULT_LIMITS, ReadLimits
from simkube.trace.model.source import Opener, TraceFormat, TraceSource, load
from simkube.trace.model.types import KubeObject, PodLifecycle, Trace, TraceEvent, TraceHeader
from simkube.trace.model.usage import WorkloadUsage
from simkube.trace.native.source import NativeSource
from simkube.trace.native.writer import NativeWriter
from simkube.trace.simkube_v2.reader import SimkubeV2Source, load_simkube_json
from simkube.trace.simkube_v2.writer import SimkubeV2Writer


class TraceSink(Protocol):
    """Where a trace is written: initial state first, then events in time order."""

    def write_state(self, objects: Iterable[KubeObject]) -> None: ...
    def write_event(self, event: TraceEvent) -> None: ...
    def write_lifecycle(self, lifecycle: PodLifecycle) -> None: ...
    def write_usage(self, usage: WorkloadUsage) -> None: ...
    def close(self) -> None: ...


def open_trace(path: Path, *, limits: ReadLimits = DEFAULT_LIMITS) -> TraceSource:
    """A streaming source over the trace file at ``path``, whatever its format."""
    try:
        size = path.stat().st_size
        with path.open("rb") as stream:
            prefix = stream.read(PREFIX_BYTES)
    except OSError as exc:
        raise TraceFormatError(f"cannot be read: {exc.strerror}", source=str(path)) from None
    return _source(prefix, lambda: path.open("rb"), name=str(path), size=size, limits=limits,
                   read_all=path.read_bytes)


def open_trace_bytes(data: bytes, *, name: str = "<bytes>",
                     limits: ReadLimits = DEFAULT_LIMITS) -> TraceSource:
    """A source over a trace held in memory (e.g. received over the network)."""
    return _source(data[:PREFIX_BYTES], lambda: io.BytesIO(data), name=name, size=len(data),
                   limits=limits, read_all=lambda: data)


def _source(prefix: bytes, opener: Opener, *, name: str, size: int, limits: ReadLimits,
            read_all: Callable[[], bytes]) -> TraceSource:
    try:
        trace_format = detect_format(prefix)
    except TraceFormatError as exc:
        raise exc.with_source(name) from None
    if trace_format is TraceFormat.NATIVE:
        return NativeSource(opener, name=name, size_bytes=size, limits=limits)
    if trace_format is TraceFormat.SIMKUBE_V2:
        return SimkubeV2Source(opener, name=name, size_bytes=size, limits=limits)
    if size > limits.max_document_bytes:
        raise TraceFormatError(f"the JSON trace is {size} bytes; the limit is "
                               f"{limits.max_document_bytes}", source=name)
    return load_simkube_json(read_all(), name=name, limits=limits)


def read_trace(path: Path, *, limits: ReadLimits = DEFAULT_LIMITS) -> Trace:
    """The whole trace at ``path`` in memory; every object is decoded, so errors surface here."""
    return load(open_trace(path, limits=limits))


def open_sink(stream: IO[bytes], *, header: TraceHeader, trace_format: TraceFormat,
              ) -> TraceSink:
    """A writer of ``trace_format`` onto an open binary stream."""
    if trace_format is TraceFormat.NATIVE:
        return NativeWriter(stream, header=header)
    return SimkubeV2Writer(stream, header=header,
                           as_json=trace_format is TraceFormat.SIMKUBE_V2_JSON)


class TraceWriter:
    """Writes a trace file atomically; the format follows ``path``'s suffix unless given.

    ``with TraceWriter(path, header=h) as out: out.write_event(e)`` leaves either the whole
    trace at ``path`` or, if anything fails, nothing new at all.
    """

    def __init__(self, path: Path, *, header: TraceHeader,
                 trace_format: TraceFormat | None = None) -> None:
        self.path = path
        self.format = format_for_path(path) if trace_format is None else trace_format
        try:
            self._file = tempfile.NamedTemporaryFile(  # noqa: SIM115  # closed in __exit__
                dir=path.parent, prefix=f".{path.name}.", suffix=".partial", delete=False)
        except OSError as exc:
            raise TraceFormatError(f"cannot be written: {exc.strerror}",
                                   source=str(path)) from None
        self._sink = open_sink(self._file, header=header, trace_format=self.format)

    def write_state(self, objects: Iterable[KubeObject]) -> None:
        self._sink.write_state(objects)

    def write_event(self, event: TraceEvent) -> None:
        self._sink.write_event(event)

    def write_lifecycle(self, lifecycle: PodLifecycle) -> None:
        self._sink.write_lifecycle(lifecycle)

    def write_usage(self, usage: WorkloadUsage) -> None:
        self._sink.write_usage(usage)

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        temporary = Path(self._file.name)
        try:
            try:
                if exc is None:
                    self._sink.close()
                    self._file.flush()
                    os.fsync(self._file.fileno())
            finally:
                self._file.close()
            if exc is None:
                temporary.replace(self.path)
        finally:
            temporary.unlink(missing_ok=True)


def write_trace(trace: Trace, path: Path, *, trace_format: TraceFormat | None = None) -> None:
    """Write a whole in-memory trace to ``path`` (format from the suffix unless given)."""
    with TraceWriter(path, header=trace.header, trace_format=trace_format) as out:
        out.write_state(trace.initial_state)
        for event in trace.events:
            out.write_event(event)
        for lifecycle in trace.lifecycles:
            out.write_lifecycle(lifecycle)
        for usage in trace.usage:
            out.write_usage(usage)
