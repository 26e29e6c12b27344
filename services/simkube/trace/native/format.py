"""The native trace format: constants, record shapes and the encoded-object envelope.

Layout (docs/trace-format.md has the full schema and compatibility policy)::

    magic (8 bytes) | version (u16 BE) | flags (u16 BE, 0) | zstd stream of framed records
    record = length (u32 BE) | msgpack array [kind, ...]

The magic and version sit outside the compression so a reader can refuse a file it does not
understand before decompressing anything. Records are length-framed so a reader knows exactly
how many bytes a record claims before decoding it (no declared length can outgrow its record)
and can report errors by record number. Each object is stored in an envelope, its identity
next to its msgpack-encoded body, so tools that only count or filter never decode bodies.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from enum import IntEnum
from typing import Any

from simkube.trace.encoding import ENCODE_ERRORS, PACK, encode_error
from simkube.trace.errors import TraceFormatError
from simkube.trace.limits import DECODE_ERRORS, ReadLimits, describe_decode_error, unpack_raw
from simkube.trace.model.objects import check_object, check_ref
from simkube.trace.model.types import KubeObject, ObjectRef, TraceHeader, TrackedKind

MAGIC = b"\x89SKT\r\n\x1a\n"  # non-ASCII first byte and CR/LF catch text-mode mangling
PREAMBLE = struct.Struct(">8sHH")
RECORD_LENGTH = struct.Struct(">I")
CHUNK_BYTES = 4 * 1024 * 1024  # object bytes per record before a large event is split
BATCH_BYTES = 128 * 1024  # small events are batched into records of about this size
BATCH_EVENTS = 1024
Envelope = list[Any]  # [apiVersion, kind, namespace, name, body: bytes]


class RecordKind(IntEnum):
    HEADER = 1
    STATE = 2  # [2, [envelope...]]: objects of the initial state
    EVENTS = 3  # [3, [[ts_ms, [applied envelope...], [deleted envelope...]]...]]
    EVENT_MORE = 4  # [4, [applied...], [deleted...]]: more objects of the last event before
    LIFECYCLE = 5  # [5, owner kind, "ns/name", [[start_ms, end_ms|nil, spec hash|nil]...]]
    # v1: [6, events, state objects, lifecycle records, CRC-32 of the records before];
    # v2: [6, events, state objects, lifecycle records, usage records, CRC-32]
    END = 6
    USAGE = 7  # v2: [7, kind, "ns/name", period_ms, [[t_ms, pods, cpu_m, memory_b]...]]


def envelope_of(obj: KubeObject, *, where: str, index: int | None = None,
                pack: Callable[[Any], bytes] | None = None) -> Envelope:
    """The object in its envelope; ``pack`` lets a writer reuse its own msgpack packer."""
    # Checked inline (this runs for every object written); check_object explains failures.
    meta = obj.get("metadata") if type(obj) is dict else None
    if type(meta) is dict:
        api_version, kind, name = obj.get("apiVersion"), obj.get("kind"), meta.get("name")
        namespace = meta.get("namespace")
        if namespace is None:
            namespace = ""
        if (type(api_version) is str and api_version and type(kind) is str and kind
                and type(name) is str and name and type(namespace) is str):
            try:
                body = (pack or PACK)(obj)
            except ENCODE_ERRORS as exc:
                raise encode_error(exc, where=f"{where}, object {index}") from None
            return [api_version, kind, namespace, name, body]
    check_object(obj, where=where if index is None else f"{where}, object {index}")
    raise AssertionError("check_object accepts only what the fast path accepts")


def located(where: str, event: int | None) -> str:
    """``where`` with the event number, built only when an error needs it."""
    return where if event is None else f"{where}, event {event}"


def check_envelopes(raw: Any, *, where: str, event: int | None = None) -> list[Envelope]:
    """The record's envelope list, with every identity field and body type checked."""
    if type(raw) is not list:
        raise TraceFormatError("expected a list of objects", where=located(where, event))
    # This runs for every object of every event read: unpacking and one flat test per
    # envelope are several times faster than indexing, and the position is found on error.
    for env in raw:
        if type(env) is not list or len(env) != 5:
            break
        api_version, kind, namespace, name, body = env
        if not (type(api_version) is str and api_version and type(kind) is str and kind
                and type(namespace) is str and type(name) is str and name
                and type(body) is bytes):
            break
    else:
        return raw
    raise TraceFormatError("malformed object envelope (expected apiVersion, kind, namespace, "
                           "name and a binary body)",
                           where=f"{located(where, event)}, object {raw.index(env)}")


