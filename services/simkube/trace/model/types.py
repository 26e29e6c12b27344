"""The trace as Python objects: what every reader produces and every writer consumes.

Tracer, driver and tools share these classes, so they stay few and plain: a header, the
initial state, time-ordered events, pod lifecycles and recorded usage (``usage``). Kubernetes
objects stay ordinary ``dict``s (the shape the API server speaks); only the trace's own
structure is typed. Events read from a native file keep their objects encoded until first
touched, because most tools need only each object's identity and decoding every object would
dominate reading time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from simkube.trace.model.usage import WorkloadUsage

KubeObject = dict[str, Any]

NATIVE_VERSION = 2
"""The native format version this code writes (and the newest it reads; it reads 1 too).

Version 2 added the USAGE record (what pods used, per workload) and its count in END."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectRef:
    """Which object: enough to find, delete or count it without its body."""

    api_version: str
    kind: str
    namespace: str  # "" for cluster-scoped objects
    name: str

    @property
    def kind_key(self) -> str:
        """``apps/v1.Deployment``: the spelling tracked kinds and SimKube use."""
        return f"{self.api_version}.{self.kind}"

    @property
    def ns_name(self) -> str:
        """``ns/name`` (or ``name`` when cluster-scoped), as SimKube keys objects."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def __str__(self) -> str:
        return f"{self.kind_key} {self.ns_name}"

    @classmethod
    def of(cls, obj: KubeObject) -> ObjectRef:
        """The reference of an object that readers have already checked (see ``check_object``)."""
        meta = obj["metadata"]
        return cls(api_version=obj["apiVersion"], kind=obj["kind"],
                   namespace=meta.get("namespace") or "", name=meta["name"])

    def stub(self) -> KubeObject:
        """The smallest object that names this reference, e.g. for a deletion."""
        meta: dict[str, str] = {"name": self.name}
        if self.namespace:
            meta["namespace"] = self.namespace
        return {"apiVersion": self.api_version, "kind": self.kind, "metadata": meta}


@dataclass(frozen=True, slots=True, kw_only=True)
class TrackedKind:
    """One kind the tracer watched, and how the driver finds its pods."""

    kind_key: str  # group/version.Kind, e.g. "apps/v1.Deployment" or "v1.Pod"
    pod_template_paths: tuple[str, ...] = ()  # JSON pointers; "" is the object itself (a Pod)
    track_lifecycle: bool = False
    skip_owned: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceHeader:
    """What a trace is about: where and when it was recorded, and what was watched."""

    version: int = NATIVE_VERSION  # format version of the file it was read from
    created_ms: int | None = None
    source_cluster: str | None = None
    tracked_kinds: tuple[TrackedKind, ...] = ()

    def tracked(self, kind_key: str) -> TrackedKind | None:
        """The tracker configuration of ``kind_key``, if the kind was tracked."""
        return next((kind for kind in self.tracked_kinds if kind.kind_key == kind_key), None)


class ObjectBatch(Protocol):
    """Objects still encoded as read: identities are cheap, bodies are decoded on demand."""

    def __len__(self) -> int: ...
    def refs(self) -> list[ObjectRef]: ...
    def decode(self) -> list[KubeObject]: ...


Objects = list[KubeObject] | ObjectBatch


class TraceEvent:
    """Objects applied and deleted at one moment (``ts_ms``: Unix milliseconds)."""

    __slots__ = ("_applied", "_deleted", "ts_ms")

    def __init__(self, *, ts_ms: int, applied: Objects | None = None,
                 deleted: Objects | None = None) -> None:
        self.ts_ms = ts_ms
        self._applied: Objects = [] if applied is None else applied
        self._deleted: Objects = [] if deleted is None else deleted

    @property
    def applied(self) -> list[KubeObject]:
        """Objects as they should exist after this event (decoded on first use, then editable)."""
        if not isinstance(self._applied, list):
            self._applied = self._applied.decode()
        return self._applied

    @applied.setter
    def applied(self, objects: list[KubeObject]) -> None:
        self._applied = objects

    @property
    def deleted(self) -> list[KubeObject]:
        """Objects removed at this event: full objects or stubs naming them."""
        if not isinstance(self._deleted, list):
            self._deleted = self._deleted.decode()
        return self._deleted

    @deleted.setter
    def deleted(self, objects: list[KubeObject]) -> None:
        self._deleted = objects

    def applied_refs(self) -> list[ObjectRef]:
        """Which objects are applied, without decoding their bodies."""
        return _refs(self._applied)

    def deleted_refs(self) -> list[ObjectRef]:
        """Which objects are deleted, without decoding their bodies."""
        return _refs(self._deleted)

    def encoded(self) -> tuple[ObjectBatch | None, ObjectBatch | None]:
        """The still-encoded applied and deleted batches (``None`` once decoded or replaced)."""
        applied = None if isinstance(self._applied, list) else self._applied
        deleted = None if isinstance(self._deleted, list) else self._deleted
        return applied, deleted

    def __len__(self) -> int:
        return len(self._applied) + len(self._deleted)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TraceEvent):
            return NotImplemented
        return (self.ts_ms, self.applied, self.deleted) == (other.ts_ms, other.applied,
                                                             other.deleted)

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dicts it holds

    def __repr__(self) -> str:
        return (f"TraceEvent(ts_ms={self.ts_ms}, applied={len(self._applied)} objects, "
                f"deleted={len(self._deleted)} objects)")


def _refs(objects: Objects) -> list[ObjectRef]:
    return [ObjectRef.of(obj) for obj in objects] if isinstance(objects, list) else objects.refs()


@dataclass(frozen=True, slots=True, kw_only=True)
class PodRun:
    """One pod's life: launched at ``start_ms``, ended at ``end_ms`` (``None``: still running)."""

    start_ms: int
    end_ms: int | None = None
    # SimKube's (irreproducible) pod-spec hash, kept only so a trace converted back to SimKube
    # still matches SimKube's driver; this project matches pods by owner and launch order.
    spec_hash: int | None = None
    # The instance type of the node it ran on (``node.kubernetes.io/instance-type``), when
    # the tracer could read it: a replayed scale-down prefers pods on that kind of node.
    node_type: str | None = None

    @property
    def running(self) -> bool:
        return self.end_ms is None


