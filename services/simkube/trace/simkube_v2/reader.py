"""Reading SimKube v2 traces: the ``.sktrace`` msgpack document (streamed) and its JSON form.

An ``.sktrace`` is a single msgpack map, not a sequence of records, but msgpack lets a reader
walk a map's entries and an array's elements one at a time. Opening the file walks it once,
skipping events, to learn the configuration, the event count and the lifecycles (which
come after the events); each pass over the events then seeks straight to them and decodes
one event at a time. The JSON form is small by nature and is parsed whole (size-capped).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any

import msgpack

from simkube.trace.errors import TraceFormatError
from simkube.trace.limits import (
    DECODE_ERRORS,
    DEFAULT_LIMITS,
    ReadLimits,
    describe_decode_error,
    streaming_unpacker,
)
from simkube.trace.model.source import FileSource, InMemorySource, Opener, TraceFormat
from simkube.trace.model.types import KubeObject, PodLifecycle, Trace, TraceEvent, TraceHeader
from simkube.trace.simkube_v2.document import (
    check_version,
    decode_config,
    decode_event,
    decode_lifecycle,
)

REQUIRED = ("version", "config", "events")


class SimkubeV2Source(FileSource):
    format = TraceFormat.SIMKUBE_V2

    def __init__(self, opener: Opener, *, name: str, size_bytes: int,
                 limits: ReadLimits = DEFAULT_LIMITS) -> None:
        super().__init__(opener, name=name, size_bytes=size_bytes, limits=limits)
        self._events_offset = 0
        self.event_count = 0
        self._lifecycles: list[PodLifecycle] = []
        sections: dict[str, Any] = {}
        with opener() as stream:
            unpacker = self._unpacker(stream)
            self._guard(lambda: self._scan(unpacker, sections), unpacker, "document")
        missing = [key for key in REQUIRED if key not in sections]
        if missing:
            raise TraceFormatError(f"the document has no {', '.join(missing)}",
                                   source=name)
        try:
            self.header = TraceHeader(version=check_version(sections["version"]),
                                      tracked_kinds=decode_config(sections["config"]))
        except TraceFormatError as exc:
            raise exc.with_source(name) from None

    def initial_state(self) -> Iterator[KubeObject]:
        return iter(())  # SimKube keeps the initial state in its first events

    def events(self) -> Iterator[TraceEvent]:
        with self._opener() as stream:
            stream.seek(self._events_offset)
            unpacker = self._unpacker(stream)
            self._guard(unpacker.read_array_header, unpacker, "events")
            for index in range(self.event_count):
                where = f"events[{index}]"
                raw = self._guard(unpacker.unpack, unpacker, where)
                yield self._guard(lambda raw=raw, where=where: decode_event(raw, where=where),
                                  unpacker, where)

    def lifecycles(self) -> list[PodLifecycle]:
        return list(self._lifecycles)

    def _unpacker(self, stream: IO[bytes]) -> Any:
        return streaming_unpacker(stream, limits=self._limits, size_hint=self.size_bytes)

    def _scan(self, unpacker: Any, sections: dict[str, Any]) -> None:
        for _ in range(unpacker.read_map_header()):
            key = unpacker.unpack()
            if key == "events":
                self._events_offset = unpacker.tell()
                self.event_count = unpacker.read_array_header()
                for _ in range(self.event_count):
                    unpacker.skip()
                sections[key] = True
            elif key == "pod_lifecycles":
                self._lifecycles = _read_lifecycles(unpacker)
            elif key in ("version", "config"):
                sections[key] = unpacker.unpack()
            else:  # "index" and anything newer: not needed to replay
                unpacker.skip()
        try:
            unpacker.skip()
        except msgpack.exceptions.OutOfData:
            return
        raise TraceFormatError("unexpected data after the trace document")

    def _guard(self, step: Any, unpacker: Any, where: str) -> Any:
        """Run one decoding step; any failure becomes a located ``TraceFormatError``."""
        try:
            return step()
        except TraceFormatError as exc:
            raise exc.with_source(self.name) from None
        except DECODE_ERRORS as exc:
            raise TraceFormatError(f"undecodable msgpack: {describe_decode_error(exc)}",
                                   where=f"{where}, near byte {unpacker.tell()}",
                                   source=self.name) from None


def _read_lifecycles(unpacker: Any) -> list[PodLifecycle]:
    # Keys are arrays and hashes integers, which Python maps cannot be built from safely;
    # walking entry by entry avoids building those maps at all.
    lifecycles = []
    for index in range(unpacker.read_map_header()):
        key = unpacker.unpack()
        by_hash = [(unpacker.unpack(), unpacker.unpack())
                   for _ in range(unpacker.read_map_header())]
        lifecycles.append(decode_lifecycle(key, by_hash, where=f"pod_lifecycles entry {index}"))
    return lifecycles


def load_simkube_json(data: bytes, *, name: str, limits: ReadLimits = DEFAULT_LIMITS,
                      ) -> InMemorySource:
    """A SimKube v2 trace in its JSON form (``pod_lifecycles`` must be empty: JSON object
    keys cannot be the arrays SimKube uses)."""
    if len(data) > limits.max_document_bytes:
        raise TraceFormatError(f"the JSON trace is {len(data)} bytes; the limit is "
                               f"{limits.max_document_bytes}", source=name)
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise TraceFormatError(f"not valid JSON: {str(exc)[:200]}", source=name) from None
    try:
        return InMemorySource(_decode_document(document), name=name,
                              trace_format=TraceFormat.SIMKUBE_V2_JSON, size_bytes=len(data))
    except TraceFormatError as exc:
        raise exc.with_source(name) from None


def _decode_document(document: Any) -> Trace:
    if not isinstance(document, dict):
        raise TraceFormatError("a SimKube trace is a JSON object")
    missing = [key for key in REQUIRED if key not in document]
    if missing:
        raise TraceFormatError(f"the document has no {', '.join(missing)}")
    header = TraceHeader(version=check_version(document["version"]),
                         tracked_kinds=decode_config(document["config"]))
    raw_events = document["events"]
    if not isinstance(raw_events, list):
        raise TraceFormatError("events must be a list", where="events")
    events = [decode_event(raw, where=f"events[{index}]") for index, raw in enumerate(raw_events)]
    if document.get("pod_lifecycles") not in (None, {}):
        raise TraceFormatError("JSON traces cannot hold pod lifecycles (SimKube keys them by "
                               "arrays); expected an empty object", where="pod_lifecycles")
    return Trace(header=header, events=events)
