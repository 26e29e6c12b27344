"""Export: a window of the store as one native trace, streamed in chunks.

The trace a replay wants is the world at ``start`` plus every change until ``end``. The
store can give it cheaply because each segment opens with the full state at its start: the
export opens the last segment that started at or before ``start``, folds its events up to
``start`` into that state (which becomes the trace's first event, at ``start``), then copies
every event in the window from that segment and the ones after it, without decoding object
bodies unless a label selector needs their labels.

Two passes over those segments, both in constant memory apart from the state and a set of
object identities: the first learns which objects the window holds, their owner chains and
pod runs; the second writes. Between them the drop rules are decided: an object is dropped
when an owner of it is exported too (its controller recreates it in the replay), and a pod
owned by a DaemonSet always is. Lifecycles are written for exported owners, and so is the
recorded usage of exported workloads (from the in-memory usage book), re-timed to the trace's
first event and cut at its last.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from simkube.trace import (
    Envelope,
    NativeWriter,
    ObjectRef,
    PodLifecycle,
    PodRun,
    StateRecord,
    TraceEvent,
    TraceHeader,
    TraceItem,
)
from simkube.tracer import segment_reading, segments
from simkube.tracer.export_filters import ExportFilters
from simkube.tracer.kinds import parse_kind_key
from simkube.tracer.segments import Ancestors, RunFact
from simkube.tracer.store import SegmentView
from simkube.tracer.usage import UsageBook

TICK_RECORDS = 2_000  # hand control back to the event loop this often
API_RESOLUTION_MS = 1_000  # pod start and finish times are whole seconds


@dataclass(frozen=True, slots=True, kw_only=True)
class Chunk:
    data: bytes
    offset: int
    last: bool
    events_written: int
    events_total: int


@dataclass(slots=True)
class _Plan:
    start: int
    base: int  # index of the segment whose state is folded
    state: dict[ObjectRef, Envelope] = field(default_factory=dict)
    matched: set[ObjectRef] = field(default_factory=set)
    ancestors: dict[ObjectRef, Ancestors] = field(default_factory=dict)
    runs: dict[str, RunFact] = field(default_factory=dict)
    total: int = 0


class Export:
    """One export; iterate ``chunks()`` (empty, non-last chunks are pauses, not data)."""

    def __init__(self, *, directory: Path, views: list[SegmentView], start_ms: int,
                 end_ms: int, filters: ExportFilters, header: TraceHeader,
                 chunk_bytes: int, usage: UsageBook | None = None) -> None:
        self._directory = directory
        self._views = views
        self._start = start_ms
        self._end = end_ms
        self._filters = filters
        self._header = header
        self._chunk_bytes = chunk_bytes
        self._usage = usage

    def _records(self, index: int) -> Iterator[TraceItem]:
        view = self._views[index]
        return segment_reading.read_trace(self._directory, view.info.number,
                                   complete=view.info.complete, limit=view.limit)

    def _plan(self) -> Iterator[_Plan | None]:
        views = self._views
        start = max(self._start, views[0].info.start_ts)
        base = max((i for i, view in enumerate(views) if view.info.start_ts <= start),
                   default=0)
        plan = _Plan(start=start, base=base)
        seen = 0
        for index in self._indexes(base):
            for item in self._records(index):
                seen += 1
                if seen % TICK_RECORDS == 0:
                    yield None
                if isinstance(item, StateRecord) and index == base:
                    for env in item.objects.envelopes:
                        plan.state[segments.ref_of(env)] = env
                elif isinstance(item, TraceEvent):
                    if item.ts_ms >= self._end:
                        break
                    self._learn(plan, item)
            for fact in segment_reading.read_meta(self._directory, self._views[index].info.number):
                if isinstance(fact, RunFact):
                    plan.runs[fact.uid] = fact
                else:
                    plan.ancestors[fact[0]] = fact[1]
        for ref, env in plan.state.items():
            self._match(plan, ref, env)
        if plan.state:
            plan.total += 1
        yield plan

    def _indexes(self, base: int) -> Iterator[int]:
        """Segments from ``base`` on that may hold events before the window's end."""
        for index in range(base, len(self._views)):
            if self._views[index].info.start_ts >= self._end:
                return
            yield index

    def _learn(self, plan: _Plan, event: TraceEvent) -> None:
        applied, deleted = segments.event_envelopes(event)
        if event.ts_ms < plan.start:  # before the window: fold into the state at start
            for env in applied:
                plan.state[segments.ref_of(env)] = env
            for env in deleted:
                plan.state.pop(segments.ref_of(env), None)
            return
        plan.total += 1
        for env in (*applied, *deleted):
            self._match(plan, segments.ref_of(env), env)

    def _match(self, plan: _Plan, ref: ObjectRef, env: Envelope) -> None:
        """An object is in the export if any version of it in the window passes the filters."""
        if ref not in plan.matched and self._filters.admits(ref) and \
                self._filters.admits_body(env[4]):
            plan.matched.add(ref)

    def _exported(self, plan: _Plan) -> set[ObjectRef]:
        exported = set()
        for ref in plan.matched:
            chain = plan.ancestors.get(ref, ())
            if any(owner in plan.matched for owner in chain):
                continue
            if ref.kind == "Pod" and chain and chain[0].kind == "DaemonSet":
                continue
            exported.add(ref)
        return exported

    def _lifecycles(self, plan: _Plan, exported: set[ObjectRef]) -> list[PodLifecycle]:
        by_owner: dict[tuple[str, str], list[RunFact]] = {}
        for fact in plan.runs.values():
            # A run that ended "before" the window by less than the API's time resolution
            # may have ended inside it.
            if fact.start_ms >= self._end or (fact.end_ms is not None and fact.end_ms
                                              < plan.start - API_RESOLUTION_MS):
                continue
            if owner_ref(fact.owner_kind, fact.owner) in exported:
                by_owner.setdefault((fact.owner_kind, fact.owner), []).append(fact)
        lifecycles = []
        for (owner_kind, owner), facts in sorted(by_owner.items()):
            facts.sort(key=lambda fact: (fact.start_ms, fact.pod))
            runs = tuple(PodRun(start_ms=fact.start_ms,
                                end_ms=fact.end_ms if fact.end_ms is not None
                                and fact.end_ms < self._end else None,
                                node_type=fact.node_type) for fact in facts)
            lifecycles.append(PodLifecycle(owner_kind=owner_kind, owner=owner, runs=runs))
        return lifecycles

    def _write_trailer(self, writer: NativeWriter, plan: _Plan, exported: set[ObjectRef],
                       span: list[int]) -> None:
        """The lifecycles and recorded usage of what was exported."""
        for lifecycle in self._lifecycles(plan, exported):
            writer.write_lifecycle(lifecycle)
        if self._usage is not None and span:
            for usage in self._usage.window(origin_ms=span[0], end_ms=span[1],
                                            keep=exported.__contains__):
                writer.write_usage(usage)

    def chunks(self) -> Iterator[Chunk]:
        pause = Chunk(data=b"", offset=0, last=False, events_written=0, events_total=0)
        plan: _Plan | None = None
        for step in self._plan():
            if step is None:
                yield pause
            plan = step
        if plan is None:  # _plan always ends with the plan; this keeps the type checker sure
            return
        exported = self._exported(plan)
        buffer = io.BytesIO()
        offset = written = 0

        def take(*, last: bool) -> Iterator[Chunk]:
            """What the writer produced, in chunks of at most ``chunk_bytes``."""
            nonlocal offset
            data = buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
            size = self._chunk_bytes
            pieces = [data[at:at + size] for at in range(0, len(data), size)] or [b""]
            for index, piece in enumerate(pieces):
                yield Chunk(data=piece, offset=offset, last=last and index == len(pieces) - 1,
                            events_written=written, events_total=plan.total)
                offset += len(piece)

        writer = NativeWriter(buffer, header=self._header)
        state = [env for ref, env in plan.state.items() if ref in exported]
        span: list[int] = []  # the first and latest event written
        if state:
            writer.write_event(TraceEvent(ts_ms=plan.start, applied=segments.batch(state)))
            written += 1
            span[:] = [plan.start, plan.start]
        records = 0
        for index in self._indexes(plan.base):
            for item in self._records(index):
                records += 1
                if records % TICK_RECORDS == 0:
                    writer.flush()  # let bytes (and progress) flow on long exports
                    yield pause
                if buffer.tell() >= self._chunk_bytes:
                    yield from take(last=False)
                if not isinstance(item, TraceEvent) or item.ts_ms < plan.start:
                    continue
                if item.ts_ms >= self._end:
                    break
                applied, deleted = segments.event_envelopes(item)
                applied = [env for env in applied if segments.ref_of(env) in exported]
                deleted = [env for env in deleted if segments.ref_of(env) in exported]
                if applied or deleted:
                    writer.write_event(TraceEvent(ts_ms=item.ts_ms,
                                                  applied=segments.batch(applied),
                                                  deleted=segments.batch(deleted)))
                    written += 1
                    span[:] = [span[0] if span else item.ts_ms, item.ts_ms]
        self._write_trailer(writer, plan, exported, span)
        writer.close()
        yield from take(last=True)


def owner_ref(owner_kind: str, owner: str) -> ObjectRef:
    kind = parse_kind_key(owner_kind)
    namespace, _, name = owner.rpartition("/")
    return ObjectRef(api_version=kind.api_version, kind=kind.kind, namespace=namespace,
                     name=name)