class EncodedBatch:
    """Objects from one record, decoded (with the reader's caps) only when asked."""

    __slots__ = ("_index", "_limits", "_source", "_where", "envelopes")

    def __init__(self, envelopes: list[Envelope], where: str, limits: ReadLimits,
                 index: int | None = None, source: str | None = None) -> None:
        # Positional: one of these is made per event read, and keywords cost time there.
        self.envelopes = envelopes
        self._where = where  # the record; ``index`` the event in it (formatted only on error)
        self._index = index
        self._limits = limits
        self._source = source

    @property
    def where(self) -> str:
        return located(self._where, self._index)

    def __len__(self) -> int:
        return len(self.envelopes)

    def refs(self) -> list[ObjectRef]:
        return [ObjectRef(api_version=env[0], kind=env[1], namespace=env[2], name=env[3])
                for env in self.envelopes]

    def decode(self) -> list[KubeObject]:
        objects = []
        limits = self._limits
        for index, env in enumerate(self.envelopes):
            try:
                obj = unpack_raw(env[4], limits)
            except DECODE_ERRORS as exc:
                raise self._error(index, f"undecodable msgpack: {describe_decode_error(exc)}",
                                  ) from None
            # The body must be the object its envelope names (checked inline: hot path).
            meta = obj.get("metadata") if type(obj) is dict else None
            if (type(meta) is not dict or obj.get("apiVersion") != env[0]
                    or obj.get("kind") != env[1] or meta.get("name") != env[3]
                    or (meta.get("namespace") or "") != env[2]):
                ref = ObjectRef(api_version=env[0], kind=env[1], namespace=env[2], name=env[3])
                try:
                    check_ref(ref, obj, where="")
                except TraceFormatError as exc:
                    raise self._error(index, exc.what) from None
            objects.append(obj)
        return objects

    def _error(self, index: int, message: str) -> TraceFormatError:
        return TraceFormatError(message, where=f"{self.where}, object {index}",
                                source=self._source)


def encode_header(header: TraceHeader) -> dict[str, Any]:
    return {
        "created_ms": header.created_ms,
        "source_cluster": header.source_cluster,
        "tracked_kinds": [
            {"kind": kind.kind_key, "pod_template_paths": list(kind.pod_template_paths),
             "track_lifecycle": kind.track_lifecycle, "skip_owned": kind.skip_owned}
            for kind in header.tracked_kinds],
    }


def decode_header(raw: Any, *, version: int, where: str) -> TraceHeader:
    """The header map; unknown keys are ignored so additive fields need no version bump."""
    if not isinstance(raw, dict):
        raise TraceFormatError("the header must be a map", where=where)
    created = raw.get("created_ms")
    cluster = raw.get("source_cluster")
    kinds = raw.get("tracked_kinds", [])
    if created is not None and type(created) is not int:
        raise TraceFormatError("header created_ms must be an integer", where=where)
    if cluster is not None and not isinstance(cluster, str):
        raise TraceFormatError("header source_cluster must be a string", where=where)
    if not isinstance(kinds, list):
        raise TraceFormatError("header tracked_kinds must be a list", where=where)
    return TraceHeader(version=version, created_ms=created, source_cluster=cluster,
                       tracked_kinds=tuple(_tracked_kind(item, where=f"{where}, tracked kind "
                                                         f"{index}")
                                           for index, item in enumerate(kinds)))


def _tracked_kind(raw: Any, *, where: str) -> TrackedKind:
    if not isinstance(raw, dict) or not isinstance(raw.get("kind"), str) or not raw["kind"]:
        raise TraceFormatError("a tracked kind needs a non-empty 'kind' string", where=where)
    paths = raw.get("pod_template_paths", [])
    if not isinstance(paths, list) or not all(isinstance(path, str) for path in paths):
        raise TraceFormatError("pod_template_paths must be a list of strings", where=where)
    flags = [raw.get("track_lifecycle", False), raw.get("skip_owned", False)]
    if not all(isinstance(flag, bool) for flag in flags):
        raise TraceFormatError("track_lifecycle and skip_owned must be booleans", where=where)
    return TrackedKind(kind_key=raw["kind"], pod_template_paths=tuple(paths),
                       track_lifecycle=flags[0], skip_owned=flags[1])
