"""One full pass over a trace before anything is replayed: validate it, learn what it needs.

A trace that fails to decode halfway would otherwise leave a half-replayed simulation
behind, so every object is decoded here first (errors surface as ``TraceFormatError`` naming
the event). The pass also yields what the replay must know in advance: where the trace starts
and ends, how many events fall before the duration, which namespaces it touches (so a
clash with an existing namespace is refused up front), the pod lifecycles and the recorded
usage (validated here too, so bad usage data refuses the start with the problem named). Nothing is
kept in memory but these facts; the replay streams the events again.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from simkube.driver.hpa_targets import HpaTargets
from simkube.trace import KubeObject, PodLifecycle, TraceFormatError, TraceSource, WorkloadUsage


@dataclass(frozen=True, kw_only=True)
class TraceScan:
    start_ms: int  # Unix ms of the first event: offset 0
    end_ms: int
    events_total: int  # events the replay applies: the initial state counts as one
    objects_total: int
    namespaces: frozenset[str]  # namespaces as the trace names them
    lifecycles: tuple[PodLifecycle, ...]
    duration_ms: int | None = None
    usage: tuple[WorkloadUsage, ...] = ()  # recorded usage per workload, validated

    @property
    def length_ms(self) -> int:
        """How much trace time the replay covers."""
        return self.duration_ms if self.duration_ms is not None else self.end_ms - self.start_ms


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayEvent:
    offset_ms: int  # from the trace's start
    applied: list[KubeObject]
    deleted: list[KubeObject]


def _namespaces(objects: list[KubeObject]) -> Iterator[str]:
    for obj in objects:
        namespace = obj["metadata"].get("namespace")
        if namespace:
            yield namespace
        elif obj["kind"] == "Namespace" and obj["apiVersion"] == "v1":
            yield obj["metadata"]["name"]


def is_hpa(obj: KubeObject) -> bool:
    """A HorizontalPodAutoscaler of any ``autoscaling`` version."""
    return (obj["kind"] == "HorizontalPodAutoscaler"
            and str(obj["apiVersion"]).startswith("autoscaling/"))


def replay_events(source: TraceSource, *, start_ms: int, duration_ms: int | None,
                  remove_hpas: bool = False) -> Iterator[ReplayEvent]:
    """The events to replay, decoded, in order, the initial state first (at offset 0);
    ``remove_hpas`` leaves the trace's HPAs out (workloads keep their recorded replicas);
    otherwise the HPAs' targets lose their recorded replicas after creation (hpa_targets)."""
    targets = None if remove_hpas else HpaTargets()

    def kept(objects: list[KubeObject], *, applied: bool = True) -> list[KubeObject]:
        if targets is None:
            return [obj for obj in objects if not is_hpa(obj)]
        if not applied:
            return objects
        targets.note(objects)
        return [targets.strip(obj) for obj in objects]

    initial = kept(list(source.initial_state()))
    if initial:
        yield ReplayEvent(offset_ms=0, applied=initial, deleted=[])
    for event in source.events():
        offset = event.ts_ms - start_ms
        if duration_ms is not None and offset >= duration_ms:
            return
        yield ReplayEvent(offset_ms=offset, applied=kept(event.applied),
                          deleted=kept(event.deleted, applied=False))


def scan_trace(source: TraceSource, *, duration_ms: int | None) -> TraceScan:
    """Validate ``source`` completely and summarise it (blocking: run it in a thread)."""
    initial = list(source.initial_state())
    events = 1 if initial else 0
    objects = len(initial)
    namespaces = set(_namespaces(initial))
    start_ms: int | None = None
    end_ms = 0
    for index, event in enumerate(source.events()):
        if start_ms is not None and event.ts_ms < end_ms:
            raise TraceFormatError(f"events are out of time order: event {index} at "
                                   f"{event.ts_ms} ms comes after one at {end_ms} ms",
                                   where=f"event {index}", source=source.name)
        start_ms = event.ts_ms if start_ms is None else start_ms
        end_ms = event.ts_ms
        applied, deleted = event.applied, event.deleted  # decoding surfaces any error here
        if duration_ms is None or end_ms - start_ms < duration_ms:
            events += 1
            objects += len(applied) + len(deleted)
            namespaces.update(_namespaces(applied))
    if events == 0:
        raise TraceFormatError("the trace has no events to replay", source=source.name)
    source.usage()  # recorded usage is checked too: a malformed series is refused up front
    start_ms = end_ms if start_ms is None else start_ms
    return TraceScan(start_ms=start_ms, end_ms=end_ms, events_total=events,
                     objects_total=objects, namespaces=frozenset(namespaces),
                     lifecycles=tuple(source.lifecycles()), duration_ms=duration_ms,
                     usage=source.usage())