@dataclass(frozen=True, slots=True, kw_only=True)
class PodLifecycle:
    """The pods one owner launched, in launch order."""

    owner_kind: str  # kind key of the owner, e.g. "batch/v1.CronJob"
    owner: str  # "ns/name" of the owner
    runs: tuple[PodRun, ...] = ()


@dataclass(slots=True, kw_only=True)
class Trace:
    """A whole trace in memory; for large traces prefer streaming with ``open_trace``."""

    header: TraceHeader = field(default_factory=TraceHeader)
    initial_state: list[KubeObject] = field(default_factory=list)
    events: list[TraceEvent] = field(default_factory=list)
    lifecycles: list[PodLifecycle] = field(default_factory=list)
    usage: tuple[WorkloadUsage, ...] = ()  # per workload; empty when nothing was sampled

    @property
    def start_ms(self) -> int | None:
        return self.events[0].ts_ms if self.events else None

    @property
    def end_ms(self) -> int | None:
        return self.events[-1].ts_ms if self.events else None

    def objects(self) -> Iterator[KubeObject]:
        """Every applied object: the initial state, then each event's, in trace order."""
        yield from self.initial_state
        for event in self.events:
            yield from event.applied


def merge_lifecycles(lifecycles: list[PodLifecycle]) -> list[PodLifecycle]:
    """One entry per owner, runs concatenated in the order given (formats may split them)."""
    merged: dict[tuple[str, str], list[PodRun]] = {}
    for lifecycle in lifecycles:
        merged.setdefault((lifecycle.owner_kind, lifecycle.owner), []).extend(lifecycle.runs)
    return [PodLifecycle(owner_kind=kind, owner=owner, runs=tuple(runs))
            for (kind, owner), runs in merged.items()]
