"""Writing SimKube v2 traces (``.sktrace`` msgpack or JSON) for users going back to SimKube.

A SimKube document declares its event count before the events and ends with an index of
every object, so events are spooled to a temporary file as they arrive (memory stays flat)
and the document is assembled on ``close``. Hashes SimKube computes with Rust's SipHash
cannot be reproduced; ``index`` values and missing pod-spec hashes are BLAKE2b-64 of
canonical JSON instead (see ``stable_hash`` and docs/trace-format.md).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterable
from typing import IO, Any

import msgpack

from simkube.trace.encoding import ENCODE_ERRORS, pack_checked
from simkube.trace.errors import TraceFormatError
from simkube.trace.model.types import (
    KubeObject,
    PodLifecycle,
    TraceEvent,
    TraceHeader,
    merge_lifecycles,
)
from simkube.trace.model.usage import WorkloadUsage
from simkube.trace.simkube_v2.document import (
    SIMKUBE_VERSION,
    IndexBuilder,
    encode_config,
    encode_event,
    encode_lifecycle,
)


class SimkubeV2Writer:
    """Streams a trace into a SimKube v2 document (``as_json`` for the JSON form)."""

    def __init__(self, stream: IO[bytes], *, header: TraceHeader, as_json: bool = False) -> None:
        self._stream = stream
        self._header = header
        self._as_json = as_json
        self._spool = tempfile.TemporaryFile()  # noqa: SIM115  # closed in close()
        self._packer = msgpack.Packer(use_bin_type=True)
        self._index = IndexBuilder()
        self._events = 0
        self._state: list[KubeObject] = []
        self._lifecycles: list[PodLifecycle] = []

    def write_state(self, objects: Iterable[KubeObject]) -> None:
        """SimKube has no separate initial state: it becomes the first event."""
        self._state.extend(objects)

    def write_event(self, event: TraceEvent) -> None:
        self._flush_state(event.ts_ms)
        self._append(event)

    def write_lifecycle(self, lifecycle: PodLifecycle) -> None:
        if self._as_json and lifecycle.runs:
            raise TraceFormatError(
                "SimKube's JSON form cannot hold pod lifecycles (they are keyed by arrays)",
                hint="write a .sktrace (msgpack) file instead")
        self._lifecycles.append(lifecycle)

    def write_usage(self, usage: WorkloadUsage) -> None:
        """SimKube traces have no place for usage: refuse rather than drop it silently."""
        raise TraceFormatError(
            f"SimKube traces cannot hold recorded usage (the trace has usage of {usage.kind} "
            f"{usage.workload})", hint="write a native .trace file instead, or remove the "
            "usage first with `skctl trace edit --drop-usage`")

    def close(self) -> None:
        try:
            self._flush_state(self._header.created_ms or 0)
            config = encode_config(self._header.tracked_kinds)
            self._spool.seek(0)
            if self._as_json:
                self._write_json(config)
            else:
                self._write_msgpack(config)
        finally:
            self._spool.close()

    def _flush_state(self, ts_ms: int) -> None:
        if self._state:
            self._append(TraceEvent(ts_ms=ts_ms, applied=self._state))
            self._state = []

    def _append(self, event: TraceEvent) -> None:
        for obj in event.applied:
            self._index.add(obj)
        document = encode_event(event)
        if self._as_json:
            prefix = b"," if self._events else b""
            self._spool.write(prefix + _json(document, where=f"event {self._events}"))
        else:
            self._spool.write(pack_checked(document, where=f"event {self._events}",
                                           pack=self._packer.pack))
        self._events += 1

    def _write_msgpack(self, config: dict[str, Any]) -> None:
        pack = self._packer.pack
        out = self._stream
        out.write(self._packer.pack_map_header(5))
        out.write(pack("version") + pack(SIMKUBE_VERSION) + pack("config") + pack(config))
        out.write(pack("events") + self._packer.pack_array_header(self._events))
        shutil.copyfileobj(self._spool, out)
        lifecycles = {(lc.owner_kind, lc.owner): encode_lifecycle(
            lc, fallback_hash=self._index.owner_hash(lc))
            for lc in merge_lifecycles(self._lifecycles)}
        out.write(pack("index") + pack(self._index.index))
        out.write(pack("pod_lifecycles") + pack_checked(lifecycles, where="pod_lifecycles",
                                                        pack=pack))

    def _write_json(self, config: dict[str, Any]) -> None:
        out = self._stream
        out.write(b'{"version":' + _json(SIMKUBE_VERSION, where="version"))
        out.write(b',"config":' + _json(config, where="config") + b',"events":[')
        shutil.copyfileobj(self._spool, out)
        out.write(b'],"index":' + _json(self._index.index, where="index"))
        out.write(b',"pod_lifecycles":{}}\n')


def _json(value: Any, *, where: str) -> bytes:
    try:
        return json.dumps(value, separators=(",", ":")).encode()
    except ENCODE_ERRORS as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:200]
        raise TraceFormatError(f"cannot be written as JSON: {reason}", where=where) from None
