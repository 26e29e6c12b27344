from __future__ import annotations

import io
import os
from collections.abc import Callable
from typing import Any

import pytest

from simkube.trace import NativeReader, PodLifecycle, StateRecord, TraceEvent
from simkube.trace.model.usage import RecordedUsage
from simkube.tracer.config import UsageSettings
from simkube.tracer.export_filters import ExportFilters
from simkube.tracer.exporting import Export
from simkube.tracer.segments import RunFact
from simkube.tracer.store import Store
from simkube.tracer.usage import UsageBook
from tests.unit.tracer.conftest import HEADER, Clock, obj, ref

pytestmark = pytest.mark.unit
OpenStore = Callable[..., Store]
T0 = 1_700_000_000_000
DEPLOY = "apps/v1.Deployment"


def export(store: Store, *, start: int = 0, end: int = T0 + 10**9,
           filters: ExportFilters | None = None, chunk_bytes: int = 2**20,
           ) -> tuple[list[TraceEvent], list[PodLifecycle], list[Any]]:
    with store.snapshot() as views:
        chunks = list(Export(directory=store.directory, views=views, start_ms=start,
                             end_ms=end, filters=filters or ExportFilters(), header=HEADER,
                             chunk_bytes=chunk_bytes).chunks())
    data = b"".join(chunk.data for chunk in chunks)
    items = list(NativeReader(io.BytesIO(data)))
    assert not any(isinstance(item, StateRecord) for item in items)
    return ([i for i in items if isinstance(i, TraceEvent)],
            [i for i in items if isinstance(i, PodLifecycle)], chunks)


def names(events: list[TraceEvent]) -> list[tuple[int, list[str], list[str]]]:
    return [(e.ts_ms - T0, [r.name for r in e.applied_refs()], [r.name for r in e.deleted_refs()])
            for e in events]


def test_state_at_start_is_folded_into_the_first_event(open_store: OpenStore,
                                                        clock: Clock) -> None:
    store = open_store()
    store.apply(ref(DEPLOY, "a"), obj(DEPLOY, "a", spec={"replicas": 1}))
    clock.tick()
    store.apply(ref(DEPLOY, "b"), obj(DEPLOY, "b"))
    clock.tick()
    store.apply(ref(DEPLOY, "a"), obj(DEPLOY, "a", spec={"replicas": 2}))
    clock.tick()
    store.delete(ref(DEPLOY, "b"))
    clock.tick()
    store.apply(ref(DEPLOY, "c"), obj(DEPLOY, "c"))
    events, _, _ = export(store, start=T0 + 1500, end=T0 + 4000)
    assert names(events) == [(1500, ["a", "b"], []), (2000, ["a"], []), (3000, [], ["b"])]
    assert events[0].applied[0]["spec"] == {"replicas": 1}
    whole, _, _ = export(store)
    assert names(whole) == [(0, ["a"], []), (1000, ["b"], []), (2000, ["a"], []),
                            (3000, [], ["b"]), (4000, ["c"], [])]


def test_state_comes_from_the_right_segment_after_rolls(open_store: OpenStore,
                                                        clock: Clock) -> None:
    store = open_store()
    store.apply(ref(DEPLOY, "a"), obj(DEPLOY, "a"))
    clock.tick()
    store.roll()
    clock.tick()
    store.apply(ref(DEPLOY, "b"), obj(DEPLOY, "b"))
    clock.tick()
    store.roll()
    store.delete(ref(DEPLOY, "a"))
    events, _, _ = export(store, start=T0 + 2500)
    assert names(events) == [(2500, ["a", "b"], []), (3000, [], ["a"])]
    events, _, _ = export(store)
    assert names(events) == [(0, ["a"], []), (2000, ["b"], []), (3000, [], ["a"])]


