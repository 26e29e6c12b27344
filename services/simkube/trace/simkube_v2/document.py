"""SimKube's v2 trace document, decoded into the model and encoded from it, piece by piece.

Facts (docs/trace-format.md): one map with ``version`` (2), ``config.trackedObjects``,
``events`` (``ts`` in Unix seconds), ``index`` and ``pod_lifecycles``, whose keys are
``[owner kind, "ns/name"]`` arrays mapping an integer pod-spec hash to a list of
``{"Finished": [start, end]}`` / ``{"Running": start}``. The functions here work on one
section or one event at a time, so the msgpack reader can stream and the JSON reader can
reuse them unchanged.
"""

from __future__ import annotations

import hashlib
from typing import Any

from simkube.trace.encoding import pack_checked
from simkube.trace.errors import TraceFormatError
from simkube.trace.model.objects import check_object
from simkube.trace.model.types import KubeObject, PodLifecycle, PodRun, TraceEvent, TrackedKind

SIMKUBE_VERSION = 2
MS_PER_S = 1000
MAX_SECONDS = 2**63 // MS_PER_S  # so milliseconds still fit a signed 64-bit integer


def check_version(raw: Any) -> int:
    if raw != SIMKUBE_VERSION or type(raw) is not int:
        raise TraceFormatError(f"SimKube trace version {raw!r} is not supported (this reader "
                               f"understands version {SIMKUBE_VERSION})", where="version")
    return SIMKUBE_VERSION


def decode_config(raw: Any) -> tuple[TrackedKind, ...]:
    tracked = raw.get("trackedObjects", {}) if isinstance(raw, dict) else None
    if not isinstance(tracked, dict):
        raise TraceFormatError("config.trackedObjects must be a map", where="config")
    kinds = []
    for key, raw_spec in tracked.items():
        where = f"config.trackedObjects[{key!r}]"
        spec = {} if raw_spec is None else raw_spec
        paths = (spec.get("podSpecTemplatePaths") or []) if isinstance(spec, dict) else None
        if (not key or not isinstance(paths, list)
                or not all(isinstance(path, str) for path in paths)):
            raise TraceFormatError("a tracked kind needs a map with podSpecTemplatePaths as a "
                                   "list of strings", where=where)
        flags = (spec.get("trackLifecycle", False), spec.get("skipOwned", False))
        if not all(isinstance(flag, bool) for flag in flags):
            raise TraceFormatError("trackLifecycle and skipOwned must be booleans", where=where)
        kinds.append(TrackedKind(kind_key=key, pod_template_paths=tuple(paths),
                                 track_lifecycle=flags[0], skip_owned=flags[1]))
    return tuple(kinds)


def encode_config(kinds: tuple[TrackedKind, ...]) -> dict[str, Any]:
    tracked: dict[str, Any] = {}
    for kind in kinds:
        spec: dict[str, Any] = {}
        if kind.pod_template_paths:
            spec["podSpecTemplatePaths"] = list(kind.pod_template_paths)
        if kind.skip_owned:
            spec["skipOwned"] = True
        if kind.track_lifecycle:
            spec["trackLifecycle"] = True
        tracked[kind.kind_key] = spec
    return {"trackedObjects": tracked}


def seconds_to_ms(raw: Any, *, where: str) -> int:
    if type(raw) is not int or not 0 <= raw < MAX_SECONDS:
        raise TraceFormatError(f"expected Unix seconds (a non-negative integer), found {raw!r}",
                               where=where)
    return raw * MS_PER_S


def decode_event(raw: Any, *, where: str) -> TraceEvent:
    if not isinstance(raw, dict):
        raise TraceFormatError("an event must be a map", where=where)
    ts_ms = seconds_to_ms(raw.get("ts"), where=f"{where}.ts")
    lists = []
    for key in ("applied_objs", "deleted_objs"):
        objects = raw.get(key, [])
        if not isinstance(objects, list):
            raise TraceFormatError(f"{key} must be a list", where=f"{where}.{key}")
        for index, obj in enumerate(objects):
            check_object(obj, where=f"{where}.{key}[{index}]")
        lists.append(objects)
    return TraceEvent(ts_ms=ts_ms, applied=lists[0], deleted=lists[1])


