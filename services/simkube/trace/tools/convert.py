"""``skctl trace convert``: the same trace in another format, nothing lost on the way.

Going native → SimKube rounds timestamps down to whole seconds (SimKube's unit) and puts
the initial state into a first event; SimKube's JSON form cannot hold pod lifecycles, and no
SimKube form holds recorded usage, so a trace that has them is refused rather than written
without them.
"""

from __future__ import annotations

from pathlib import Path

from simkube.trace.detect import format_for_path
from simkube.trace.errors import TraceFormatError
from simkube.trace.model.source import TraceFormat, TraceSource
from simkube.trace.tools.stream import TraceStream, Written, stream_of, write_stream


def check_target(stream_lifecycles: int, trace_format: TraceFormat, *, path: Path,
                 usage_series: int = 0) -> None:
    """Refuse, before writing anything, a target format that would drop data."""
    if trace_format is not TraceFormat.NATIVE and usage_series:
        raise TraceFormatError(
            f"the trace has recorded usage of {usage_series} workloads, which SimKube traces "
            "cannot hold", source=str(path), hint="write a native .trace file, or remove the "
            "usage first with `skctl trace edit --drop-usage`")
    if trace_format is TraceFormat.SIMKUBE_V2_JSON and stream_lifecycles:
        raise TraceFormatError(
            f"the trace has {stream_lifecycles} pod lifecycle owners, which SimKube's JSON "
            "form cannot hold", source=str(path), hint="write a .sktrace file instead")


def write_converted(stream: TraceStream, source: TraceSource, out: Path, *,
                    trace_format: TraceFormat | None = None) -> Written:
    """Write ``stream`` (read from ``source``) to ``out``; says how much was written."""
    target = format_for_path(out) if trace_format is None else trace_format
    if target is not TraceFormat.NATIVE:  # counting lifecycles may need a whole pass
        check_target(len(source.lifecycles()), target, path=out,
                     usage_series=len(source.recorded_usage()))
    return write_stream(stream, out, trace_format=target)


def convert(source: TraceSource, out: Path, *,
            trace_format: TraceFormat | None = None) -> Written:
    """Write ``source`` to ``out`` in ``trace_format`` (default: from ``out``'s suffix)."""
    return write_converted(stream_of(source), source, out, trace_format=trace_format)