def test_owned_objects_and_daemonset_pods_are_dropped_lifecycles_kept(
        open_store: OpenStore, clock: Clock) -> None:
    store = open_store()
    web, rs = ref(DEPLOY, "web"), ref("apps/v1.ReplicaSet", "web-1")
    store.apply(web, obj(DEPLOY, "web"))
    store.apply(ref("v1.Pod", "web-1-x"), obj("v1.Pod", "web-1-x"), ancestors=(rs, web))
    store.apply(ref("v1.Pod", "agent"), obj("v1.Pod", "agent"),
                ancestors=(ref("apps/v1.DaemonSet", "agent"),))
    store.apply(ref("v1.Pod", "orphan"), obj("v1.Pod", "orphan"),
                ancestors=(ref("apps/v1.ReplicaSet", "untracked"),))
    store.record_run(RunFact(uid="1", owner_kind=DEPLOY, owner="ns/web", pod="ns/web-1-x",
                             start_ms=T0 + 5000))
    store.record_run(RunFact(uid="0", owner_kind=DEPLOY, owner="ns/web", pod="ns/web-1-y",
                             start_ms=T0 + 1000))
    store.record_run(RunFact(uid="0", owner_kind=DEPLOY, owner="ns/web", pod="ns/web-1-y",
                             start_ms=T0 + 1000, end_ms=T0 + 3000))
    store.record_run(RunFact(uid="9", owner_kind=DEPLOY, owner="ns/gone", pod="ns/g",
                             start_ms=T0))
    events, lifecycles, _ = export(store)
    assert sorted(r.name for e in events for r in e.applied_refs()) == ["orphan", "web"]
    [lifecycle] = lifecycles
    assert (lifecycle.owner_kind, lifecycle.owner) == (DEPLOY, "ns/web")
    assert [(r.start_ms - T0, r.end_ms) for r in lifecycle.runs] == [(1000, T0 + 3000),
                                                                      (5000, None)]
    # A run that ended after the window's end was still running inside it.
    _, cut, _ = export(store, end=T0 + 2000)
    assert [r.end_ms for r in cut[0].runs] == [None]


def test_chunks_are_contiguous_and_report_progress(open_store: OpenStore,
                                                   clock: Clock) -> None:
    store = open_store()
    for index in range(2500):
        clock.tick(0.01)
        store.apply(ref("v1.Pod", f"p{index}"),
                    obj("v1.Pod", f"p{index}", spec={"n": index, "pad": os.urandom(50).hex()}))
    events, _, chunks = export(store, chunk_bytes=1024)
    assert len(events) == 2500
    data_chunks = [c for c in chunks if c.data or c.last]
    assert len(data_chunks) > 3
    offset = 0
    for chunk in data_chunks:
        assert chunk.offset == offset
        offset += len(chunk.data)
    assert all(len(c.data) <= 1024 for c in data_chunks)
    assert data_chunks[-1].last
    assert data_chunks[-1].events_written == 2500
    assert data_chunks[-1].events_total == 2500
    assert 0 < data_chunks[len(data_chunks) // 2].events_written < 2500


def test_empty_windows(open_store: OpenStore) -> None:
    store = open_store()
    events, lifecycles, chunks = export(store)
    assert (events, lifecycles) == ([], [])
    assert chunks[-1].last


def test_usage_of_exported_workloads_is_written_from_the_first_event(
        open_store: OpenStore, clock: Clock) -> None:
    store = open_store()
    store.apply(ref(DEPLOY, "a"), obj(DEPLOY, "a"))
    clock.tick()
    store.apply(ref(DEPLOY, "b"), obj(DEPLOY, "b"))
    book = UsageBook(UsageSettings())
    for second in (-1, 0, 1, 2):  # before the first event, at it, at the last one, after
        book.record(T0 + 1000 * second, {ref(DEPLOY, "a"): (2, 500, 1000),
                                         ref(DEPLOY, "gone"): (1, 1, 1)})
    with store.snapshot() as views:
        data = b"".join(chunk.data for chunk in Export(
            directory=store.directory, views=views, start_ms=0, end_ms=T0 + 10**9,
            filters=ExportFilters(), header=HEADER, chunk_bytes=2**20, usage=book).chunks())
    (usage,) = [item for item in NativeReader(io.BytesIO(data)) if isinstance(item,
                                                                            RecordedUsage)]
    checked = usage.checked()
    assert (checked.kind, checked.workload) == (DEPLOY, "ns/a")  # "gone" was not exported
    assert [s.t_ms for s in checked.samples] == [0, 1000]