def encode_event(event: TraceEvent) -> dict[str, Any]:
    return {"ts": event.ts_ms // MS_PER_S, "applied_objs": event.applied,
            "deleted_objs": event.deleted}


def decode_lifecycle(key: Any, by_hash: list[tuple[Any, Any]], *, where: str) -> PodLifecycle:
    """One ``pod_lifecycles`` entry; runs of all pod-spec hashes, in launch order."""
    if (not isinstance(key, list | tuple) or len(key) != 2
            or not all(isinstance(part, str) for part in key)):
        raise TraceFormatError("a lifecycle key must be [owner kind, \"ns/name\"]", where=where)
    runs: list[PodRun] = []
    for spec_hash, entries in by_hash:
        if type(spec_hash) is not int or not isinstance(entries, list):
            raise TraceFormatError("lifecycles map an integer pod hash to a list", where=where)
        runs.extend(_run(entry, spec_hash, where=f"{where}[{spec_hash}]") for entry in entries
                    if entry != "Empty")
    runs.sort(key=lambda run: run.start_ms)  # stable: equal starts keep their stored order
    return PodLifecycle(owner_kind=key[0], owner=key[1], runs=tuple(runs))


def _run(entry: Any, spec_hash: int, *, where: str) -> PodRun:
    if isinstance(entry, dict) and len(entry) == 1:
        if "Running" in entry:
            return PodRun(start_ms=seconds_to_ms(entry["Running"], where=where),
                          spec_hash=spec_hash)
        times = entry.get("Finished")
        if isinstance(times, list) and len(times) == 2:
            return PodRun(start_ms=seconds_to_ms(times[0], where=where),
                          end_ms=seconds_to_ms(times[1], where=where), spec_hash=spec_hash)
    raise TraceFormatError('a pod lifecycle is {"Running": start} or {"Finished": [start, '
                           "end]}", where=where)


def encode_lifecycle(lifecycle: PodLifecycle, *, fallback_hash: int,
                     ) -> dict[int, list[dict[str, Any]]]:
    """Runs grouped by pod-spec hash; runs without one (recorded natively) use ``fallback_hash``."""
    by_hash: dict[int, list[dict[str, Any]]] = {}
    for run in lifecycle.runs:
        start = run.start_ms // MS_PER_S
        entry: dict[str, Any] = ({"Running": start} if run.end_ms is None
                                 else {"Finished": [start, run.end_ms // MS_PER_S]})
        by_hash.setdefault(fallback_hash if run.spec_hash is None else run.spec_hash,
                           []).append(entry)
    return by_hash


def stable_hash(value: Any, *, where: str = "hash") -> int:
    """An unsigned 64-bit hash: BLAKE2b (8-byte digest, big-endian) of the value's msgpack
    encoding, map keys in the value's own order (as read from the file)."""
    encoded = pack_checked(value, where=where)
    return int.from_bytes(hashlib.blake2b(encoded, digest_size=8).digest(), "big")


class IndexBuilder:
    """SimKube's ``index``: every object the trace applies, ``ns/name`` → hash of its spec."""

    def __init__(self) -> None:
        self.index: dict[str, dict[str, int]] = {}

    def add(self, obj: KubeObject) -> None:
        ref = check_object(obj, where="index")
        self.index.setdefault(ref.kind_key, {})[ref.ns_name] = stable_hash(
            obj.get("spec"), where=f"index entry of {ref}")

    def owner_hash(self, lifecycle: PodLifecycle) -> int:
        known = self.index.get(lifecycle.owner_kind, {}).get(lifecycle.owner)
        return stable_hash([lifecycle.owner_kind, lifecycle.owner]) if known is None else known
