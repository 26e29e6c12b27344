from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from simkube.core.kubeapi import ApiError, Backoff, Discovery, GoneError
from simkube.trace.model.selectors import parse_selector
from simkube.tracer.config import KindConfig, SecretPolicy
from simkube.tracer.kinds import parse_kind_key
from simkube.tracer.owners import OwnerResolver
from simkube.tracer.recorder import Recorder
from simkube.tracer.status import KindStatus, WatchState
from simkube.tracer.store import Store
from simkube.tracer.watching import KindWatcher
from tests.unit.tracer.conftest import obj, ref
from tests.unit.tracer.fakes import FakeApi

pytestmark = pytest.mark.unit
OpenStore = Callable[..., Store]
DEPLOYS = "/apis/apps/v1/deployments"


def item(name: str, version: str, **spec: Any) -> dict[str, Any]:
    body = obj("apps/v1.Deployment", name, metadata={"resourceVersion": version}, spec=spec)
    del body["apiVersion"], body["kind"]  # list items come without them
    return body


def event(kind: str, name: str, version: str, **spec: Any) -> dict[str, Any]:
    return {"type": kind, "object": obj("apps/v1.Deployment", name,
                                        metadata={"resourceVersion": version}, spec=spec)}


async def run_until(watcher: KindWatcher, recorder: Recorder,
                    done: Callable[[], bool]) -> None:
    tasks = [asyncio.create_task(watcher.run()), asyncio.create_task(recorder.run())]
    try:
        for _ in range(500):
            await asyncio.sleep(0.01)
            if done():
                break
        else:
            raise AssertionError("the watcher never got there")
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def make(api: FakeApi, store: Store, kind: KindConfig | None = None,
         ) -> tuple[KindWatcher, Recorder, KindStatus]:
    kind = kind or KindConfig(kind=parse_kind_key("apps/v1.Deployment"))
    recorder = Recorder(store, secrets=SecretPolicy.REDACT, lifecycles=None)
    status = KindStatus(kind=kind.kind.key)
    discovery = Discovery(api, refresh_interval=0.0)  # type: ignore[arg-type]
    watcher = KindWatcher(kind=kind, status=status, api=api,  # type: ignore[arg-type]
                          discovery=discovery,
                          owners=OwnerResolver(api, discovery),  # type: ignore[arg-type]
                          recorder=recorder, crd_retry=0.01,
                          backoff=Backoff(base=0.001, cap=0.01))
    return watcher, recorder, status


async def test_list_pages_then_watch_then_resume_from_bookmarks(open_store: OpenStore) -> None:
    api = FakeApi()
    store = open_store()
    api.lists[DEPLOYS] = [[item("a", "1", replicas=1)], [item("b", "2")]]
    api.watches = [
        [event("MODIFIED", "a", "5", replicas=2), {"type": "BOOKMARK", "object": {
            "kind": "Deployment", "metadata": {"resourceVersion": "9"}}}],
        [event("DELETED", "b", "12")]]
    watcher, recorder, status = make(api, store)
    await run_until(watcher, recorder, lambda: status.events_stored == 4)
    assert set(store.live) == {ref("apps/v1.Deployment", "a")}
    watches = [query for path, query in api.calls if query.get("watch")]
    assert watches[0]["resourceVersion"] == "100"  # the list's
    assert watches[0]["allowWatchBookmarks"] == "true"
    assert watches[1]["resourceVersion"] == "9"  # the bookmark's
    assert (status.state, status.resyncs, status.resource_version) == (
        WatchState.STOPPED, 0, "12")  # stopped: the test cancelled it
    pages = [query for path, query in api.calls if path == DEPLOYS and not query.get("watch")]
    assert [page.get("continue") for page in pages] == [None, "1"]


async def test_gone_and_errors_relist_without_spurious_deletes(open_store: OpenStore) -> None:
    api = FakeApi()
    store = open_store()
    api.lists[DEPLOYS] = [[item("a", "1"), item("b", "2")]]
    api.watches = [GoneError(code=410, reason="Expired", message="too old"),
                   ApiError(code=0, reason="ClientOSError", message="connection reset")]
    watcher, recorder, status = make(api, store)
    await run_until(watcher, recorder, lambda: status.resyncs == 2
                    and status.state is WatchState.WATCHING)
    assert status.events_stored == 2  # three lists, the same two objects, nothing else
    assert len(store.live) == 2
    assert status.last_error == "ClientOSError: connection reset"


async def test_a_missing_crd_is_retried_and_then_watched(open_store: OpenStore) -> None:
    api = FakeApi()
    store = open_store()
    widgets = KindConfig(kind=parse_kind_key("example.com/v1.Widget"),
                         namespaces=frozenset({"only"}),
                         label_selector=parse_selector("app=x"))
    watcher, recorder, status = make(api, store, widgets)
    task = asyncio.create_task(watcher.run())
    try:
        for _ in range(100):
            await asyncio.sleep(0.01)
            if status.state is WatchState.WAITING_FOR_CRD:
                break
        assert "CRD" in status.last_error
        api.discovery["/apis/example.com/v1"] = {"resources": [
            {"name": "widgets", "kind": "Widget", "namespaced": True,
             "verbs": ["list", "watch"]}]}
        api.lists["/apis/example.com/v1/namespaces/only/widgets"] = [[]]
        for _ in range(200):
            await asyncio.sleep(0.01)
            if status.state is WatchState.WATCHING:
                break
        assert status.state is WatchState.WATCHING
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert status.state is WatchState.STOPPED
    listed = [q for p, q in api.calls if p == "/apis/example.com/v1/namespaces/only/widgets"]
    assert listed[0]["labelSelector"] == "app=x"
    del recorder
