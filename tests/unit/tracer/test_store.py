from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from simkube.trace import TraceEvent
from simkube.tracer import segment_reading, segments
from simkube.tracer.config import Retention
from simkube.tracer.segments import RunFact
from simkube.tracer.store import Store
from tests.unit.tracer.conftest import Clock, obj, ref

pytestmark = pytest.mark.unit
OpenStore = Callable[..., Store]


def _events(store: Store) -> list[tuple[int, list[str], list[str]]]:
    rows = []
    with store.snapshot() as views:
        for view in views:
            for item in segment_reading.read_trace(store.directory, view.info.number,
                                            complete=view.info.complete, limit=view.limit):
                if isinstance(item, TraceEvent):
                    rows.append((item.ts_ms, [r.name for r in item.applied_refs()],
                                 [r.name for r in item.deleted_refs()]))
    return rows


def test_only_real_differences_are_recorded(open_store: OpenStore, clock: Clock) -> None:
    store = open_store()
    web = obj("apps/v1.Deployment", "web", spec={"replicas": 1, "paused": False})
    assert store.apply(ref("apps/v1.Deployment", "web"), web)
    assert not store.apply(ref("apps/v1.Deployment", "web"), dict(web))
    reordered = {"spec": {"paused": False, "replicas": 1}, "metadata": web["metadata"],
                 "kind": "Deployment", "apiVersion": "apps/v1"}
    assert not store.apply(ref("apps/v1.Deployment", "web"), reordered)
    clock.tick()
    assert store.apply(ref("apps/v1.Deployment", "web"),
                       obj("apps/v1.Deployment", "web", spec={"replicas": 2}))
    clock.tick()
    assert store.delete(ref("apps/v1.Deployment", "web"))
    assert not store.delete(ref("apps/v1.Deployment", "web"))
    assert not store.delete(ref("apps/v1.Deployment", "never"))
    base = 1_700_000_000_000
    assert _events(store) == [(base, ["web"], []), (base + 1000, ["web"], []),
                              (base + 2000, [], ["web"])]
    status = store.status()
    assert (status.events, status.live_objects) == (3, 0)
    assert status.events_by_kind == {"apps/v1.Deployment": 3}


def test_time_never_goes_backwards(open_store: OpenStore, clock: Clock) -> None:
    store = open_store()
    first = store.now_ms()
    clock.tick(-60)
    assert store.now_ms() == first


def test_restart_restores_live_state_and_keeps_history(open_store: OpenStore, clock: Clock,
                                                       tmp_path: Path) -> None:
    store = open_store()
    pod = ref("v1.Pod", "p")
    owners = (ref("apps/v1.ReplicaSet", "rs"), ref("apps/v1.Deployment", "web"))
    store.apply(pod, obj("v1.Pod", "p"), ancestors=owners)
    store.apply(ref("v1.Pod", "q"), obj("v1.Pod", "q"))
    store.delete(ref("v1.Pod", "q"))
    store.record_run(RunFact(uid="u", owner_kind="apps/v1.Deployment", owner="ns/web",
                             pod="ns/p", start_ms=1))
    store.close()
    clock.tick()
    again = open_store()
    assert set(again.live) == {pod}
    assert again.live[pod].ancestors == owners
    assert set(again.running) == {"u"}
    assert not again.apply(pod, obj("v1.Pod", "p"), ancestors=owners)  # nothing duplicated
    assert len(_events(again)) == 3  # the old segment is still there
    assert again.status().segments == 2


def test_objects_no_longer_tracked_are_forgotten_not_deleted(open_store: OpenStore,
                                                           tmp_path: Path) -> None:
    store = open_store()
    store.apply(ref("v1.Pod", "p"), obj("v1.Pod", "p"))
    store.apply(ref("v1.ConfigMap", "c"), obj("v1.ConfigMap", "c"))
    store.close()
    again = Store(tmp_path / "store", header=store._header,
                  retention=Retention(max_age_seconds=0, max_bytes=0),
                  keep=lambda r: r.kind == "Pod")
    try:
        assert set(again.live) == {ref("v1.Pod", "p")}
        assert again.status().events == 2  # no deletion was recorded
    finally:
        again.close()


def _fill(store: Store, clock: Clock, count: int) -> None:
    """``count`` changes to ten objects: a long recording of a small cluster."""
    for index in range(count):
        clock.tick()
        name = f"p{index % 10}"
        store.apply(ref("v1.Pod", name), obj("v1.Pod", name, spec={"blob": os.urandom(256).hex()}))
        store.maintain()


def test_segments_roll_and_retention_drops_oldest_by_size(open_store: OpenStore,
                                                          clock: Clock) -> None:
    store = open_store(segment_bytes=8_000, retention=Retention(max_age_seconds=0,
                                                                max_bytes=40_000))
    _fill(store, clock, 400)
    status = store.status()
    assert status.segments > 2
    assert status.bytes <= 40_000 + 8_000 + 8_000  # the bound, plus the open segment
    assert status.live_objects == 10  # every segment restates the state: nothing lost
    assert status.oldest_ts > 1_700_000_000_000


def test_retention_by_age_spares_pinned_segments(open_store: OpenStore, clock: Clock) -> None:
    store = open_store(segment_bytes=4_000, retention=Retention(max_age_seconds=30,
                                                                max_bytes=0))
    _fill(store, clock, 20)
    with store.snapshot() as views:
        oldest = views[0].info.number
        clock.tick(120)
        store.roll()
        store.enforce_retention()
        assert segments.segment_path(store.directory, oldest, ".trace").exists()
        assert store.status().segments == 1
    assert not segments.segment_path(store.directory, oldest, ".trace").exists()


def test_header_keeps_tracked_kinds(open_store: OpenStore) -> None:
    store = open_store()
    header: Any = segment_reading.read_header(store.directory, 1)
    assert [k.kind_key for k in header.tracked_kinds] == ["apps/v1.Deployment", "v1.Pod"]
    assert header.created_ms == 1_700_000_000_000
