"""Traces: the recorded, time-ordered object changes, pod lifecycles and per-workload usage a
simulation replays.

The package has rooms, each importing only those below it::

    errors, limits, encoding     the base: one error type, read caps, msgpack helpers
    model/                       the trace as values; typed reads inside object bodies
    native/, simkube_v2/         the two file formats (each knows the model, not the other)
    detect, files                choosing a format; opening and writing traces by path
    tools/                       what ``skctl trace`` does: info, validate/fix, edit, convert

Everything outside the package imports from here (``skctl trace`` also from ``tools``)::

    from simkube.trace import open_trace, TraceWriter, TraceEvent, TraceHeader

    source = open_trace(path)            # native, SimKube .sktrace or SimKube JSON
    for event in source.events():        # streamed, constant memory
        ...
    with TraceWriter(out, header=source.header) as writer:   # atomic; format from suffix
        writer.write_event(TraceEvent(ts_ms=..., applied=[...]))

``NativeWriter``/``NativeReader`` do the same over any binary stream (e.g. gRPC chunks);
the tracer also keeps objects pre-encoded (``Envelope``, ``EncodedBatch``) so exporting a
segment never decodes what it only copies.
"""

from simkube.trace.detect import PREFIX_BYTES, detect_format, format_for_path
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
from simkube.trace.limits import DEFAULT_LIMITS, ReadLimits
from simkube.trace.model.fields import At, FieldTypeError, field_list, field_map
from simkube.trace.model.pod_edits import dedupe_ports
from simkube.trace.model.pod_specs import (
    PodSpecSite,
    containers,
    pod_specs,
    pod_templates,
    template_paths,
)
from simkube.trace.model.selectors import LabelSelector, Match, parse_selector
from simkube.trace.model.source import (
    InMemorySource,
    TraceFormat,
    TraceSource,
    checked_usage,
    load,
)
from simkube.trace.model.types import (
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
from simkube.trace.model.usage import RecordedUsage, UsageSample, WorkloadUsage
from simkube.trace.native.format import EncodedBatch, Envelope
from simkube.trace.native.reader import NativeReader, StateRecord, TraceItem
from simkube.trace.native.writer import NativeWriter

__all__ = [
    "DEFAULT_LIMITS",
    "NATIVE_VERSION",
    "PREFIX_BYTES",
    "At",
    "EncodedBatch",
    "Envelope",
    "FieldTypeError",
    "InMemorySource",
    "KubeObject",
    "LabelSelector",
    "Match",
    "NativeReader",
    "NativeWriter",
    "ObjectRef",
    "PodLifecycle",
    "PodRun",
    "PodSpecSite",
    "ReadLimits",
    "RecordedUsage",
    "StateRecord",
    "Trace",
    "TraceEvent",
    "TraceFormat",
    "TraceFormatError",
    "TraceHeader",
    "TraceItem",
    "TraceSink",
    "TraceSource",
    "TraceWriter",
    "TrackedKind",
    "UsageSample",
    "WorkloadUsage",
    "checked_usage",
    "containers",
    "dedupe_ports",
    "detect_format",
    "field_list",
    "field_map",
    "format_for_path",
    "load",
    "open_sink",
    "open_trace",
    "open_trace_bytes",
    "parse_selector",
    "pod_specs",
    "pod_templates",
    "read_trace",
    "template_paths",
    "write_trace",
]
