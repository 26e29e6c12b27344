from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, cast

import pytest

from simkube.core.kubeapi import (
    ApiError,
    Backoff,
    Cursor,
    GoneError,
    KubeClient,
    ListWatch,
    list_all,
    pages,
    watch_from,
)
from tests.unit.core.kubeapi.fakes import ScriptedKube, event

pytestmark = pytest.mark.unit
NODES = "/api/v1/nodes"
GONE = GoneError(code=410, reason="Expired", message="too old")


def names(items: list[dict[str, Any]]) -> list[str]:
    return [item["metadata"]["name"] for item in items]


async def test_lists_come_in_pages_with_the_last_pages_version() -> None:
    kube = ScriptedKube(pages=[[{"metadata": {"name": "a"}}], [{"metadata": {"name": "b"}}]])
    seen = [page async for page in pages(cast(KubeClient, kube), NODES,
                                         query={"labelSelector": "x"}, page_size=1)]
    assert [names(page["items"]) for page in seen] == [["a"], ["b"]]
    assert [r[3] for r in kube.requests] == [{"labelSelector": "x", "limit": "1"},
                                             {"labelSelector": "x", "limit": "1",
                                              "continue": "1"}]
    items, version = await list_all(cast(KubeClient, kube), NODES)
    assert (names(items), version) == (["a", "b"], "20")


async def test_a_watch_asks_for_bookmarks_and_moves_the_cursor_with_them() -> None:
    kube = ScriptedKube(watches=[[event("ADDED", "a", "11"), event("BOOKMARK", "", "15"),
                                  {"type": "MODIFIED", "object": None}]])
    cursor = Cursor("10")
    seen = [(kind, obj["metadata"]["name"]) async for kind, obj in watch_from(
        cast(KubeClient, kube), NODES, cursor, query={"labelSelector": "x"}, seconds=60,
        idle_timeout=90)]
    assert seen == [("ADDED", "a"), ("BOOKMARK", "")]
    assert cursor.version == "15"
    assert kube.watch_queries == [{"labelSelector": "x", "resourceVersion": "10",
                                   "allowWatchBookmarks": "true", "timeoutSeconds": "60"}]
    assert kube.idle_timeouts == [90]


async def run_until(watch: ListWatch, done: Callable[[], bool]) -> None:
    task = asyncio.create_task(watch.run())
    try:
        for _ in range(400):
            if done():
                break
            await asyncio.sleep(0.01)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def make(kube: ScriptedKube, **options: Any) -> tuple[ListWatch, list[list[str]],
                                                       list[tuple[str, str]]]:
    lists: list[list[str]] = []
    events: list[tuple[str, str]] = []
    watch = ListWatch(kube=cast(KubeClient, kube), path=NODES, what="nodes",
                      on_list=lambda items: lists.append(names(items)),
                      on_event=lambda kind, obj: events.append((kind, obj["metadata"]["name"])),
                      **options)
    return watch, lists, events


async def test_resumes_after_a_clean_end_and_relists_after_gone() -> None:
    kube = ScriptedKube(pages=[[{"metadata": {"name": "a"}}], [{"metadata": {"name": "b"}}]],
                        watches=[[event("ADDED", "c", "21"), event("BOOKMARK", "", "25")],
                                 [event("DELETED", "b", "30")], GONE])
    watch, lists, events = make(kube, page_size=1, watch_seconds=(5, 5), idle_margin=30)
    await run_until(watch, lambda: len(kube.watch_queries) == 4)
    assert watch.synced.is_set()
    assert lists == [["a", "b"], ["a", "b"]]  # the 410 made it list again
    assert events == [("ADDED", "c"), ("DELETED", "b")]  # bookmarks are not events
    assert [q["resourceVersion"] for q in kube.watch_queries] == ["10", "25", "30", "20"]
    assert kube.idle_timeouts == [35, 35, 35, 35]
    assert watch.lists == 2


async def test_errors_back_off_then_list_again() -> None:
    kube = ScriptedKube(watches=[ApiError(code=0, reason="ClientOSError", message="reset")],
                        list_errors=[ApiError(code=503, reason="Unavailable", message="")])
    backoff = Backoff(base=0.001, jitter=False)
    watch, lists, _ = make(kube, backoff=backoff)
    await run_until(watch, lambda: len(kube.watch_queries) == 2)
    assert lists == [[], []]
    assert backoff.failures == 2  # the failed list, then the broken watch
    assert [q["resourceVersion"] for q in kube.watch_queries] == ["10", "20"]


async def test_an_optional_kind_that_is_absent_is_listed_empty_and_not_watched() -> None:
    kube = ScriptedKube(list_errors=[ApiError(code=404, reason="NotFound", message="")])
    watch, lists, _ = make(kube, optional=True)
    await asyncio.wait_for(watch.run(), timeout=1)  # returns: nothing to watch
    assert (watch.absent, lists, kube.watch_queries) == (True, [[]], [])
    assert watch.synced.is_set()
    required = ScriptedKube(list_errors=[ApiError(code=404, reason="NotFound", message="")])
    with pytest.raises(ApiError):
        await make(required)[0].list()
