"""Traces: the recorded, time-ordered object changes and pod lifecycles a simulation replays.

The public API is small on purpose; tracer, driver and tools need only this::

    from simkube.trace import open_trace, TraceWriter, TraceEvent, TraceHeader

    source = open_trace(path)            # native, SimKube .sktrace or SimKube JSON
    for event in source.events():        # streamed, constant memory
        ...
    with TraceWriter(out, header=source.header) as writer:   # atomic; format from suffix
        writer.write_event(TraceEvent(ts_ms=..., applied=[...]))

``NativeWriter``/``NativeReader`` do the same over any binary stream (e.g. gRPC chunks).
"""

from simkube.trace.errors import TraceFormatError
from simkube.trace.files import (
    TraceSink,
    TraceWriter,
    open_sink,
    open_trace,
    open_trace_bytes,
    read_trace,
    write_trace,
)
from simkube.trace.limits import ReadLimits
from simkube.trace.model import (
    NATIVE_VERSION,
    KubeObject,
    ObjectRef,
    PodLifecycle,
    PodRun,
    Trace,
    TraceEvent,
    TraceHeader,
    TrackedKind,
)
from simkube.trace.native_reader import NativeReader, StateRecord
from simkube.trace.native_writer import NativeWriter
from simkube.trace.source import TraceFormat, TraceSource, load

__all__ = [
    "NATIVE_VERSION",
    "KubeObject",
    "NativeReader",
    "NativeWriter",
    "ObjectRef",
    "PodLifecycle",
    "PodRun",
    "ReadLimits",
    "StateRecord",
    "Trace",
    "TraceEvent",
    "TraceFormat",
    "TraceFormatError",
    "TraceHeader",
    "TraceSink",
    "TraceSource",
    "TraceWriter",
    "TrackedKind",
    "load",
    "open_sink",
    "open_trace",
    "open_trace_bytes",
    "read_trace",
    "write_trace",
]
