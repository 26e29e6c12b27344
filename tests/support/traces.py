"""Small traces built in tests: a few objects at chosen offsets, written in the native format."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from simkube.trace import PodLifecycle, Trace, TraceEvent, TraceHeader, TrackedKind, write_trace

START_MS = 1_700_000_000_000


def config_map(name: str, *, namespace: str = "app", **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace}, "data": dict(data)}


def build_trace(events: Sequence[tuple[int, Iterable[dict[str, Any]]]
                                 | tuple[int, Iterable[dict[str, Any]], Iterable[dict[str, Any]]]],
                *, lifecycles: Sequence[PodLifecycle] = (),
                tracked: Sequence[TrackedKind] = ()) -> Trace:
    """Events as (offset ms, applied[, deleted]) from ``START_MS``."""
    built = []
    for entry in events:
        deleted = list(entry[2]) if len(entry) > 2 else []  # type: ignore[misc]
        built.append(TraceEvent(ts_ms=START_MS + entry[0], applied=list(entry[1]),
                                deleted=deleted))
    return Trace(header=TraceHeader(tracked_kinds=tuple(tracked)), events=built,
                 lifecycles=list(lifecycles))


def write_native(path: Path, trace: Trace) -> Path:
    write_trace(trace, path)
    return path
